"""The scenario's `gpuOperator`: a simulated cluster that starts with the GPU Operator installed
(CRD, ClusterPolicy, operands settled before the API answers), read through the real client."""

from __future__ import annotations

from typing import Any

import pytest

from gpuctl import defaults
from gpuctl.errors import ConfigError
from gpuctl.sim.scenario import parse_scenario
from tests.polling import wait_until


def _policy(cluster: Any) -> Any:
    from kubernetes.client import CustomObjectsApi

    return CustomObjectsApi(cluster.api_client()).get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy"
    )


def _pods(cluster: Any) -> dict[str, str]:
    """Pod name prefix (its DaemonSet) and node → phase."""
    from kubernetes.client import CoreV1Api

    pods = CoreV1Api(cluster.api_client()).list_namespaced_pod(defaults.OPERATOR_NAMESPACE).items
    return {f"{p.metadata.labels['app']}@{p.spec.node_name}": p.status.phase for p in pods}


def test_the_operator_is_settled_when_the_cluster_starts(sim: Any) -> None:
    cluster = sim(
        {
            "gpuOperator": {"driver": {"enabled": False}},
            "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8}, {"name": "cpu-0"}],
        }
    )
    policy = _policy(cluster)
    assert policy["status"]["state"] == "ready"
    assert policy["status"]["namespace"] == defaults.OPERATOR_NAMESPACE
    assert cluster.allocatable_gpus() == {"gpu-0": 8, "gpu-1": 8, "cpu-0": 0}
    pods = _pods(cluster)
    assert pods["nvidia-operator-validator@gpu-0"] == "Running"
    assert not any(key.startswith("nvidia-driver-daemonset") for key in pods)
    assert len(pods) == 2 * 4  # toolkit, validator, device plugin, GFD on each GPU node


def test_an_operator_driver_on_hosts_with_a_driver_is_not_ready(sim: Any) -> None:
    cluster = sim({"gpuOperator": {}, "nodes": [{"name": "gpu-0", "gpus": 8}]})
    assert _policy(cluster)["status"]["state"] == "notReady"
    assert _pods(cluster)["nvidia-operator-validator@gpu-0"] == "Pending"
    assert cluster.allocatable_gpus() == {"gpu-0": 0}


def test_deleting_the_policy_removes_the_operands(sim: Any) -> None:
    from kubernetes.client import CustomObjectsApi

    cluster = sim({"gpuOperator": {"driver": {"enabled": False}}, "nodes": [{"name": "gpu-0", "gpus": 8}]})
    CustomObjectsApi(cluster.api_client()).delete_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy"
    )
    wait_until(lambda: not _pods(cluster), "the operand pods to go")
    assert cluster.allocatable_gpus() == {"gpu-0": 0}


@pytest.mark.parametrize("value", [[], {"driver": True}, "yes"])
def test_a_gpu_operator_that_is_not_a_mapping_of_sections_is_refused(value: Any) -> None:
    with pytest.raises(
        ConfigError, match=r"scenario: gpuOperator: must be a mapping of ClusterPolicy spec sections"
    ):
        parse_scenario({"gpuOperator": value})
