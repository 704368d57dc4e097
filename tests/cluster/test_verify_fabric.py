"""`gpuctl verify --level fabric` against the simulated cluster: four 8 x H100 NVSwitch nodes with
8 x 400G InfiniBand each, one per fault (NVLS lost, four NICs down, NCCL on TCP sockets) and one
healthy, fail exactly where the fault is and are gated exactly so; a NIC that trained slower,
which NCCL's lines do not show, is found by splitting the group; nothing is left behind after
success, failure or Ctrl-C."""

from __future__ import annotations

import json
import math
import signal
from typing import Any

import pytest

from tests.interrupt import interrupt_when
from tests.polling import wait_until

HGX = {"gpus": 8, "interconnect": "nvswitch", "gpuProduct": "NVIDIA-H100-80GB-HBM3"}
IB_400G = {"fabric": "ib", "nicsPerNode": 8, "linkGbps": 400}
FABRIC_CHECK = "fabric.all-reduce"


def _scenario(nodes: list[dict[str, Any]], **top: Any) -> dict[str, Any]:
    return {
        "devicePlugin": "installed",
        "podStartSeconds": 0.05,
        "podRunSeconds": 0.05,
        "network": IB_400G,
        "nodes": [{**HGX, **node} for node in nodes],
        **top,
    }


def _ready(cluster: Any, nodes: int) -> Any:
    wait_until(lambda: list(cluster.allocatable_gpus().values()) == [8] * nodes, "GPUs advertised")
    return cluster


