"""The expected all-reduce bandwidth per GPU family and interconnect, looked up from node labels."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from gpuctl.diagnose import signature_of
from gpuctl.diagnose.scan import find_all
from gpuctl.nccl_expectations import (
    INTERCONNECTS,
    PASS_FRACTION,
    TABLE,
    Expectation,
    Interconnect,
    NodeHardware,
    UnknownExpectation,
    expected_busbw,
    expected_for,
    gpu_family,
    low_bandwidth_hint,
    nvls_capable,
    ring_figure,
)
from gpuctl.nccl_tests import all_reduce_rows


@pytest.mark.parametrize(
    ("product", "family"),
    [
        ("NVIDIA-H100-80GB-HBM3", "H100"), ("NVIDIA-H100-NVL", "H100"), ("NVIDIA-H200", "H200"),
        ("NVIDIA-A100-SXM4-80GB", "A100"), ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "A100"),
        ("Tesla-T4", "T4"), ("NVIDIA-L4", "L4"), ("NVIDIA-L40S", "L40S"), ("NVIDIA-A10G", "A10G"),
        ("NVIDIA-B200", "B200"), ("NVIDIA-GB200", "GB200"), ("Tesla-V100-SXM2-16GB", "V100"),
        ("NVIDIA-GeForce-RTX-4090", None), ("", None),
    ],
)  # fmt: skip
def test_family_from_the_product_label(product: str, family: str | None) -> None:
    assert gpu_family(product) == family


def test_an_8_gpu_h100_nvswitch_node_is_judged_by_the_nvls_figure() -> None:
    found = expected_busbw("NVIDIA-H100-80GB-HBM3", "nvswitch")
    assert isinstance(found, Expectation)
    assert (found.busbw_gbps, found.minimum_gbps, found.algorithm, found.gpus) == (480.0, 384.0, "NVLS", (8,))
    assert found.source == "https://github.com/NVIDIA/nccl-tests/issues/212"
    ring = ring_figure(NodeHardware("H100", "nvswitch", 8))
    assert ring is not None
    assert (ring.busbw_gbps, ring.algorithm) == (370.0, "Ring")
    assert ring.busbw_gbps < found.minimum_gbps  # a node that lost NVLS fails on bandwidth too


@pytest.mark.parametrize(
    ("hardware", "figure", "algorithm"),
    [
        (NodeHardware("H100", "nvswitch", 8), 480.0, "NVLS"),
        (NodeHardware("H100", "nvswitch", 7), 460.0, "NVLS"),
        (NodeHardware("H100", "nvswitch", 5), 420.0, "NVLS"),
        (NodeHardware("H100", "nvswitch", 4), 365.0, "NVLS"),
        (NodeHardware("H100", "nvswitch", 2), 370.0, "Ring"),  # NCCL turns NVLS off on 2 GPUs
        (NodeHardware("H200", "nvswitch", 8), 475.0, "NVLS"),
        (NodeHardware("A100", "nvswitch", 8), 230.0, "Ring"),
        (NodeHardware("B200", "nvswitch", 8), 830.0, ""),
        (NodeHardware("GB200", "nvswitch", 4), 680.0, "Ring"),
        (NodeHardware("GB200", "nvswitch", 72), 834.0, ""),
        (NodeHardware("H100", "nvlink", 2), 115.0, "Ring"),
        (NodeHardware("V100", "nvlink", 8), 129.0, ""),  # a DGX-1-shaped hybrid cube-mesh
        (NodeHardware("H100", "pcie", 8), 28.0, "Ring"),
        (NodeHardware("H100", "pcie", 4), 35.0, "Ring"),
    ],
    ids=lambda value: value.describe() if isinstance(value, NodeHardware) else str(value),
)
def test_each_configuration_gets_its_own_figure(
    hardware: NodeHardware, figure: float, algorithm: str
) -> None:
    found = expected_for(hardware)
    assert isinstance(found, Expectation)
    assert (found.busbw_gbps, found.algorithm) == (figure, algorithm)
    assert found.mismatch(hardware) == ""
    assert found.reason(hardware).startswith(f"{hardware.describe()}: {figure:g} GB/s busbw measured on ")
    assert found.source in found.reason(hardware)


def test_a_gb200_tray_is_never_judged_by_the_rack_figure() -> None:
    """The 72-GPU NVL72 figure is an NVLink domain across 18 hosts; one 4-GPU tray has its own."""
    tray = NodeHardware("GB200", "nvswitch", 4)
    rack = next(row for row in TABLE if row.family == "GB200" and 72 in row.gpus)
    assert rack.mismatch(tray) == "the figure was measured on 72 GPUs, the node has 4"
    found = expected_for(tray)
    assert isinstance(found, Expectation)
    assert found is not rack
    assert found.busbw_gbps < rack.busbw_gbps


@pytest.mark.parametrize(
    "row", TABLE, ids=lambda row: f"{row.family}-{row.interconnect}-{row.gpus}-{row.algorithm}"
)
def test_every_row_states_its_configuration_and_refuses_any_other(row: Expectation) -> None:
    """Each row says the GPUs, interconnect and algorithm its figure was measured on, judges a node
    of exactly that configuration, and refuses a node of another family, interconnect or count."""
    assert row.source.startswith("https://github.com/"), row
    assert row.note
    assert row.gpus
    assert row.algorithm in ("NVLS", "Ring", "")
    assert row.minimum_gbps == round(row.busbw_gbps * PASS_FRACTION, 1)
    assert re.search(rf"\b{row.gpus[0]}\b", row.measured_on), row.measured_on
    assert {"nvswitch": "NVSwitch", "nvlink": "NVLink", "pcie": "PCIe"}[row.interconnect] in row.measured_on
    if row.algorithm == "":
        assert "default" in row.measured_on  # the source ran NCCL's choice and names none
    for gpus in row.gpus:
        node = NodeHardware(row.family, row.interconnect, gpus)
        assert row.mismatch(node) == ""
        assert row.algorithm != "NVLS" or node.nvls  # an NVLS figure is only for NVLS hardware
    other_count = max(row.gpus) + 1
    assert "measured on" in row.mismatch(NodeHardware(row.family, row.interconnect, other_count))
    other_family = "A100" if row.family != "A100" else "H100"
    assert row.mismatch(NodeHardware(other_family, row.interconnect, row.gpus[0])).startswith(
        "the figure is for"
    )
    other_link: Interconnect = "pcie" if row.interconnect != "pcie" else "nvswitch"
    assert row.mismatch(NodeHardware(row.family, other_link, row.gpus[0])).startswith("the figure is over")


def test_no_two_rows_claim_the_same_configuration() -> None:
    keys = [(row.family, row.interconnect, row.algorithm, gpus) for row in TABLE for gpus in row.gpus]
    assert len(keys) == len(set(keys))
    families = {row.family for row in TABLE}
    assert {"H100", "H200", "A100", "B200", "GB200"} <= families


@pytest.mark.parametrize(
    ("family", "interconnect", "gpus", "capable"),
    [
        ("H100", "nvswitch", 3, True), ("H100", "nvswitch", 2, False), ("A100", "nvswitch", 8, False),
        ("H100", "nvlink", 8, False), ("H100", "pcie", 8, False), ("B200", "nvswitch", 8, True),
        ("GB200", "nvswitch", 4, True), (None, "nvswitch", 8, False),
    ],
)  # fmt: skip
def test_nvls_is_expected_on_hopper_and_blackwell_nvswitch_nodes_of_3_gpus_or_more(
    family: str | None, interconnect: Interconnect, gpus: int, capable: bool
) -> None:
    assert nvls_capable(family, interconnect, gpus) is capable
    assert NodeHardware(family, interconnect, gpus).nvls is capable


def test_an_nvls_row_refuses_a_node_that_cannot_run_nvls() -> None:
    nvls_row = next(
        row for row in TABLE if row.algorithm == "NVLS" and row.family == "H100" and 8 in row.gpus
    )
    two = NodeHardware("H100", "nvswitch", 2)
    assert "measured on" in nvls_row.mismatch(two)
    ring_only = replace(nvls_row, gpus=(2,))
    assert ring_only.mismatch(two).startswith("the figure is NCCL's NVLS")


def test_a_configuration_without_a_figure_says_which_counts_have_one() -> None:
    found = expected_for(NodeHardware("H200", "nvswitch", 4))
    assert isinstance(found, UnknownExpectation)
    assert (
        found.reason
        == "no cited all-reduce figure for 4 x H200 over nvswitch (cited figures measured on 8 GPUs)"
    )
    assert isinstance(expected_for(NodeHardware(None, "pcie", 8)), UnknownExpectation)


def test_an_hgx_node_with_nvlinks_down_falls_below_its_minimum() -> None:
    """The fault the check exists for: NCCL over PCIe instead of NVLink on an H100 HGX node."""
    nvswitch = expected_busbw("NVIDIA-H100-80GB-HBM3", "nvswitch")
    pcie = expected_busbw("NVIDIA-H100-80GB-HBM3", "pcie")
    assert isinstance(nvswitch, Expectation)
    assert isinstance(pcie, Expectation)
    assert all_reduce_rows(8, pcie.busbw_gbps)[-1].busbw_gbps < nvswitch.minimum_gbps
    assert all_reduce_rows(8, nvswitch.busbw_gbps)[-1].busbw_gbps >= nvswitch.minimum_gbps


@pytest.mark.parametrize(
    ("product", "interconnect", "family"),
    [("Tesla-T4", "pcie", "T4"), ("NVIDIA-L4", "nvswitch", "L4"), ("Acme-Accelerator-9000", "pcie", None)],
)
def test_unknown_answers_say_why(product: str, interconnect: str, family: str | None) -> None:
    found = expected_busbw(product, interconnect)  # type: ignore[arg-type]
    assert isinstance(found, UnknownExpectation)
    assert found.family == family
    assert found.reason


@pytest.mark.parametrize("interconnect", INTERCONNECTS)
def test_low_bandwidth_hint_names_the_commands_that_confirm_each_cause(interconnect: str) -> None:
    hint = low_bandwidth_hint(interconnect)  # type: ignore[arg-type]
    assert "LnkSta" in hint
    assert "ACSCtl" in hint
    assert ("nvidia-smi nvlink -s" in hint) is (interconnect != "pcie")
    assert ("nvidia-fabricmanager" in hint) is (interconnect == "nvswitch")


WORKLOAD_HINTS = {
    "gpu.fabric-not-ready": (
        "systemctl status nvidia-fabricmanager",
        "systemctl enable --now nvidia-fabricmanager",
    ),
    "cuda.driver-too-old": ("nvidia-smi", "--cuda-image"),
    "cuda.no-device": ("nvidia-smi -L", "--runtime-class nvidia"),
    "cuda.ecc-uncorrectable": ("nvidia-smi -q -d ECC", "nvidia-smi -r"),
    "cuda.devices-unavailable": ("compute_mode", "nvidia-smi -c DEFAULT"),
    "nccl.p2p-unavailable": ("nvidia-smi topo -p2p r", "ACSCtl", "iommu=pt"),
    "nccl.unhandled-system-error": ("/dev/shm", "NCCL_DEBUG=WARN"),
}


@pytest.mark.parametrize(("signature_id", "commands"), WORKLOAD_HINTS.items())
def test_workload_rows_name_the_confirming_command_and_the_fix(
    signature_id: str, commands: tuple[str, ...]
) -> None:
    row = signature_of(signature_id)  # a table row or a catalogue entry
    assert row is not None
    assert all(command in row.hint for command in commands), row.hint


def test_cuda_error_inside_an_nccl_warning_gets_the_cuda_diagnosis() -> None:
    """NCCL wraps CUDA errors; the CUDA row names the cause, not the generic NCCL one."""
    line = "gpu-0:1:2 [0] init.cc:123 NCCL WARN Cuda failure 'system not yet initialized'"
    assert [d.signature_id for d in find_all(line)] == ["gpu.fabric-not-ready"]


def test_the_expectations_page_lists_every_row_as_the_table_has_it() -> None:
    """docs/nccl-expectations.md: one table line per row, its cells the row's own."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "nccl-expectations.md").read_text(encoding="utf-8")
    lines = [line for line in page.splitlines() if line.startswith("| ") and "<https://" in line]
    expected = [
        f"| {row.family} | {row.interconnect} | {', '.join(map(str, row.gpus))} | "
        f"{row.algorithm or 'NCCL default'} | {row.busbw_gbps:g} | {row.minimum_gbps:g} | "
        f"{row.measured_on} | <{row.source}> |"
        for row in TABLE
    ]
    assert lines == expected
    assert f"passes at {PASS_FRACTION:.0%}".replace("%", " %") in page


