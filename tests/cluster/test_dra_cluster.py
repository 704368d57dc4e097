"""The DRA side of the simulated cluster seen through real clients: kubectl's tables for
ResourceSlices and ResourceClaims, `gpuctl status` counting published and claimed GPUs once, and
`gpuctl taint-gpu-nodes` finding nodes that publish GPUs only through DRA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.test_verify_dra import _hold_one_gpu, dra_scenario, published
from tests.kubectl import Kubectl, needs_kubectl
from tests.polling import wait_until


def two_stacks() -> dict[str, Any]:
    return dra_scenario(
        {"name": "dra-{i}", "count": 2, "gpus": 2, "labels": {"pool": "dra"}},
        {"name": "sick", "gpus": 4, "unhealthyGpus": 1},
        {"name": "classic-0", "gpus": 2, "gpuAllocation": "device-plugin"},
        {"name": "cpu-0"},
        devicePlugin="installed",
    )


@needs_kubectl
def test_kubectl_get_resourceslices_and_resourceclaims(sim: Any, tmp_path: Path) -> None:
    cluster = sim(dra_scenario({"name": "gpu-0", "gpus": 2}))
    wait_until(lambda: published(cluster) == {"gpu-0": 2}, "GPUs published")
    kubectl = Kubectl(cluster, tmp_path)
    slices = kubectl.ok("get", "resourceslices").splitlines()
    assert slices[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices[1].split()[1:4] == ["gpu-0", "gpu.nvidia.com", "gpu-0"]
    assert "No resources found" in kubectl("get", "resourceclaims", "-A").stderr
    _hold_one_gpu(cluster)
    claims = kubectl.ok("get", "resourceclaims", "-A").splitlines()
    assert claims[0].split() == ["NAMESPACE", "NAME", "STATE", "AGE"]
    assert claims[1].split()[:3] == ["default", "training", "allocated,reserved"]
    classes = kubectl.ok("get", "deviceclasses", "-o", "name").split()
    assert classes == [
        "deviceclass.resource.k8s.io/gpu.nvidia.com",
        "deviceclass.resource.k8s.io/mig.nvidia.com",
    ]
    devices = json.loads(kubectl.ok("get", "resourceslices", "-o", "json"))["items"][0]["spec"]["devices"]
    attributes = devices[0]["attributes"]
    assert attributes["type"] == {"string": "gpu"}
    assert attributes["productName"] == {"string": "NVIDIA H100 80GB HBM3"}
    assert attributes["driverVersion"] == {"version": "550.90.7"}
    assert attributes["uuid"]["string"].startswith("GPU-")


def test_status_counts_dra_gpus_once_and_their_claims(sim: Any, cli: Any) -> None:
    cluster = sim(two_stacks())
    wait_until(lambda: len(published(cluster)) == 3, "GPUs published")
    wait_until(lambda: cluster.allocatable_gpus().get("classic-0") == 2, "GPUs advertised")
    _hold_one_gpu(cluster, "dra-0")
    result = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert result.exit_code == 0, result.stderr
    nodes = {node["name"]: node for node in json.loads(result.stdout)["nodes"]}
    assert set(nodes) == {"dra-0", "dra-1", "sick", "classic-0"}
    assert nodes["classic-0"]["gpu_allocation"] == "device-plugin"
    assert nodes["classic-0"]["dra"] is None
    # The device plugin DaemonSet runs on every node: dra-0 offers its two GPUs both ways.
    assert nodes["dra-0"]["gpu_allocation"] == "both"
    assert nodes["dra-0"]["gpus"] == {"capacity": 2, "allocatable": 2, "in_use": 1}
    assert nodes["dra-0"]["dra"] == {"published": 2, "claimable": 2, "allocated": 1, "tainted": 0}
    assert nodes["sick"]["dra"] == {"published": 4, "claimable": 3, "allocated": 0, "tainted": 1}
    assert nodes["sick"]["gpu_allocation"] == "both"


@pytest.fixture
def dra_only(sim: Any) -> Any:
    cluster = sim(dra_scenario({"name": "dra-{i}", "count": 2, "gpus": 2}, {"name": "cpu-0"}))
    wait_until(lambda: len(published(cluster)) == 2, "GPUs published")
    return cluster


def test_taint_gpu_nodes_finds_dra_nodes(dra_only: Any, cli: Any) -> None:
    result = cli(["taint-gpu-nodes", "--kubeconfig", str(dra_only.kubeconfig), "-o", "json"])
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert sorted(node["name"] for node in report["nodes"]) == ["dra-0", "dra-1"]
    assert "DRA" in report["selection"]
