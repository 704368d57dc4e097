"""verify on a cluster at work: the verification pods ask only for the GPUs the node's workloads
leave free, so a node proven while it trains proves its free GPUs, and a node whose workloads hold
every GPU is reported busy (gpu.in-use warns; exit 0) instead of a pod pending until --timeout and
a healthy node failed. --gate leaves a busy node's gate and proven-level as they were."""

from __future__ import annotations

from typing import Any

from gpuctl.defaults import PROVEN_ANNOTATION
from tests.cluster.test_status import _gpu_pod, _wait_for_phase
from tests.cluster.test_verify_dra import checks_of, verify_json

GATE_KEY = "gpuctl.io/unproven"
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4}, {"name": "cpu-0"}],
}


def _hold(cluster: Any, name: str, node: str, gpus: int) -> None:
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())
    core.create_namespaced_pod("default", _gpu_pod(name, node, gpus, ["sleep", "3600"]))
    _wait_for_phase(core, name, {"Running"})


def test_verification_takes_the_free_gpus_and_a_busy_node_is_not_failed(sim: Any, cli: Any) -> None:
    cluster = sim(SCENARIO)
    _hold(cluster, "trainer", "gpu-0", 1)
    _hold(cluster, "big-job", "gpu-1", 4)
    code, report = verify_json(cli, cluster, "--timeout", "30", "--expect-gpus", "4")
    assert code == 0, report
    nodes = {node["name"]: node for node in report["nodes"]}

    partly = nodes["gpu-0"]
    assert (partly["ok"], partly["proven"], partly["busy"]) == (True, True, False)
    assert partly["gpus"]["in_use"] == 1
    assert partly["gpus"]["seen"] == 3  # the three free GPUs, proven; the workload's left alone
    checks = checks_of(report, "gpu-0")
    assert checks["gpu.in-use"]["status"] == "pass"
    assert "1 GPU(s) held by 1 workload(s) (default/trainer)" in checks["gpu.in-use"]["message"]
    assert checks["nvidia-smi.gpus"]["message"] == "3 GPU(s) seen = 3 requested"

    busy = nodes["gpu-1"]
    assert (busy["ok"], busy["proven"], busy["busy"]) == (True, False, True)
    assert busy["gpus"]["in_use"] == 4
    checks = checks_of(report, "gpu-1")
    assert checks["gpu.in-use"]["status"] == "warn"
    assert (
        "all 4 GPU(s) held by 1 workload(s) (default/big-job): not proven by this run"
        in (checks["gpu.in-use"]["message"])
    )
    assert "kubectl drain gpu-1 --ignore-daemonsets" in checks["gpu.in-use"]["hint"]
    assert checks["pod.scheduled"]["status"] == "skip"
    assert report["pods_created"] == 1  # gpu-0's; none asked for gpu-1's held GPUs

    table = cli("verify", "--kubeconfig", cluster.kubeconfig, "--timeout", "30")
    assert table.exit_code == 0, table.output
    assert "gpu.in-use" in table.stdout


def test_the_gate_leaves_a_busy_node_as_it_was(sim: Any, cli: Any) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(SCENARIO)
    core = CoreV1Api(cluster.api_client())
    code, first = verify_json(cli, cluster, "--timeout", "30", "--gate")
    assert code == 0, first
    proven_at = core.read_node("gpu-1").metadata.annotations[PROVEN_ANNOTATION]
    _hold(cluster, "big-job", "gpu-1", 4)
    code, report = verify_json(cli, cluster, "--timeout", "30", "--gate")
    assert code == 0, report
    assert "gpu-1" not in [*report["gate"]["gated"], *report["gate"]["ungated"], *report["gate"]["unchanged"]]
    node = core.read_node("gpu-1")
    assert node.metadata.annotations[PROVEN_ANNOTATION] == proven_at  # the earlier proof stands
    assert GATE_KEY not in [taint.key for taint in node.spec.taints or []]
