"""Each row of the NCCL expectation table (gpuctl.nccl_expectations.TABLE) carries its figure with
the configuration it was measured on, its source and its note, field by field: a report that
shows a node's expected figure shows these, and a row whose fields were shuffled would judge a
node by another's measurement."""

from __future__ import annotations

from gpuctl.nccl_expectations import TABLE, Expectation, expected_busbw


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
