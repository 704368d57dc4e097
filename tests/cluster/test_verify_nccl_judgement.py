"""`gpuctl verify --level nccl` against the simulated cluster, on both sides of each judgement: an
8 x H100 NVSwitch node's all-reduce at 95 % of its NVLS figure passes and at 60 % fails (output in
the pinned nccl-tests release's layout, through the sim's per-node workload override), a node that
lost NVLink SHARP (`nvls: false`) fails naming NVLS with both figures, fewer NVLinks lower it in
proportion, and --min-busbw still replaces the figure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuctl.nccl_expectations import Expectation, NodeHardware, expected_for
from gpuctl.nccl_tests import NcclDevice, all_reduce_rows, format_all_reduce
from gpuctl.sim.runtime.workloads import nccl_info_lines

H100 = "NVIDIA-H100-80GB-HBM3"
HGX = {"gpus": 8, "interconnect": "nvswitch", "gpuProduct": H100}
NVLS_FIGURE = 480.0  # 8 x H100 on NVSwitch, NVLS (nccl-tests#212)
# A real failed run with NCCL_DEBUG=INFO (tests/corpus/workloads.yaml: nccl-tests issue 287).
RTX_5090_FAILURE = (
    Path(__file__).resolve().parents[1]
    / "corpus/workloads/all-reduce-perf-rtx-5090-2gpus-nccl-debug-info-cuda-failure.txt"
).read_text(encoding="utf-8")


def _all_reduce_at(busbw_gbps: float, name: str) -> str:
    """all_reduce_perf output of an 8-GPU NVLS run whose links sustain `busbw_gbps`."""
    devices = [
        NcclDevice(rank, name, rank, f"0000:{0x18 + rank:02x}:00", "NVIDIA H100 80GB HBM3", pid=7)
        for rank in range(8)
    ]
    info = nccl_info_lines(name, 8, nvls_support=True, nvls=True)
    return format_all_reduce(devices, all_reduce_rows(8, busbw_gbps), info_lines=info)


def _verify(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--level", "nccl", *args])
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout)


def _node(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(node for node in report["nodes"] if node["name"] == name)


def _check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(check for check in _node(report, name)["checks"] if check["id"] == "nccl.all-reduce")


@pytest.fixture
def cluster(sim: Any) -> Any:
    from tests.polling import wait_until

    nodes = [
        {
            "name": "at-95",
            **HGX,
            "workloads": {"nccl": {"stdout": _all_reduce_at(0.95 * NVLS_FIGURE, "at-95")}},
        },
        {
            "name": "at-60",
            **HGX,
            "workloads": {"nccl": {"stdout": _all_reduce_at(0.60 * NVLS_FIGURE, "at-60")}},
        },
        {"name": "healthy", **HGX},
        {"name": "no-nvls", **HGX, "nvls": False},
        {"name": "twelve-links", **HGX, "nvlinks": 12},
        {"name": "l40s", "gpus": 8, "interconnect": "pcie", "gpuProduct": "NVIDIA-L40S"},
        # GPU 0's link trained at x8 of its x16: the ring runs at half the figure
        {
            "name": "l40s-x8",
            "gpus": 8,
            "interconnect": "pcie",
            "gpuProduct": "NVIDIA-L40S",
            "pcieDegraded": 1,
        },
        # L40S cards in Gen3 slots: held to what a Gen3 x16 link gives
        {
            "name": "l40s-gen3",
            "gpus": 8,
            "interconnect": "pcie",
            "gpuProduct": "NVIDIA-L40S",
            "pcieLink": {"gen": 3, "width": 16},
        },
        {"name": "rtx-fails", "gpus": 2, "workloads": {"nccl": {"stdout": RTX_5090_FAILURE, "exitCode": 1}}},
        # an HGX node labelled pcie by mistake: its topology shows NVSwitch
        {"name": "mislabelled", **HGX, "labels": {"gpuctl.io/interconnect": "pcie"}},
    ]
    running = sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": nodes})
    wait_until(lambda: len(running.allocatable_gpus()) == len(nodes), "GPUs advertised")
    return running


def test_the_pass_fraction_is_held_on_both_sides_and_nvls_is_named(cli: Any, cluster: Any) -> None:
    code, report = _verify(cli, cluster)
    assert code == 1
    verdicts = {node["name"]: node["ok"] for node in report["nodes"]}
    assert {name: verdicts[name] for name in ("at-95", "at-60", "healthy", "no-nvls", "twelve-links")} == {
        "at-95": True, "at-60": False, "healthy": True, "no-nvls": False, "twelve-links": False,
    }  # fmt: skip

    assert _node(report, "at-95")["nccl"]["busbw_gbps"] == pytest.approx(0.95 * NVLS_FIGURE, rel=0.01)
    assert _node(report, "at-95")["nccl"]["algorithm"] == "NVLS"
    low = _check(report, "at-60")
    assert low["status"] == "fail"
    assert "below expectation: expected 480 GB/s" in low["message"]
    assert "pass at >= 384 GB/s" in low["message"]

    # NVLS lost: NCCL ran ring at the ring figure; the message names NVLS with both figures.
    lost = _check(report, "no-nvls")
    figures = _node(report, "no-nvls")["nccl"]
    assert (figures["algorithm"], figures["expected_gbps"]) == ("Ring", 480.0)
    assert figures["busbw_gbps"] == pytest.approx(370.0, rel=0.01)
    assert lost["message"].startswith("NCCL ran Ring where NVLS (NVLink SHARP) was expected: all-reduce bus ")
    assert f"{figures['busbw_gbps']:.1f} GB/s" in lost["message"]
    assert "expected 480 GB/s" in lost["message"]
    assert "nvidia-fabricmanager" in lost["hint"]

    # 12 of 18 NVLinks: two thirds of the NVLS figure, below 80 % of it.
    links = _node(report, "twelve-links")["nccl"]
    assert links["busbw_gbps"] == pytest.approx(NVLS_FIGURE * 12 / 18, rel=0.01)
    assert links["algorithm"] == "NVLS"
    assert "nvidia-smi nvlink -s" in _check(report, "twelve-links")["hint"]
    assert _check(report, "twelve-links")["message"].endswith(
        "; `nvidia-smi nvlink -s`: GPU 0: 12 of 18 NVLinks active; GPU 1: 12 of 18 NVLinks active; "
        "GPU 2: 12 of 18 NVLinks active (and 5 more GPUs)"
    )
    # A real failed run: the cause is the CUDA failure NCCL warned of last, not the warnings it
    # survived earlier (a topology search falling back); what NCCL had set up is still recorded.
    failed = _check(report, "rtx-fails")
    assert failed["status"] == "fail"
    assert failed["message"].startswith(
        "all_reduce_perf exited 1 before its summary: GENOA-06: Test NCCL failure common.cu:392 "
    )
    assert failed["diagnosis"] == "nccl.cuda-failure"
    assert "'invalid argument'" in failed["message"]
    chosen = _node(report, "rtx-fails")["nccl"]
    assert (chosen["algorithm"], chosen["transport"]) == ("Ring", "SHM/direct")

    # Held to what its GPUs have (nvidia-smi topo -m), not the PCIe figure its label names.
    mislabelled = _node(report, "mislabelled")["nccl"]
    assert mislabelled["expected_gbps"] == NVLS_FIGURE
    assert "(labelled pcie; `nvidia-smi topo -m` shows nvswitch)" in mislabelled["expected_reason"]
    assert _node(report, "mislabelled")["ok"] is True

    # No measured 8 x L40S figure: held to what its PCIe Gen4 x16 links give, and the reason says so.
    l40s = _node(report, "l40s")
    assert (l40s["ok"], l40s["nccl"]["expected_gbps"]) == (True, 14.0)
    assert l40s["nccl"]["expected_reason"].startswith(
        "8 x L40S on PCIe only: 14 GB/s busbw derived from PCIe Gen4 x16 (31.5 GB/s per direction)"
    )
    links = "`nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current,...`"
    assert f"; {links}: 8 GPUs at PCIe Gen4 x16; " in l40s["nccl"]["expected_reason"]
    # A GPU whose link trained below its maximum is named with both figures, and drags the ring down.
    narrow = _check(report, "l40s-x8")
    assert narrow["status"] == "fail"
    assert narrow["message"].endswith(
        "PCIe link below its maximum: GPU 0 (00000000:18:00.0) at PCIe Gen4 x8, capable of Gen4 x16"
    )
    gen3 = _node(report, "l40s-gen3")
    assert (gen3["ok"], gen3["nccl"]["expected_gbps"]) == (True, 7.0)
    assert cluster.verification_pods() == []


def test_min_busbw_still_replaces_the_nvls_figure(cli: Any, cluster: Any) -> None:
    code, report = _verify(cli, cluster, "--min-busbw", "250")
    ring = _node(report, "no-nvls")
    assert ring["ok"] is True  # --min-busbw judges bandwidth only
    assert ring["nccl"]["expected_gbps"] == 250.0
    assert ring["nccl"]["expected_reason"] == (
        "--min-busbw 250; `nvidia-smi nvlink -s`: 8 GPUs x 18 of 18 NVLinks active at 26.562 GB/s"
    )
    assert _node(report, "at-60")["ok"] is True  # 288 GB/s >= 250
    assert _node(report, "twelve-links")["ok"] is True  # 320 GB/s >= 250
    assert code == 1  # the L40S node's all-reduce (PCIe) is below 250


def test_expected_reason_names_the_configuration_and_its_source(cli: Any, cluster: Any) -> None:
    _, report = _verify(cli, cluster)
    healthy = _node(report, "healthy")["nccl"]
    hardware = NodeHardware("H100", "nvswitch", 8)
    row = expected_for(hardware)
    assert isinstance(row, Expectation)
    assert healthy["expected_reason"] == (
        f"{row.reason(hardware)}; `nvidia-smi nvlink -s`: 8 GPUs x 18 of 18 NVLinks active at 26.562 GB/s"
    )
    twelve = _node(report, "twelve-links")["nccl"]["expected_reason"]
    assert twelve.endswith("; `nvidia-smi nvlink -s`: 8 GPUs x 12 of 18 NVLinks active at 26.562 GB/s")
    assert _node(report, "at-95")["nccl"]["expected_reason"] == row.reason(
        hardware
    )  # its output lists no link
    assert "https://github.com/NVIDIA/nccl-tests/issues/212" in healthy["expected_reason"]
    assert healthy["transport"] == "P2P/CUMEM"
