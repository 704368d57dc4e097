"""Real vectorAdd and all_reduce_perf output (tests/corpus/workloads.yaml): gpuctl reads it, and its
formatters write the same lines, so the simulated cluster prints what real nodes print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.cuda_workload import format_vector_add, parse_vector_add
from gpuctl.defaults import NCCL_TESTS_IMAGE
from gpuctl.diagnose.scan import find_all
from gpuctl.nccl_tests import (
    NCCL_TESTS_BY_BUILD,
    PINNED_BANNER,
    PINNED_LAYOUT,
    NcclRow,
    all_reduce_rows,
    format_all_reduce,
    format_device,
    format_row,
    parse_all_reduce,
)

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "workloads.yaml").read_text(encoding="utf-8"))
VECTOR_ADD = [item for item in ITEMS if item["kind"] == "vectoradd"]
ALL_REDUCE = [item for item in ITEMS if item["kind"] == "all_reduce_perf"]
FAILURES = [item for item in ITEMS if item["kind"] == "all_reduce_perf_failure"]


def _text(item: dict[str, Any]) -> str:
    return (CORPUS / str(item["file"])).read_text(encoding="utf-8")


def test_every_capture_is_cited_and_present() -> None:
    assert len({item["id"] for item in ITEMS}) == len(ITEMS)
    for item in ITEMS:
        assert item["source"].startswith("https://github.com/"), item["id"]
        assert (CORPUS / item["file"]).is_file(), item["id"]
    assert any("H100" in item["gpu"] for item in ALL_REDUCE)


@pytest.mark.parametrize("item", VECTOR_ADD, ids=[item["id"] for item in VECTOR_ADD])
def test_vector_add_capture_parses_and_is_what_the_formatter_writes(item: dict[str, Any]) -> None:
    result = parse_vector_add(_text(item))
    assert (result.passed, result.error) == (item["expect"]["passed"], item["expect"]["error"])
    assert format_vector_add() == _text(item)


@pytest.mark.parametrize("item", ALL_REDUCE, ids=[item["id"] for item in ALL_REDUCE])
def test_all_reduce_capture_parses(item: dict[str, Any]) -> None:
    run = parse_all_reduce(_text(item))
    expect = item["expect"]
    assert len(run.devices) == expect["devices"]
    assert sorted({device.name for device in run.devices}) == expect["names"]
    assert len(run.rows) == expect["rows"]
    assert run.largest is not None
    assert run.largest.size_bytes == expect["largest_bytes"]
    assert run.busbw_gbps == expect["busbw_gbps"]
    assert run.avg_busbw_gbps == expect["avg_busbw_gbps"]
    assert run.out_of_bounds == expect["out_of_bounds"]
    assert run.completed
    assert (run.warnings, run.failures) == ((), ())


@pytest.mark.parametrize("item", ALL_REDUCE, ids=[item["id"] for item in ALL_REDUCE])
def test_formatter_writes_the_real_device_and_table_lines(item: dict[str, Any]) -> None:
    """Byte for byte: every device line and table row of the capture, re-formatted from its parse."""
    lines = _text(item).splitlines()
    run = parse_all_reduce(_text(item))
    device_lines = [line for line in lines if line.startswith("#  Rank")]
    row_lines = [line for line in lines if line[:1] == " " and line.split()[0].isdigit()]
    assert [format_device(device) for device in run.devices] == device_lines
    assert [format_row(row, item["layout"]) for row in run.rows] == row_lines


def _pinned_capture() -> dict[str, Any]:
    """The capture of the nccl-tests release the pinned image builds (its tag's build suffix)."""
    build = NCCL_TESTS_IMAGE.rsplit("-", 1)[-1]
    assert build in NCCL_TESTS_BY_BUILD, f"{NCCL_TESTS_IMAGE}: which nccl-tests release does it build?"
    version = NCCL_TESTS_BY_BUILD[build]
    found = [item for item in ALL_REDUCE if item.get("nccl_tests_version") == version]
    assert found, f"no capture of nccl-tests {version} (the pinned image's) in tests/corpus/workloads.yaml"
    return found[0]


def test_the_pinned_image_has_a_capture_of_its_nccl_tests_release() -> None:
    item = _pinned_capture()
    assert item["layout"] == PINNED_LAYOUT
    assert _text(item).splitlines()[0].startswith(f"# nccl-tests version {NCCL_TESTS_BY_BUILD[_build()]} ")
    assert PINNED_BANNER.startswith(f"# nccl-tests version {NCCL_TESTS_BY_BUILD[_build()]} ")


def _build() -> str:
    return NCCL_TESTS_IMAGE.rsplit("-", 1)[-1]


def test_the_simulated_output_is_byte_compatible_with_the_pinned_release() -> None:
    """The formatter re-writes the capture of the pinned release from what it parsed, every line
    from the device list to `# Collective test concluded`, byte for byte (its own banner says the
    pinned image's NCCL, and NCCL's closing lines follow src/common.cu)."""
    item = _pinned_capture()
    real = _text(item).splitlines()
    run = parse_all_reduce(_text(item))
    written = format_all_reduce(run.devices, run.rows, avg_busbw_gbps=run.avg_busbw_gbps).splitlines()
    assert written[1] == real[1]  # "# Collective test starting: all_reduce_perf"
    assert written[3:][: len(real) - 4] == real[3:-1]
    concluded = real.index("# Collective test concluded: all_reduce_perf")
    assert written[concluded] == real[concluded]


def test_the_simulated_banner_and_table_are_the_pinned_layout() -> None:
    rows: tuple[NcclRow, ...] = all_reduce_rows(8, 480.0)
    text = format_all_reduce([], rows)
    real = _text(_pinned_capture()).splitlines()
    header = [line for line in real if line.startswith("#   ") or line.startswith("#       size")]
    assert all(line in text.splitlines() for line in header)
    assert text.splitlines()[2].endswith("validation: 1 graph: 0 unalign: 0")


@pytest.mark.parametrize("item", FAILURES, ids=[item["id"] for item in FAILURES])
def test_a_real_failed_run_is_read_as_failed_with_what_nccl_chose(item: dict[str, Any]) -> None:
    run = parse_all_reduce(_text(item))
    expect = item["expect"]
    assert (len(run.devices), len(run.rows), run.completed) == (expect["devices"], expect["rows"], False)
    assert (run.algorithm, list(run.transports)) == (expect["algorithm"], expect["transports"])
    assert run.failures == (expect["failure"],)
    assert run.warnings[-1] == expect["last_warning"]
    assert expect["diagnosis"] in [d.signature_id for d in find_all(_text(item))]


HEALTHY = [item for item in ITEMS if item not in FAILURES]


@pytest.mark.parametrize("item", HEALTHY, ids=[item["id"] for item in HEALTHY])
def test_healthy_workload_output_raises_no_alarm(item: dict[str, Any]) -> None:
    assert [d.signature_id for d in find_all(_text(item))] == []