def test_the_configuration_is_described_as_people_say_it() -> None:
    assert NodeHardware("H100", "nvswitch", 8).describe() == "8 x H100 on NVSwitch with NVLink SHARP (NVLS)"
    assert NodeHardware("H100", "nvswitch", 2).describe() == "2 x H100 on NVSwitch"
    assert NodeHardware("H100", "nvlink", 2).describe() == "2 x H100 on NVLink bridges"
    assert NodeHardware("A100", "pcie", 3).describe() == "3 x A100 on PCIe only"
    assert NodeHardware(None, "pcie", 4).describe() == "4 x unknown GPU on PCIe only"


def test_unknown_families_say_so_exactly() -> None:
    found = expected_for(NodeHardware(None, "pcie", 8))
    assert isinstance(found, UnknownExpectation)
    assert found.reason == "gpuctl knows no GPU family in the product"
    named = expected_busbw("Acme-Accelerator-9000", "pcie")
    assert isinstance(named, UnknownExpectation)
    assert named.reason == "gpuctl knows no GPU family in the product 'Acme-Accelerator-9000'"
    none_cited = expected_for(NodeHardware("T4", "pcie", 8))
    assert isinstance(none_cited, UnknownExpectation)
    assert none_cited.reason == "no cited all-reduce figure for 8 x T4 over pcie"


def test_a_row_says_why_it_cannot_judge_a_node() -> None:
    row = next(row for row in TABLE if row.family == "A100" and row.interconnect == "nvswitch")
    assert row.mismatch(NodeHardware("H100", "nvswitch", 8)) == "the figure is for A100, the node has H100"
    assert (
        row.mismatch(NodeHardware(None, "nvswitch", 8))
        == "the figure is for A100, the node has an unknown GPU"
    )
    assert (
        row.mismatch(NodeHardware("A100", "pcie", 8))
        == "the figure is over nvswitch, the node's GPUs are on pcie"
    )
    assert (
        row.mismatch(NodeHardware("A100", "nvswitch", 4))
        == "the figure was measured on 8 GPUs, the node has 4"
    )
    ring = next(
        row
        for row in TABLE
        if row.family == "H100" and row.algorithm == "Ring" and row.interconnect == "nvswitch"
    )
    assert (
        ring.mismatch(NodeHardware("H100", "nvswitch", 9))
        == "the figure was measured on 2/3/4/5/6/7/8 GPUs, the node has 9"
    )
