"""Diagnoses `gpuctl verify` reaches end to end on the simulated cluster, from real machine output.

tests/unit/test_diagnose.py maps texts to signatures; here the text comes out of a verification pod
or a node as verify reads them, and the check must carry the signature's id.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.polling import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# nvidia-smi in a container that has the binary but not the driver's libraries (exit 12), verbatim
# from https://github.com/NVIDIA/nvidia-docker/issues/1163.
NVML_MISSING = (
    "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
    "Display Driver is properly installed and present in your system.\n"
    "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n"
)


def verify_json(cli: Any, kubeconfig: Any) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(kubeconfig), "-o", "json", "--timeout", "60"])
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


def check(data: dict[str, Any], node: str, check_id: str) -> dict[str, Any]:
    item = next(item for item in data["nodes"] if item["name"] == node)
    return next(c for c in item["checks"] if c["id"] == check_id)


def test_nvidia_smi_without_its_library_is_smi_nvml_missing(sim: Any, cli: Any) -> None:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-0", "gpus": 8, "nvidiaSmi": {"stdout": NVML_MISSING, "exitCode": 12}}],
        }
    )

    def advertised() -> bool:
        return cluster.allocatable_gpus().get("gpu-0") == 8

    wait_until(advertised, "gpu-0 to advertise its GPUs")
    code, data = verify_json(cli, cluster.kubeconfig)
    assert code == 1
    run = check(data, "gpu-0", "nvidia-smi.run")
    assert run["status"] == "fail"
    assert run["diagnosis"] == "smi.nvml-missing", run
    assert "ldconfig" in run["hint"]


def test_a_gpu_node_without_a_device_plugin_is_node_no_gpu_advertised(sim: Any, cli: Any) -> None:
    cluster = sim({"devicePlugin": "absent", "nodes": [{"name": "gpu-0", "gpus": 8}]})
    code, data = verify_json(cli, cluster.kubeconfig)
    assert code == 1
    capacity = check(data, "gpu-0", "gpu.capacity")
    assert capacity["status"] == "fail"
    assert capacity["diagnosis"] == "node.no-gpu-advertised", capacity