def _verify(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(
        ["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--level", "fabric", *args]
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout)


def _node(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(node for node in report["nodes"] if node["name"] == name)


def _check(report: dict[str, Any], name: str, check_id: str) -> dict[str, Any]:
    return next(check for check in _node(report, name)["checks"] if check["id"] == check_id)


def _failing(report: dict[str, Any]) -> dict[str, list[str]]:
    return {
        node["name"]: [check["id"] for check in node["checks"] if check["status"] == "fail"]
        for node in report["nodes"]
        if not node["ok"]
    }


def _left_behind(cluster: Any) -> list[str]:
    """Verification pods, and the Services and Secrets a fabric run makes, still in the cluster."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())
    selector = "app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"
    services = core.list_service_for_all_namespaces(label_selector=selector).items
    secrets = core.list_secret_for_all_namespaces(label_selector=selector).items
    return [
        *(f"pod/{pod.metadata.name}" for pod in cluster.verification_pods()),
        *(f"service/{item.metadata.name}" for item in services),
        *(f"secret/{item.metadata.name}" for item in secrets),
    ]


def _gate_taints(cluster: Any) -> dict[str, str]:
    from kubernetes import client

    nodes = client.CoreV1Api(cluster.api_client()).list_node().items
    return {
        node.metadata.name: taint.value
        for node in nodes
        for taint in node.spec.taints or []
        if taint.key == "gpuctl.io/unproven"
    }


@pytest.fixture
def four_nodes(sim: Any) -> Any:
    nodes = [
        {"name": "hgx-healthy"},
        {"name": "hgx-no-nvls", "nvls": False},
        {"name": "hgx-nics-down", "nicsDown": 4},
        {"name": "hgx-socket", "ncclTransport": "socket"},
    ]
    return _ready(sim(_scenario(nodes)), 4)


def test_each_fault_fails_at_its_own_check_and_nowhere_else(cli: Any, four_nodes: Any) -> None:
    code, report = _verify(cli, four_nodes)
    assert code == 1
    assert _failing(report) == {
        "hgx-no-nvls": ["nccl.all-reduce"],
        "hgx-nics-down": [FABRIC_CHECK],
        "hgx-socket": [FABRIC_CHECK],
    }
    healthy = _check(report, "hgx-healthy", FABRIC_CHECK)
    assert healthy["status"] == "pass", healthy
    nvls = _check(report, "hgx-no-nvls", "nccl.all-reduce")
    assert "NVLS" in nvls["message"]
    assert (
        _node(report, "hgx-no-nvls")["nccl"]["busbw_gbps"]
        < _node(report, "hgx-no-nvls")["nccl"]["expected_gbps"]
    )
    assert _check(report, "hgx-no-nvls", FABRIC_CHECK)["status"] == "skip"
    nics = _check(report, "hgx-nics-down", FABRIC_CHECK)
    assert "4 of the node's 8 InfiniBand NICs" in nics["message"]
    assert "ibstat" in nics["hint"]
    socket = _check(report, "hgx-socket", FABRIC_CHECK)
    assert "TCP sockets" in socket["message"]
    assert "no RDMA device" in socket["message"]
    assert "--fabric-resource" in socket["hint"]
    figures = _node(report, "hgx-socket")["fabric"]
    assert figures["transport"] == "Socket"
    assert figures["group"] == "8 x NVIDIA-H100-80GB-HBM3, ib 8x400G"
    assert _node(report, "hgx-nics-down")["fabric"]["nics_seen"] == 4
    assert _node(report, "hgx-healthy")["fabric"]["nics_seen"] == 8
    assert _left_behind(four_nodes) == []
    _assert_valid(report)  # the shipped gpuctl.verify/v1 schema, nodes[].fabric and level included


def _assert_valid(document: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    from gpuctl.report.schemas import load_schema

    validator = Draft202012Validator(load_schema(document["schema"]))
    errors = [f"{list(error.path)}: {error.message}" for error in validator.iter_errors(document)]
    assert not errors, errors
    assert {node["level"] for node in document["nodes"]} == {"fabric"}


def test_the_gate_takes_exactly_the_failing_nodes(cli: Any, four_nodes: Any) -> None:
    code, report = _verify(cli, four_nodes, "--gate")
    assert code == 1
    assert _gate_taints(four_nodes) == {
        "hgx-no-nvls": "fabric",
        "hgx-nics-down": "fabric",
        "hgx-socket": "fabric",
    }
    assert sorted(report["gate"]["gated"]) == ["hgx-nics-down", "hgx-no-nvls", "hgx-socket"]
    assert _left_behind(four_nodes) == []


def test_a_silently_slow_node_is_found_by_splitting_the_group(cli: Any, sim: Any) -> None:
    nodes = [{"name": f"hgx-{index}"} for index in range(8)]
    nodes[5]["nicsSlow"] = 1  # a port that trained at a quarter of its speed: NCCL lists it as usual
    cluster = _ready(sim(_scenario(nodes)), 8)
    code, report = _verify(cli, cluster)
    assert code == 1
    assert _failing(report) == {"hgx-5": [FABRIC_CHECK]}
    slow = _check(report, "hgx-5", FABRIC_CHECK)
    assert "paired with" in slow["message"]
    assert "which passed" in slow["message"]
    rounds = _node(report, "hgx-5")["fabric"]["rounds"]
    assert rounds <= math.ceil(math.log2(8)) + 1, rounds  # halves to a pair, then one paired round
    assert _check(report, "hgx-0", FABRIC_CHECK)["status"] == "pass"
    assert _left_behind(cluster) == []


def test_a_pair_with_no_node_that_passed_fails_naming_both(cli: Any, sim: Any) -> None:
    cluster = _ready(sim(_scenario([{"name": "hgx-a"}, {"name": "hgx-b", "nicsSlow": 2}])), 2)
    code, report = _verify(cli, cluster)
    assert code == 1
    assert _failing(report) == {"hgx-a": [FABRIC_CHECK], "hgx-b": [FABRIC_CHECK]}
    assert "hgx-b" in _check(report, "hgx-a", FABRIC_CHECK)["message"]


def test_healthy_fabric_passes_and_a_node_alone_is_not_applicable(cli: Any, sim: Any) -> None:
    nodes = [{"name": "hgx-0"}, {"name": "hgx-1"}, {"name": "l40s-0", "gpuProduct": "NVIDIA-L40S", "gpus": 8}]
    cluster = _ready(sim(_scenario(nodes)), 3)
    code, report = _verify(cli, cluster)
    assert code == 0, _failing(report)
    assert _node(report, "hgx-0")["fabric"]["nodes"] == ["hgx-0", "hgx-1"]
    assert _node(report, "hgx-0")["fabric"]["busbw_gbps"] >= 0.8 * 384
    alone = _check(report, "l40s-0", FABRIC_CHECK)
    assert alone["status"] == "pass"
    assert "only node of its group" in alone["message"]
    assert _left_behind(cluster) == []


def test_the_network_resource_decides_whether_the_pods_get_the_nics(cli: Any, sim: Any) -> None:
    offered = {**IB_400G, "resources": {"rdma/ib": 1}}
    cluster = _ready(sim(_scenario([{"name": "hgx-0"}, {"name": "hgx-1"}], network=offered)), 2)
    code, report = _verify(cli, cluster)  # no --fabric-resource: the pods see no RDMA device
    assert code == 1
    assert "no RDMA device" in _check(report, "hgx-0", FABRIC_CHECK)["message"]
    code, report = _verify(cli, cluster, "--fabric-resource", "rdma/ib=1")
    assert code == 0, _failing(report)
    assert _node(report, "hgx-1")["fabric"]["transport"] == "IB"
    code, report = _verify(cli, cluster, "--fabric-resource", "rdma/roce=1")  # not offered
    assert code == 1
    check = _check(report, "hgx-0", FABRIC_CHECK)
    assert "worker pod did not run (unschedulable)" in check["message"]
    assert "rdma/roce" in check["message"]
    assert _left_behind(cluster) == []


def test_ctrl_c_during_the_fabric_round_leaves_nothing(sim: Any) -> None:
    # Each pod runs 1.5 s, so the fabric round's workers are there long enough to be seen.
    cluster = _ready(sim(_scenario([{"name": "hgx-0"}, {"name": "hgx-1"}], podRunSeconds=1.5)), 2)

    def workers_running() -> bool:
        return any(
            (pod.metadata.labels or {}).get("gpuctl.io/fabric-role") == "worker"
            for pod in cluster.verification_pods()
        )

    args = ["verify", "--kubeconfig", str(cluster.kubeconfig), "--level", "fabric"]
    exit_code, stderr = interrupt_when(args, workers_running, [signal.SIGINT])
    assert exit_code == 130, stderr
    assert "Traceback" not in stderr
    assert _left_behind(cluster) == []


def test_where_mpijobs_are_served_the_runs_are_mpijobs(cli: Any, sim: Any) -> None:
    nodes = [{"name": "hgx-0"}, {"name": "hgx-1"}, {"name": "hgx-2", "nicsDown": 2}]
    cluster = _ready(sim(_scenario(nodes, mpiOperator="installed")), 3)
    code, report = _verify(cli, cluster)
    assert code == 1
    assert _failing(report) == {"hgx-2": [FABRIC_CHECK]}
    assert "6 of the node's 8" in _check(report, "hgx-2", FABRIC_CHECK)["message"]
    from kubernetes.client import CoreV1Api, CustomObjectsApi

    core = CoreV1Api(cluster.api_client())
    made = [
        event.message
        for event in core.list_event_for_all_namespaces().items
        if event.involved_object.kind == "MPIJob" and event.reason == "SuccessfulCreatePod"
    ]
    # round 1: three workers and a launcher; round 2 (without hgx-2): two and a launcher
    assert len(made) == 7, made
    assert sum("launcher" in message for message in made) == 2
    left = CustomObjectsApi(cluster.api_client()).list_cluster_custom_object(
        "kubeflow.org", "v2beta1", "mpijobs"
    )
    assert left["items"] == []
    wait_until(
        lambda: core.list_service_for_all_namespaces().items == [] or _only_default_services(core), "GC"
    )
    assert _left_behind(cluster) == []


def _only_default_services(core: Any) -> bool:
    return all(
        service.metadata.namespace in ("default", "kube-system")
        for service in core.list_service_for_all_namespaces().items
    )


MPIJOB_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "mpijobs.kubeflow.org"},
    "spec": {
        "group": "kubeflow.org",
        "names": {"kind": "MPIJob", "listKind": "MPIJobList", "plural": "mpijobs", "singular": "mpijob"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v2beta1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


def test_a_run_that_never_starts_times_out_and_leaves_nothing(cli: Any, sim: Any) -> None:
    """The MPIJob CRD installed but no MPI Operator running: no pod ever comes."""
    from kubernetes.client import ApiextensionsV1Api, CustomObjectsApi

    cluster = _ready(sim(_scenario([{"name": "hgx-0"}, {"name": "hgx-1"}])), 2)
    ApiextensionsV1Api(cluster.api_client()).create_custom_resource_definition(MPIJOB_CRD)
    code, report = _verify(cli, cluster, "--timeout", "2")
    assert code == 1
    for name in ("hgx-0", "hgx-1"):
        check = _check(report, name, FABRIC_CHECK)
        assert check["status"] == "fail"
        assert "before --timeout ran out" in check["message"]
        assert "MPI Operator" in check["hint"]
    left = CustomObjectsApi(cluster.api_client()).list_cluster_custom_object(
        "kubeflow.org", "v2beta1", "mpijobs"
    )
    assert left["items"] == []
    assert _left_behind(cluster) == []


def test_dra_nodes_are_left_out_not_failed(cli: Any, sim: Any) -> None:
    cluster = sim(_scenario([{"name": "dra-0"}, {"name": "dra-1"}], gpuAllocation="dra"))
    code, report = _verify(cli, cluster)
    for name in ("dra-0", "dra-1"):
        check = _check(report, name, FABRIC_CHECK)
        assert check["status"] == "skip", check
        assert "DRA" in check["message"]
    assert code == 0, _failing(report)
    assert _left_behind(cluster) == []


def test_efa_nodes_are_judged_by_their_nics_too(cli: Any, sim: Any) -> None:
    efa = {"fabric": "efa", "nicsPerNode": 32, "linkGbps": 100, "resources": {"vpc.amazonaws.com/efa": 32}}
    nodes = [{"name": "p5-0"}, {"name": "p5-1"}, {"name": "p5-2", "nicsDown": 16}]
    cluster = _ready(sim(_scenario(nodes, network=efa)), 3)
    code, report = _verify(cli, cluster, "--fabric-resource", "vpc.amazonaws.com/efa=32")
    assert code == 1
    assert _failing(report) == {"p5-2": [FABRIC_CHECK]}
    assert "16 of the node's 32 EFA NICs" in _check(report, "p5-2", FABRIC_CHECK)["message"]
    healthy = _node(report, "p5-0")["fabric"]
    assert (healthy["transport"], healthy["nics_seen"], healthy["expected_gbps"]) == ("Libfabric", 32, 384.0)


def test_keep_pods_keeps_the_launchers_with_the_restricted_shape(cli: Any, sim: Any) -> None:
    cluster = _ready(sim(_scenario([{"name": "hgx-0"}, {"name": "hgx-1"}])), 2)
    code, report = _verify(cli, cluster, "--keep-pods")
    assert code == 0, _failing(report)
    pods = {pod.metadata.name: pod for pod in cluster.verification_pods()}
    assert sorted(pods) == sorted(report["kept_pods"])
    fabric = [pod for pod in pods.values() if (pod.metadata.labels or {}).get("gpuctl.io/fabric-role")]
    assert [pod.metadata.labels["gpuctl.io/fabric-role"] for pod in fabric] == ["launcher"]
    launcher = fabric[0]
    security = launcher.spec.containers[0].security_context
    assert security.capabilities.drop == ["ALL"]
    assert security.run_as_non_root is True
    assert launcher.spec.host_network is None
    assert launcher.spec.containers[0].command[:3] == ["mpirun", "-np", "16"]
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])  # a later run starts afresh
    assert result.exit_code == 0, result.stdout + result.stderr


def test_the_html_page_shows_each_nodes_fabric_run(cli: Any, four_nodes: Any) -> None:
    result = cli(["verify", "--kubeconfig", str(four_nodes.kubeconfig), "--level", "fabric", "-o", "html"])
    assert result.exit_code == 1
    assert "fabric all-reduce over 3 node(s) (round 1 of 1)" in result.stdout  # the NVLS node sits out
    assert "network Socket, 0 of 8 NICs" in result.stdout
    assert "network IB, 4 of 8 NICs" in result.stdout


def test_a_node_without_gpudirect_rdma_is_named_when_the_group_falls_short(cli: Any, sim: Any) -> None:
    nodes = [{"name": f"hgx-{index}"} for index in range(4)]
    nodes[2]["gpuDirectRdma"] = False  # nvidia-peermem not loaded: channels without /GDRDMA
    cluster = _ready(sim(_scenario(nodes)), 4)
    code, report = _verify(cli, cluster)
    assert code == 1
    assert _failing(report) == {"hgx-2": [FABRIC_CHECK]}
    check = _check(report, "hgx-2", FABRIC_CHECK)
    assert "GPUDirect RDMA is off" in check["message"]
    assert "nvidia_peermem" in check["hint"]
    assert _node(report, "hgx-2")["fabric"]["round"] == 1  # named by its own lines, not by splitting
