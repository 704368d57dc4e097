"""Each row of the NCCL expectation table (gpuctl.nccl_expectations.TABLE) carries its figure with
the configuration it was measured on, its source and its note, field by field: a report that
shows a node's expected figure shows these, and a row whose fields were shuffled would judge a
node by another's measurement."""

from __future__ import annotations

from gpuctl.core.verify.levels.nccl import p2p_paths
from gpuctl.nccl_expectations import (
    PCIE_SHARE,
    TABLE,
    Expectation,
    NodeHardware,
    UnknownExpectation,
    expected_busbw,
    pcie_derivation,
    pcie_expectation,
    pcie_share,
    ring_figure,
)


def test_the_h100_nvswitch_row_field_by_field() -> None:
    row = expected_busbw("NVIDIA-H100-80GB-HBM3", "nvswitch", 8)
    assert isinstance(row, Expectation)
    assert row == TABLE[0]
    assert (row.family, row.interconnect, row.busbw_gbps, row.gpus, row.algorithm) == (
        "H100",
        "nvswitch",
        480.0,
        (8,),
        "NVLS",
    )
    assert row.measured_on == "8 x H100 SXM on NVSwitch"
    assert row.source == "https://github.com/NVIDIA/nccl-tests/issues/212"
    assert row.note.startswith("NCCL's maintainer: all-reduce uses NVLink SHARP by default")
    assert row.note.endswith("(https://github.com/NVIDIA/nccl/issues/1455)")
    assert row.derivation == ""


def test_every_measured_row_names_its_configuration_source_and_note() -> None:
    for row in TABLE:
        assert row.source.startswith("https://"), row
        assert isinstance(row.note, str), row
        assert row.note, row
        assert isinstance(row.measured_on, str), row
        assert row.measured_on, row
        assert row.gpus, row
        assert all(isinstance(count, int) and count > 0 for count in row.gpus), row
        assert isinstance(row.busbw_gbps, float), row
        assert row.busbw_gbps > 0, row
        assert row.interconnect in ("nvswitch", "nvlink", "pcie"), row
        assert row.algorithm in ("NVLS", "Ring", ""), row


NOTE = (
    "derived, not measured: no healthy node's all-reduce on these GPUs is cited; 8 GPUs on PCIe Gen5 "
    "without NVLink reached 28 GB/s (35 GB/s on 4); NCCL's maintainer: on PCI systems the CPU and memory "
    "bandwidth bound it, not the GPU"
)


def test_a_pcie_figure_is_derived_from_the_slowest_link_field_by_field() -> None:
    four = pcie_expectation("L40S", 4, 4, 16)
    assert four == Expectation(
        "L40S",
        "pcie",
        17.5,  # 31.5 GB/s per direction x 0.555 (35 of a Gen5 x16 link's 63)
        "https://github.com/NVIDIA/nccl/issues/1639",
        NOTE,
        (4,),
        "Ring",
        "derived, not measured: 4 x L40S on PCIe Gen4 x16",
        "derived from PCIe Gen4 x16 (31.5 GB/s per direction) x 0.555, the share of a Gen5 x16 link "
        "the cited 4 GPUs reached (35 GB/s)",
    )
    eight = pcie_expectation("L40S", 8, 5, 16, (8,))
    assert eight.busbw_gbps == 28.0  # the cited figure itself, on the cited link
    assert eight.measured_on == "derived, not measured: 8 x L40S on PCIe Gen5 x16"
    assert eight.derivation == (
        "derived from PCIe Gen5 x16 (63.0 GB/s per direction) x 0.444, the share of a Gen5 x16 link "
        "the cited 8 GPUs reached (28 GB/s)"
    )
    counted = pcie_expectation("A100", 5, 4, 8, (5, 6, 7, 8))
    assert counted.busbw_gbps == 7.0
    assert counted.gpus == (5, 6, 7, 8)
    assert counted.measured_on == "derived, not measured: 5/6/7/8 x A100 on PCIe Gen4 x8"


def test_the_share_of_the_link_changes_above_four_gpus() -> None:
    assert pcie_share(2) == pcie_share(4) == PCIE_SHARE[4]
    assert pcie_share(5) == pcie_share(8) == PCIE_SHARE[8]
    assert pcie_derivation(4, 16, 4).endswith("the cited 4 GPUs reached (35 GB/s)")
    assert pcie_derivation(4, 16, 5).endswith("the cited 8 GPUs reached (28 GB/s)")
    assert pcie_derivation(3, 8, 2).startswith("derived from PCIe Gen3 x8 (")


def test_a_derived_figure_is_rounded_to_one_decimal() -> None:
    assert pcie_expectation("L4", 2, 3, 16).busbw_gbps == 8.8  # 15.75 GB/s x 0.555 = 8.75...


def test_no_ring_figure_and_no_family() -> None:
    assert ring_figure(NodeHardware("H800", "nvswitch", 8)) is None  # only an NVLS figure is cited
    assert expected_busbw("Foo-GPU", "pcie", 2) == UnknownExpectation(
        None, "pcie", "gpuctl knows no GPU family in the product 'Foo-GPU'"
    )


def test_the_p2p_path_named_from_the_topology_matrix() -> None:
    assert p2p_paths({}) == ""
    assert p2p_paths({(0, 1): "PIX", (0, 2): "PXB", (1, 2): "PIX"}) == (
        "`nvidia-smi topo -m`: GPU pairs over PIX, PXB (P2P over PCIe switches)"
    )
    for cell in ("PHB", "NODE", "SYS"):
        assert p2p_paths({(0, 1): "PIX", (0, 2): cell}) == (
            f"`nvidia-smi topo -m`: GPU pairs over {', '.join(sorted(('PIX', cell)))} (P2P through the CPU)"
        ), cell
