"""The NCCL level's verdict read whole (gpuctl.core.verify.levels.nccl, gpuctl.nccl_expectations):
the message and hint of each branch of the bandwidth judgement, the target a node is held to and
why (the labels, what `nvidia-smi topo -m` showed, --min-busbw), and the hints a user runs. The
all_reduce_perf output is built as tests/unit/test_nccl_level_judgement.py builds it, in the pinned
nccl-tests release's layout."""

from __future__ import annotations

from gpuctl.core.verify.levels.nccl import _size, target_of
from gpuctl.core.verify.model import ProofOptions
from gpuctl.nccl_expectations import (
    NodeHardware,
    UnknownExpectation,
    expected_busbw,
    gpu_family,
    low_bandwidth_hint,
)
from tests.unit.test_nccl_level_judgement import NVLS_RUN, RING_RUN, _judge, _node, _output

H100 = "NVIDIA-H100-80GB-HBM3"
FIGURE = (
    "expected 480 GB/s (8 x H100 over nvswitch, NVLS: https://github.com/NVIDIA/nccl-tests/issues/212), "
    "pass at >= 384 GB/s"
)
MEASURED = "all-reduce bus bandwidth {:.1f} GB/s at 8 GiB on 8 GPUs"
NVLINK_HINT = (
    "on {node}: `nvidia-smi nvlink -s` (inactive links: reset the GPUs with `nvidia-smi -r` or "
    "power-cycle the node; replace the baseboard if they stay down) and `nvidia-smi topo -m` "
    "(NV# between every pair of GPUs); "
)
FABRIC = "`systemctl status nvidia-fabricmanager` (the NVSwitch fabric needs it running); "
PCIE_HINT = (
    "`sudo lspci -vv -d 10de: | grep -e LnkCap -e LnkSta` on {node} (a link trained below its "
    "capability, e.g. "
    "x8 or 8GT/s, is degraded: reseat the card or check the riser); `nvidia-smi topo -m`; PCIe ACS on the "
    "switches or the IOMMU in translated mode forces P2P through the CPU (`sudo lspci -vvv | grep ACSCtl`, "
    "boot with `iommu=pt`, disable ACS in the BIOS)"
)


def test_a_pass_says_the_figure_and_the_mark() -> None:
    check, _ = _judge(_output(400.0, NVLS_RUN))
    assert check.status.value == "pass"
    assert check.id == "nccl.all-reduce"
    assert check.message == f"{MEASURED.format(400.0)}; {FIGURE}"


def test_a_shortfall_says_both_and_hints_the_links_fabric_and_pcie() -> None:
    check, _ = _judge(_output(300.0, NVLS_RUN))
    assert check.status.value == "fail"
    assert check.message == f"{MEASURED.format(300.0)}, below expectation: {FIGURE}"
    assert check.hint == (NVLINK_HINT + FABRIC + "then " + PCIE_HINT).format(node="gpu-0")


def test_ring_where_nvls_was_due_says_so_whole() -> None:
    check, _ = _judge(_output(400.0, RING_RUN))
    assert check.message == (
        f"NCCL ran Ring where NVLS (NVLink SHARP) was expected: {MEASURED.format(400.0)}; {FIGURE}"
    )
    assert check.hint.startswith("NVLink SHARP needs the NVSwitch fabric ready and multicast: on gpu-0 ")
    assert check.hint.endswith("; " + (NVLINK_HINT + FABRIC + "then " + PCIE_HINT).format(node="gpu-0"))


def test_a_node_without_an_interconnect_label_is_not_judged() -> None:
    check, figures = _judge(_output(400.0, NVLS_RUN), node=_node(labels={"nvidia.com/gpu.product": H100}))
    assert check.status.value == "warn"
    assert check.message == (
        f"{MEASURED.format(400.0)}, not judged: "
        "the node has no gpuctl.io/interconnect label (nvswitch|nvlink|pcie)"
    )
    assert check.hint == (
        "pass --min-busbw GBPS (e.g. 80% of a healthy node's figure), or label the node "
        "`kubectl label node gpu-0 gpuctl.io/interconnect=nvswitch` (nvswitch|nvlink|pcie)"
    )
    assert figures is not None
    assert figures.expected_gbps is None
    unknown = {"nvidia.com/gpu.product": "Foo", "gpuctl.io/interconnect": "nvswitch"}
    check, _ = _judge(_output(400.0, NVLS_RUN), node=_node(labels=unknown))
    assert (
        check.message
        == f"{MEASURED.format(400.0)}, not judged: gpuctl knows no GPU family in the product 'Foo'"
    )


