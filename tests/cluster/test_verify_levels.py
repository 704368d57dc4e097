"""`gpuctl verify --level cuda|nccl` against the simulated cluster: the CUDA check on every GPU and
the all-reduce across each node's GPUs, judged and diagnosed per node, on every stack, with no
pod left behind."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuctl.nccl_expectations import expected_busbw

HGX = {"gpus": 8, "interconnect": "nvswitch", "gpuProduct": "NVIDIA-H100-80GB-HBM3"}
DONE_WHEN = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "hgx-ok", **HGX},
        {"name": "hgx-fm", **HGX, "host": {"fabricManager": "stopped"}},
        {"name": "hgx-nvlink", **HGX, "nvlinkDown": 2},
        {"name": "one-gpu", "gpus": 1},
    ],
}


def verify_json(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", *args])
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout)


def node_of(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(node for node in report["nodes"] if node["name"] == name)


def check_of(report: dict[str, Any], name: str, check_id: str) -> dict[str, Any]:
    return next(check for check in node_of(report, name)["checks"] if check["id"] == check_id)


@pytest.fixture
def hgx_cluster(sim: Any) -> Any:
    from tests.polling import wait_until

    cluster = sim(DONE_WHEN)
    wait_until(lambda: cluster.allocatable_gpus().get("hgx-ok") == 8, "GPUs advertised")
    return cluster


def test_nccl_level_passes_healthy_nodes_and_names_each_fault(cli: Any, hgx_cluster: Any) -> None:
    code, report = verify_json(cli, hgx_cluster, "--level", "nccl")
    assert code == 1
    assert {node["name"]: node["ok"] for node in report["nodes"]} == {
        "hgx-ok": True, "hgx-fm": False, "hgx-nvlink": False, "one-gpu": True,
    }  # fmt: skip
    assert all(node["level"] == "nccl" for node in report["nodes"])
    healthy = node_of(report, "hgx-ok")
    assert healthy["cuda"] == [{"index": i, "ok": True, "error": None} for i in range(8)]
    assert healthy["nccl"]["expected_gbps"] == 480.0  # NVLink SHARP on 8 H100 (nccl-tests#212)
    assert healthy["nccl"]["busbw_gbps"] >= 0.8 * 480.0
    assert (healthy["nccl"]["algorithm"], healthy["nccl"]["transport"]) == ("NVLS", "P2P/CUMEM")
    reason = healthy["nccl"]["expected_reason"]
    assert reason.startswith("8 x H100 on NVSwitch with NVLink SHARP (NVLS): 480 GB/s")
    assert healthy["nccl"]["size_bytes"] == 8 * 2**30
    assert healthy["nccl"]["gpus"] == 8
    single = check_of(report, "one-gpu", "nccl.all-reduce")
    assert (single["status"], single["message"]) == ("pass", "not applicable: 1 GPU")
    assert check_of(report, "one-gpu", "cuda.workload")["status"] == "pass"

    fabric = check_of(report, "hgx-fm", "cuda.workload")
    assert fabric["status"] == "fail"
    assert fabric["diagnosis"] == "gpu.fabric-not-ready"
    assert "Fabric Manager" in fabric["message"]
    assert "systemctl" in fabric["hint"]
    assert "nvidia-fabricmanager" in fabric["hint"]
    assert node_of(report, "hgx-fm")["cuda"][0] == {
        "index": 0,
        "ok": False,
        "error": "system not yet initialized",
    }
    skipped = check_of(report, "hgx-fm", "nccl.all-reduce")
    assert (skipped["status"], skipped["message"]) == ("skip", "not run: cuda.workload failed")

    assert check_of(report, "hgx-nvlink", "cuda.workload")["status"] == "pass"
    slow = check_of(report, "hgx-nvlink", "nccl.all-reduce")
    assert slow["status"] == "fail"
    pcie = expected_busbw("NVIDIA-H100-80GB-HBM3", "pcie")
    measured = node_of(report, "hgx-nvlink")["nccl"]["busbw_gbps"]
    assert measured <= pcie.busbw_gbps  # type: ignore[union-attr]
    assert f"{measured:.1f} GB/s" in slow["message"]
    assert "expected 480 GB/s" in slow["message"]
    assert "NVLink" in slow["hint"] or "nvlink" in slow["hint"]
    assert hgx_cluster.verification_pods() == []
    assert report["pods_created"] == 4 + 4 + 2  # nvidia-smi, CUDA check, all-reduce (8-GPU nodes left)


def test_cuda_level_passes_the_nvlink_node_and_leaves_no_pod(cli: Any, hgx_cluster: Any) -> None:
    code, report = verify_json(cli, hgx_cluster, "--level", "cuda")
    assert code == 1  # the Fabric Manager node
    assert node_of(report, "hgx-nvlink")["ok"] is True
    assert node_of(report, "hgx-nvlink")["nccl"] is None
    assert not any(check["id"] == "nccl.all-reduce" for node in report["nodes"] for check in node["checks"])
    assert hgx_cluster.verification_pods() == []


def test_smi_level_is_unchanged(cli: Any, hgx_cluster: Any) -> None:
    code, report = verify_json(cli, hgx_cluster)
    assert code == 0
    assert all(node["level"] == "smi" and node["cuda"] is None for node in report["nodes"])
    assert report["pods_created"] == 4


def test_min_busbw_judges_a_node_without_interconnect_and_warns_without(cli: Any, sim: Any) -> None:
    from tests.polling import wait_until

    cluster = sim(
        {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 4}]}
    )
    wait_until(lambda: cluster.allocatable_gpus().get("gpu-0") == 4, "GPUs advertised")
    code, report = verify_json(cli, cluster, "--level", "nccl")
    warned = check_of(report, "gpu-0", "nccl.all-reduce")
    assert (code, warned["status"]) == (0, "warn")
    assert "--min-busbw" in warned["hint"]
    assert "gpuctl.io/interconnect" in warned["message"]
    assert warned["message"].endswith("`nvidia-smi topo -m` shows nvswitch")  # the sim's unlabelled HGX
    code, report = verify_json(cli, cluster, "--level", "nccl", "--min-busbw", "5000")
    assert code == 1
    assert node_of(report, "gpu-0")["nccl"]["expected_gbps"] == 5000.0
    assert "below expectation" in check_of(report, "gpu-0", "nccl.all-reduce")["message"]


def test_workload_overrides_and_ecc_errors(cli: Any, sim: Any) -> None:
    from tests.polling import wait_until

    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [
                {"name": "ecc", "gpus": 4, "eccErrors": 1},
                {"name": "old-driver", "gpus": 2, "workloads": {"cuda": {
                    "stdout": "Failed to allocate device vector A (error code CUDA driver version is "
                              "insufficient for CUDA runtime version)!\n", "exitCode": 1}}},
            ],
        }
    )  # fmt: skip
    wait_until(lambda: cluster.allocatable_gpus().get("ecc") == 4, "GPUs advertised")
    code, report = verify_json(cli, cluster, "--level", "cuda")
    assert code == 1
    ecc = check_of(report, "ecc", "cuda.workload")
    assert ecc["diagnosis"] == "cuda.ecc-uncorrectable"
    assert "1 of 4 GPU(s) (GPU 0)" in ecc["message"]
    assert [gpu["ok"] for gpu in node_of(report, "ecc")["cuda"]] == [False, True, True, True]
    old = check_of(report, "old-driver", "cuda.workload")
    assert old["diagnosis"] == "cuda.driver-too-old"
    assert "--cuda-image" in old["hint"]


def test_level_pods_are_deleted_on_timeout(cli: Any, sim: Any) -> None:
    """The CUDA pods cannot start (their image does not exist): --timeout ends the round, the
    check fails with the image diagnosis, and no pod stays."""
    from tests.polling import wait_until

    cluster = sim(
        {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 2}]}
    )
    wait_until(lambda: cluster.allocatable_gpus().get("gpu-0") == 2, "GPUs advertised")
    code, report = verify_json(
        cli, cluster, "--level", "cuda", "--cuda-image", "example.com/does-not-exist:1", "--timeout", "3"
    )
    assert code == 1
    check = check_of(report, "gpu-0", "cuda.workload")
    assert check["status"] == "fail"
    assert check["message"].startswith("the CUDA check pod:")
    assert cluster.verification_pods() == []


@pytest.mark.parametrize("stack", ["dra", "operator"])
def test_cuda_level_runs_on_every_stack(cli: Any, sim: Any, stack: str) -> None:
    from tests.polling import wait_until

    scenario: dict[str, Any] = {"podStartSeconds": 0.05, "nodes": [{"name": "gpu-0", "gpus": 2}]}
    if stack == "dra":
        scenario |= {"kubernetesVersion": "v1.34.1", "gpuAllocation": "dra"}
    else:
        scenario |= {"gpuOperator": {"driver": {"enabled": False}}}  # the host layer's driver
    cluster = sim(scenario)
    if stack == "operator":
        wait_until(lambda: cluster.allocatable_gpus().get("gpu-0") == 2, "GPUs advertised", timeout=30)
    code, report = verify_json(cli, cluster, "--level", "cuda")
    cuda = check_of(report, "gpu-0", "cuda.workload")
    assert cuda["status"] == "pass", report
    assert len(node_of(report, "gpu-0")["cuda"]) == 2
    assert code == 0, report
    assert cluster.verification_pods() == []


def gate_taints(cluster: Any) -> dict[str, str]:
    """Each gated node's gpuctl.io/unproven value."""
    from kubernetes import client

    nodes = client.CoreV1Api(cluster.api_client()).list_node().items
    return {
        node.metadata.name: taint.value
        for node in nodes
        for taint in node.spec.taints or []
        if taint.key == "gpuctl.io/unproven"
    }


def test_the_gate_follows_the_level_exactly(cli: Any, hgx_cluster: Any) -> None:
    """--gate at nccl taints just the Fabric Manager and NVLink nodes; at cuda the NVLink node
    passes, so its gate is lifted, and the Fabric Manager node stays gated at the new level."""
    code, report = verify_json(cli, hgx_cluster, "--level", "nccl", "--gate")
    assert code == 1
    assert gate_taints(hgx_cluster) == {"hgx-fm": "nccl", "hgx-nvlink": "nccl"}
    assert sorted(report["gate"]["gated"]) == ["hgx-fm", "hgx-nvlink"]

    code, report = verify_json(cli, hgx_cluster, "--level", "cuda", "--gate")
    assert code == 1
    assert gate_taints(hgx_cluster) == {"hgx-fm": "cuda"}
    assert report["gate"]["ungated"] == ["hgx-nvlink"]
    assert hgx_cluster.verification_pods() == []
