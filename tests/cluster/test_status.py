"""`gpuctl status` against the simulated cluster, through the real client over HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from gpuctl.core.status import gpu_status
from gpuctl.kube.gpu_use import pod_gpu_request
from gpuctl.kube.nodes import driver_version

SCENARIO: dict[str, Any] = {
    "devicePlugin": "installed",
    "podStartSeconds": 0.05,
    "nodes": [
        {"name": "cpu-{i}", "count": 2},
        {
            "name": "gpu-{i}",
            "count": 2,
            "gpus": 8,
            "gpuProduct": "NVIDIA-H100-80GB-HBM3",
            "labels": {"nvidia.com/cuda.driver-version.full": "550.90.07"},
        },
        {
            "name": "gpu-sick-0",
            "gpus": 8,
            "unhealthyGpus": 2,
            "gpuProduct": "NVIDIA-A100-SXM4-80GB",
            "driverVersion": "535.183.01",
        },
        {"name": "gpu-down-0", "gpus": 4, "ready": False},
        {"name": "gpu-notoolkit-0", "gpus": 8, "host": {"driver": "installed", "toolkit": "missing"}},
    ],
}


def _gpu_pod(name: str, node: str, gpus: int, command: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [
                {
                    "name": "main",
                    "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                    "command": command,
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ],
        },
    }


def _wait_for_phase(core: Any, name: str, phases: set[str], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if core.read_namespaced_pod(name, "default").status.phase in phases:
            return
        time.sleep(0.05)
    pytest.fail(f"pod {name} never reached {phases}")


def test_status_json_inventory(sim: Callable[..., Any], cli: Callable[..., Any]) -> None:
    cluster = sim(SCENARIO)
    result = cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"schema", "cluster_nodes", "totals", "nodes"}
    assert report["schema"] == "gpuctl.status/v1"
    assert report["cluster_nodes"] == 7
    nodes = {node["name"]: node for node in report["nodes"]}
    assert set(nodes) == {"gpu-0", "gpu-1", "gpu-sick-0", "gpu-down-0", "gpu-notoolkit-0"}
    assert set(nodes["gpu-0"]) == {
        "name",
        "product",
        "gpus",
        "driver",
        "sharing",
        "taints",
        "ready",
        "schedulable",
        "gpu_memory_mib",
        "kubelet_version",
        "container_runtime",
        "kernel_version",
        "os_image",
        "gpu_allocation",
        "dra",
        "gate",
        "unhealthy_gpus",
        "gated_devices",
    }
    assert (nodes["gpu-0"]["gpu_allocation"], nodes["gpu-0"]["dra"]) == ("device-plugin", None)
    assert nodes["gpu-0"]["gpus"] == {"capacity": 8, "allocatable": 8, "in_use": 0}
    assert nodes["gpu-0"]["product"] == "NVIDIA-H100-80GB-HBM3"
    assert nodes["gpu-0"]["driver"] == "550.90.07"
    assert nodes["gpu-sick-0"]["gpus"] == {"capacity": 8, "allocatable": 6, "in_use": 0}
    assert nodes["gpu-sick-0"]["driver"] == "535.183.01"  # from the GFD labels
    assert nodes["gpu-notoolkit-0"]["driver"] == "-"  # no device plugin, no GFD labels
    assert nodes["gpu-notoolkit-0"]["gpus"]["capacity"] == 0  # labelled by NFD, advertises nothing
    assert nodes["gpu-down-0"]["ready"] is False
    assert "node.kubernetes.io/not-ready:NoSchedule" in nodes["gpu-down-0"]["taints"]
    assert report["totals"] == {"gpu_nodes": 5, "capacity": 24, "allocatable": 22, "in_use": 0}


def test_gpus_in_use_count_running_pods_only(sim: Callable[..., Any], cli: Callable[..., Any]) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(SCENARIO)
    core = CoreV1Api(cluster.api_client())
    core.create_namespaced_pod("default", _gpu_pod("trainer", "gpu-0", 3, ["sleep", "3600"]))
    core.create_namespaced_pod("default", _gpu_pod("finished", "gpu-1", 2, ["sh", "-c", "true"]))
    _wait_for_phase(core, "trainer", {"Running"})
    _wait_for_phase(core, "finished", {"Succeeded", "Failed"})

    status = {node.name: node for node in gpu_status(cluster.api_client()).nodes}
    assert status["gpu-0"].gpu_in_use == 3
    assert status["gpu-1"].gpu_in_use == 0

    table = cli("status", "--kubeconfig", cluster.kubeconfig)
    assert table.exit_code == 0, table.output
    row = next(line for line in table.stdout.splitlines() if line.startswith("gpu-0 "))
    assert "8/8/3" in row
    assert "550.90.07" in row
    down = next(line for line in table.stdout.splitlines() if line.startswith("gpu-down-0 "))
    assert "NotReady" in down
    assert "5 GPU node(s) of 7: 24 GPUs, 22 allocatable, 3 in use" in table.stdout


def test_no_gpu_node(sim: Callable[..., Any], cli: Callable[..., Any]) -> None:
    cluster = sim({"nodes": [{"name": "cpu-{i}", "count": 3}]})
    result = cli("status", "--kubeconfig", cluster.kubeconfig)
    assert result.exit_code == 0
    assert "no GPU node found among 3 node(s)" in result.stdout


def test_unreachable_and_bad_kubeconfig(
    sim: Callable[..., Any], cli: Callable[..., Any], tmp_path: Any
) -> None:
    cluster = sim(SCENARIO)
    cluster.server.stop()
    unreachable = cli("status", "--kubeconfig", cluster.kubeconfig)
    assert unreachable.exit_code == 3
    assert "list nodes" in unreachable.stderr
    missing = cli("status", "--kubeconfig", tmp_path / "nope")
    assert missing.exit_code == 2
    bad_output = cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "junit")
    assert bad_output.exit_code == 2
    for result in (unreachable, missing, bad_output):
        assert "Traceback" not in result.output


def test_forbidden_pods_list_exits_3(sim: Callable[..., Any], cli: Callable[..., Any]) -> None:
    cluster = sim({**SCENARIO, "forbidden": ["list pods"]})
    result = cli("status", "--kubeconfig", cluster.kubeconfig)
    assert result.exit_code == 3
    assert "list pods" in result.stderr


def test_driver_labels_and_pod_requests() -> None:
    assert driver_version({"nvidia.com/cuda.driver-version.full": "570.86.15"}, {}) == "570.86.15"
    legacy = {"nvidia.com/cuda.driver.major": "535", "nvidia.com/cuda.driver.minor": "183",
              "nvidia.com/cuda.driver.rev": "01"}  # fmt: skip
    assert driver_version(legacy, {}) == "535.183.01"
    assert driver_version({}, {"nvidia.com/driver-version": "550.54.15"}) == "550.54.15"
    newest = {"nvidia.com/cuda.driver-version.major": "570", "nvidia.com/cuda.driver-version.minor": "86",
              "nvidia.com/cuda.driver-version.revision": "15"}  # fmt: skip
    assert driver_version(newest, {}) == "570.86.15"
    assert driver_version({}, {}) == ""
    pod = {
        "spec": {
            "containers": [
                {"resources": {"limits": {"nvidia.com/gpu": "2"}}},
                {"resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}},
            ],
            "initContainers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}],
        }
    }
    assert pod_gpu_request(pod) == 4