def test_the_topology_overrides_a_slower_label_and_says_so() -> None:
    labelled_pcie = _node(labels={"nvidia.com/gpu.product": H100, "gpuctl.io/interconnect": "pcie"})
    target = target_of(labelled_pcie, ProofOptions(), 8, "nvswitch")
    assert (target.minimum_gbps, target.expected_gbps, target.interconnect, target.algorithm) == (
        384.0,
        480.0,
        "nvswitch",
        "NVLS",
    )
    relabel = " (labelled pcie; `nvidia-smi topo -m` shows nvswitch)"
    assert (
        target.source
        == f"8 x H100 over nvswitch{relabel}, NVLS: https://github.com/NVIDIA/nccl-tests/issues/212"
    )
    assert target.reason is not None
    assert target.reason.endswith(relabel)
    same = target_of(_node(), ProofOptions(), 8, "nvswitch")
    assert "labelled" not in same.source
    slower = target_of(_node(), ProofOptions(), 8, "pcie")  # a slower topology does not lower the bar
    assert slower.interconnect == "nvswitch"
    unlabelled = target_of(_node(labels={"nvidia.com/gpu.product": H100}), ProofOptions(), 8, "nvlink")
    assert (unlabelled.minimum_gbps, unlabelled.interconnect) == (None, None)
    assert unlabelled.why_none == (
        "the node has no gpuctl.io/interconnect label (nvswitch|nvlink|pcie); "
        "`nvidia-smi topo -m` shows nvlink"
    )
    assert (
        target_of(
            _node(labels={"nvidia.com/gpu.product": H100, "gpuctl.io/interconnect": "wifi"}), ProofOptions()
        ).interconnect
        is None
    )


def test_min_busbw_is_the_whole_target() -> None:
    target = target_of(_node(), ProofOptions(min_busbw_gbps=250.5))
    assert (target.minimum_gbps, target.expected_gbps, target.source, target.reason) == (
        250.5,
        250.5,
        "--min-busbw",
        "--min-busbw 250.5",
    )
    assert target.interconnect == "nvswitch"


def test_sizes_read_as_all_reduce_perf_sizes() -> None:
    assert (_size(None), _size(1024), _size(2**30 - 1), _size(2**30), _size(3 * 2**29)) == (
        "?",
        "1024 B",
        f"{2**30 - 1} B",
        "1 GiB",
        "1.5 GiB",
    )


def test_the_low_bandwidth_hints_by_interconnect() -> None:
    assert low_bandwidth_hint("pcie") == PCIE_HINT
    assert low_bandwidth_hint("nvswitch") == NVLINK_HINT + FABRIC + "then " + PCIE_HINT
    assert low_bandwidth_hint("nvlink") == NVLINK_HINT + "then " + PCIE_HINT


def test_gpu_families_from_product_labels() -> None:
    assert [gpu_family(p) for p in (H100, "NVIDIA-H100-NVL", "NVIDIA-A100-SXM4-80GB", "NVIDIA-GB200")] == [
        "H100",
        "H100",
        "A100",
        "GB200",
    ]
    assert [gpu_family(p) for p in ("Tesla-V100-SXM2-16GB", "NVIDIA-L40S", "NVIDIA-H200", "NVIDIA-H800")] == [
        "V100",
        "L40S",
        "H200",
        "H800",
    ]
    assert gpu_family("foo") is None
    assert gpu_family("") is None


def test_a_configuration_without_a_cited_figure_says_which_counts_are_cited() -> None:
    assert expected_busbw(H100, "nvlink", 8) == UnknownExpectation(
        "H100",
        "nvlink",
        "no cited all-reduce figure for 8 x H100 over nvlink (cited figures measured on 2 GPUs)",
    )
    row = expected_busbw(H100, "nvswitch", 8)
    assert not isinstance(row, UnknownExpectation)
    assert row.reason(NodeHardware("H100", "nvswitch", 8)) == (
        "8 x H100 on NVSwitch with NVLink SHARP (NVLS): 480 GB/s busbw measured on 8 x H100 SXM on NVSwitch, "
        "NVLS (https://github.com/NVIDIA/nccl-tests/issues/212)"
    )
