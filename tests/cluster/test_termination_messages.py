"""Termination messages: the sim's kubelet sets `state.terminated.message` as a real one does
(the file at terminationMessagePath, else with FallbackToLogsOnError the log's tail on a failure),
and verify reads nvidia-smi's answer from it instead of one log request per pod; the device
plugin's log is read only where it can explain a problem."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kubernetes import client

from gpuctl import nvidia_smi
from gpuctl.sim.server.metrics import parse_metrics
from tests.cluster.test_sim_cluster import finished, gpu_pod
from tests.kubectl import Kubectl, needs_kubectl

FAILING_LOG = "".join(f"line {i}\n" for i in range(100))
SCENARIO = {
    "podStartSeconds": 0,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-0", "gpus": 4, "gpuProduct": "NVIDIA-H100-80GB-HBM3", "driverVersion": "550.90.07"},
        {"name": "noisy-0", "gpus": 4, "nvidiaSmi": {"stdout": FAILING_LOG, "exitCode": 3}},
    ],
}
TO_FILE = [*nvidia_smi.VERIFY_ARGS, "-f", "/dev/termination-log"]


def _terminated(core: client.CoreV1Api, name: str) -> Any:
    return finished(core, name).status.container_statuses[0].state.terminated


def _run(core: client.CoreV1Api, name: str, node: str, command: list[str], policy: str = "") -> Any:
    pod = gpu_pod(name, 4, node, command)
    if policy:
        pod["spec"]["containers"][0]["terminationMessagePolicy"] = policy
    core.create_namespaced_pod("default", pod)
    return _terminated(core, name)


def test_nvidia_smi_output_file_becomes_the_termination_message(sim: Any) -> None:
    core = client.CoreV1Api(sim(SCENARIO).api_client())
    terminated = _run(core, "to-file", "gpu-0", TO_FILE)
    expected, _ = nvidia_smi.run_nvidia_smi(
        list(nvidia_smi.VERIFY_ARGS[1:]),
        nvidia_smi.fake_gpus("gpu-0", 4, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07"),
    )
    assert terminated.exit_code == 0
    assert terminated.message == expected
    assert len(terminated.message.splitlines()) == 4
    # The answer went to the file, not to stdout.
    assert core.read_namespaced_pod_log("to-file", "default") == ""


def test_without_an_output_file_there_is_no_message_and_the_log_has_the_answer(sim: Any) -> None:
    core = client.CoreV1Api(sim(SCENARIO).api_client())
    terminated = _run(core, "to-stdout", "gpu-0", list(nvidia_smi.VERIFY_ARGS))
    assert terminated.message is None
    assert len(core.read_namespaced_pod_log("to-stdout", "default").splitlines()) == 4


def test_fallback_to_logs_on_error_takes_the_last_80_lines(sim: Any) -> None:
    core = client.CoreV1Api(sim(SCENARIO).api_client())
    terminated = _run(core, "fallback", "noisy-0", TO_FILE, "FallbackToLogsOnError")
    assert terminated.exit_code == 3
    assert terminated.message == "".join(f"line {i}\n" for i in range(20, 100))
    # The default policy (File) leaves a failure without a message when the file is empty.
    assert _run(core, "file-policy", "noisy-0", TO_FILE).message is None


def _log_reads(cluster: Any) -> int:
    with cluster.open("/metrics") as response:
        samples = parse_metrics(response.read().decode())
    return sum(count for (verb, _, sub, _), count in samples.items() if verb == "get" and sub == "log")


def test_verify_reads_no_log_of_a_pod_that_succeeded(sim: Any, cli: Any) -> None:
    cluster = sim({**SCENARIO, "nodes": [{"name": "gpu-{i}", "count": 3, "gpus": 4}]})
    result = cli("verify", "--kubeconfig", str(cluster.kubeconfig), "--keep-pods", "-o", "json")
    assert result.exit_code == 0, result.output
    # No log read at all: the pods' answers came with their status, and the healthy nodes' device
    # plugin logs have nothing to explain (plugin_logs.py).
    assert _log_reads(cluster) == 0
    checks = [check for node in json.loads(result.stdout)["nodes"] for check in node["checks"]]
    skipped = [check for check in checks if check["id"] == "device-plugin.log"]
    assert [check["status"] for check in skipped] == ["skip"] * 3
    assert all("verification pod proved them" in check["message"] for check in skipped)


@needs_kubectl
def test_verify_reads_the_log_of_a_pod_that_failed(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(SCENARIO)
    kubectl = Kubectl(cluster, tmp_path).ok
    result = cli("verify", "--kubeconfig", str(cluster.kubeconfig), "--keep-pods", "-o", "json")
    assert result.exit_code == 1
    # The failed pod's log and its node's device plugin log; nothing of the healthy gpu-0.
    assert _log_reads(cluster) == 2
    # A kept pod's answer, where a user reads it with kubectl.
    names = kubectl("get", "pods", "-n", "gpuctl-system", "-o", "name").split()
    passed = next(name for name in names if name.endswith("-gpu-0"))
    message = kubectl(
        "get",
        passed,
        "-n",
        "gpuctl-system",
        "-o",
        "jsonpath={.status.containerStatuses[0].state.terminated.message}",
    )
    assert message.count("NVIDIA H100 80GB HBM3") == 4


def test_plugin_logs_are_read_where_a_node_shows_a_problem(sim: Any, cli: Any) -> None:
    nodes = [
        {"name": "ok-0", "gpus": 4},
        {"name": "xid-0", "gpus": 4, "unhealthyGpus": 1},  # allocatable short before any pod runs
        {"name": "expect-0", "gpus": 4},  # fine, but --expect-gpus says 8
    ]
    cluster = sim({**SCENARIO, "nodes": nodes})
    result = cli(
        "verify", "--kubeconfig", str(cluster.kubeconfig), "--expect-gpus", "expect-0=8", "-o", "json"
    )
    assert result.exit_code == 1, result.output
    status = {
        node["name"]: next(c for c in node["checks"] if c["id"] == "device-plugin.log")
        for node in json.loads(result.stdout)["nodes"]
    }
    assert status["ok-0"]["status"] == "skip"
    assert status["xid-0"]["diagnosis"] == "xid.79"
    assert status["expect-0"]["status"] == "pass"  # read, and nothing found in it
    assert _log_reads(cluster) == 2


def test_with_no_pods_every_plugin_log_is_read(sim: Any, cli: Any) -> None:
    cluster = sim({**SCENARIO, "nodes": [{"name": "gpu-{i}", "count": 3, "gpus": 4}]})
    result = cli("verify", "--kubeconfig", str(cluster.kubeconfig), "--no-pods", "-o", "json")
    assert result.exit_code == 0, result.output
    assert _log_reads(cluster) == 3
