"""The GPU Operator's GPUCluster mode (26.7: nvidia.com/v1alpha1 GPUCluster, a DRA-based singleton
named gpu-cluster that cannot coexist with a ClusterPolicy): `bootstrap --stack operator` refuses
to create a ClusterPolicy beside one, before any write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuctl.defaults import OPERATOR_NAMESPACE
from tests.cluster.test_bootstrap_cluster import gpu_nodes, scenario
from tests.cluster.test_bootstrap_operator import operator_bootstrap
from tests.cluster.test_verify_dra import dra_scenario, published
from tests.helm import needs_helm
from tests.polling import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GPU_CLUSTER_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gpuclusters.nvidia.com"},
    "spec": {
        "group": "nvidia.com",
        "names": {
            "kind": "GPUCluster",
            "listKind": "GPUClusterList",
            "plural": "gpuclusters",
            "singular": "gpucluster",
        },
        "scope": "Cluster",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def add_gpu_cluster(cluster: Any) -> None:
    from kubernetes.client import ApiextensionsV1Api, CustomObjectsApi

    api = cluster.api_client()
    ApiextensionsV1Api(api).create_custom_resource_definition(GPU_CLUSTER_CRD)
    body = {
        "apiVersion": "nvidia.com/v1alpha1",
        "kind": "GPUCluster",
        "metadata": {"name": "gpu-cluster"},
        "spec": {"draDriver": {"version": "v0.5.0"}},
    }
    CustomObjectsApi(api).create_cluster_custom_object("nvidia.com", "v1alpha1", "gpuclusters", body)


@needs_helm
def test_bootstrap_refuses_a_cluster_policy_beside_a_gpu_cluster(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    add_gpu_cluster(cluster)
    before = cluster.server.requests_by_verb().get("create", 0)
    code, _, result = operator_bootstrap(cli, cluster)
    assert code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: GPUCluster gpu-cluster (nvidia.com/v1alpha1) exists")
    assert "cannot coexist" in first
    assert "kubectl delete gpuclusters.nvidia.com gpu-cluster" in result.stderr
    assert cluster.server.requests_by_verb().get("create", 0) == before  # nothing installed


@needs_helm
def test_without_a_gpu_cluster_the_operator_bootstrap_goes_on(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    code, data, result = operator_bootstrap(cli, cluster, "--check")
    assert code == 0, result.output
    assert data["cluster"]["helm"]["action"] == "would-install"


# -- GPUCluster mode: the sim plays the Operator's DRA stack; verify and status recognise it ------

NFD_GPU = {"feature.node.kubernetes.io/pci-10de.present": "true"}


def gpu_cluster_sim(sim: Any, *, count: int = 2) -> Any:
    """A cluster whose GPU nodes go through DRA, with the Operator's namespace and a GPUCluster
    (no DRA driver of its own: the Operator deploys it)."""
    cluster = sim(
        dra_scenario(
            {"name": "gpu-{i}", "count": count, "gpus": 4, "labels": dict(NFD_GPU)},
            {"name": "cpu-0"},
            draDriver="absent",
            namespaces=[OPERATOR_NAMESPACE],
        )
    )
    add_gpu_cluster(cluster)
    return cluster


def gpu_cluster_status(cluster: Any) -> dict[str, Any]:
    from kubernetes.client import CustomObjectsApi

    api = CustomObjectsApi(cluster.api_client())
    found: dict[str, Any] = api.get_cluster_custom_object(
        "nvidia.com", "v1alpha1", "gpuclusters", "gpu-cluster"
    )
    return found.get("status") or {}


def test_the_operator_runs_the_dra_driver_for_a_gpu_cluster(sim: Any) -> None:
    cluster = gpu_cluster_sim(sim)
    wait_until(lambda: published(cluster) == {"gpu-0": 4, "gpu-1": 4}, "slices")
    wait_until(lambda: gpu_cluster_status(cluster).get("state") == "ready", "GPUCluster ready")
    status = gpu_cluster_status(cluster)
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("True", "Reconciled")
    assert status["namespace"] == OPERATOR_NAMESPACE
    assert published(cluster) == {"gpu-0": 4, "gpu-1": 4}


def verify_report(cli: Any, cluster: Any) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "30"])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def cluster_check(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(check for check in report["cluster_checks"] if check["id"] == check_id)


def ready_gpu_cluster_sim(sim: Any) -> Any:
    cluster = gpu_cluster_sim(sim)
    wait_until(lambda: published(cluster) == {"gpu-0": 4, "gpu-1": 4}, "the DRA driver's slices")
    wait_until(lambda: gpu_cluster_status(cluster).get("state") == "ready", "GPUCluster ready")
    return cluster


def test_verify_proves_gpu_cluster_nodes_through_dra_claims(sim: Any, cli: Any) -> None:
    cluster = ready_gpu_cluster_sim(sim)
    code, report = verify_report(cli, cluster)
    assert code == 0, json.dumps(report, indent=1)
    check = cluster_check(report, "operator.gpucluster")
    assert check["status"] == "pass"
    assert "gpu-cluster is ready" in check["message"]
    for node in report["nodes"]:
        checks = {c["id"]: c for c in node["checks"]}
        assert checks["dra.claim"]["status"] == "pass", checks["dra.claim"]
        assert checks["operator.validation"]["status"] == "pass", checks["operator.validation"]
        assert "published in ResourceSlices" in checks["gpu.capacity"]["message"]  # not nvidia.com/gpu
        assert node["gpus"]["seen"] == 4


def test_a_cluster_policy_beside_a_gpu_cluster_fails_verify(sim: Any, cli: Any) -> None:
    from kubernetes.client import ApiextensionsV1Api, CustomObjectsApi

    cluster = ready_gpu_cluster_sim(sim)
    api = cluster.api_client()
    crd = json.loads(
        json.dumps(GPU_CLUSTER_CRD)
        .replace("GPUCluster", "ClusterPolicy")
        .replace("gpucluster", "clusterpolicie")
    )
    crd["spec"]["versions"][0]["name"] = "v1"
    ApiextensionsV1Api(api).create_custom_resource_definition(crd)
    body = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {},
    }
    CustomObjectsApi(api).create_cluster_custom_object("nvidia.com", "v1", "clusterpolicies", body)
    wait_until(lambda: gpu_cluster_status(cluster).get("state") == "notReady", "GPUCluster refuses")
    error = next(c for c in gpu_cluster_status(cluster)["conditions"] if c["type"] == "Error")
    assert (error["status"], error["reason"]) == ("True", "PrerequisiteNotMet")
    assert error["message"] == (
        'A ClusterPolicy CR "cluster-policy" exists; '
        "a ClusterPolicy CR and GPUCluster CR may not exist at the same time"
    )
    policy = CustomObjectsApi(api).get_cluster_custom_object(
        "nvidia.com", "v1", "clusterpolicies", "cluster-policy"
    )
    policy_error = next(c for c in policy["status"]["conditions"] if c["type"] == "Error")
    assert policy["status"]["state"] == "notReady"
    assert policy_error["reason"] == "ReconcileFailed"
    assert "cannot co-exist" in policy_error["message"]

    code, report = verify_report(cli, cluster)
    assert code == 1
    check = cluster_check(report, "operator.gpucluster")
    assert check["status"] == "fail"
    assert "GPUCluster gpu-cluster and ClusterPolicy cluster-policy both exist" in check["message"]
    assert "kubectl delete clusterpolicies.nvidia.com cluster-policy" in check["hint"]

    status = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert json.loads(status.stdout)["operator_mode"] == "both"


def test_status_shows_the_operator_mode(sim: Any, cli: Any) -> None:
    cluster = ready_gpu_cluster_sim(sim)
    result = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["operator_mode"] == "GPUCluster"
    table = cli(["status", "--kubeconfig", str(cluster.kubeconfig)])
    assert "GPU Operator mode: GPUCluster (DRA driver)" in table.stdout
