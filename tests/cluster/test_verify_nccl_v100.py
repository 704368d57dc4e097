"""`gpuctl verify --level nccl` on 8 x V100 SXM2 nodes joined by NVLink2 without NVSwitch (a
DGX-1's hybrid cube-mesh, as AWS p3.16xlarge and Azure NDv2 are built): held to the cited 8 x V100
figure (gpuctl/nccl_expectations.py), a node at that published figure passes, one at 60 % of it
fails naming the figure, and the sim's own V100 node, whose all-reduce it derives from the table,
passes with the row's reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuctl.nccl_expectations import Expectation, NodeHardware, expected_for
from gpuctl.nccl_tests import NcclDevice, all_reduce_rows, format_all_reduce
from gpuctl.sim.runtime.workloads import nccl_info_lines

V100 = {"gpus": 8, "interconnect": "nvlink", "gpuProduct": "Tesla-V100-SXM2-16GB"}
# The source's busbw at its largest size, 128 MiB (the row's figure is this, rounded down).
PUBLISHED_GBPS = 129.14
ROW_SOURCE = "https://github.com/konnase/konnase.github.io/blob/17cd9dfb8fa17e3f9523d06c829b397a63ae94e5/"


def _all_reduce_at(busbw_gbps: float, name: str) -> str:
    """all_reduce_perf output of an 8 x V100 run (ring over NVLink, no NVLS) at `busbw_gbps`."""
    devices = [
        NcclDevice(rank, name, rank, f"0000:{0x4F + rank:02x}:00", "Tesla V100-SXM2-16GB", pid=746)
        for rank in range(8)
    ]
    info = nccl_info_lines(name, 8, nvls_support=False, nvls=False)
    return format_all_reduce(devices, all_reduce_rows(8, busbw_gbps), info_lines=info)


@pytest.fixture
def cluster(sim: Any) -> Any:
    from tests.polling import wait_until

    nodes = [
        {"name": "v100-published", **V100,
         "workloads": {"nccl": {"stdout": _all_reduce_at(PUBLISHED_GBPS, "v100-published")}}},
        {"name": "v100-at-60", **V100,
         "workloads": {"nccl": {"stdout": _all_reduce_at(0.6 * PUBLISHED_GBPS, "v100-at-60")}}},
        {"name": "v100-sim", **V100},
    ]  # fmt: skip
    running = sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": nodes})
    wait_until(lambda: len(running.allocatable_gpus()) == len(nodes), "GPUs advertised")
    return running


def _verify(cli: Any, cluster: Any) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--level", "nccl"])
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout)


def _node(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(node for node in report["nodes"] if node["name"] == name)


def _check(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(check for check in _node(report, name)["checks"] if check["id"] == "nccl.all-reduce")


def test_a_v100_nvlink_node_at_its_published_figure_passes_and_at_60_percent_fails(
    cli: Any, cluster: Any
) -> None:
    code, report = _verify(cli, cluster)
    assert code == 1
    assert {node["name"]: node["ok"] for node in report["nodes"]} == {
        "v100-published": True, "v100-at-60": False, "v100-sim": True,
    }  # fmt: skip
    row = expected_for(NodeHardware("V100", "nvlink", 8))
    assert isinstance(row, Expectation)
    published = _node(report, "v100-published")["nccl"]
    assert published["busbw_gbps"] == pytest.approx(PUBLISHED_GBPS, rel=0.01)
    assert published["expected_gbps"] == row.busbw_gbps == 129.0
    assert ROW_SOURCE in published["expected_reason"]
    assert published["expected_reason"].startswith("8 x V100 on NVLink bridges: 129 GB/s busbw measured on ")
    assert _check(report, "v100-published")["status"] == "pass"

    low = _check(report, "v100-at-60")
    assert low["status"] == "fail"
    assert "below expectation: expected 129 GB/s" in low["message"]
    assert f"pass at >= {row.minimum_gbps:g} GB/s" in low["message"]
    assert "nvidia-smi nvlink -s" in low["hint"]

    # The sim's own V100 node: its all-reduce at the row's figure, over all 6 NVLinks per GPU.
    simulated = _node(report, "v100-sim")["nccl"]
    assert simulated["busbw_gbps"] == pytest.approx(row.busbw_gbps, rel=0.01)
    assert simulated["expected_reason"].startswith(row.reason(NodeHardware("V100", "nvlink", 8)))
    assert cluster.verification_pods() == []
