"""Real vectorAdd and all_reduce_perf output (tests/corpus/workloads.yaml): gpuctl reads it, and its
formatters write the same lines, so the simulated cluster prints what real nodes print."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.cuda_workload import format_vector_add, parse_vector_add
from gpuctl.diagnose.scan import find_all
from gpuctl.nccl_tests import format_device, format_row, parse_all_reduce

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "workloads.yaml").read_text(encoding="utf-8"))
VECTOR_ADD = [item for item in ITEMS if item["kind"] == "vectoradd"]
ALL_REDUCE = [item for item in ITEMS if item["kind"] == "all_reduce_perf"]


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
    assert [format_row(row) for row in run.rows] == row_lines


@pytest.mark.parametrize("item", ITEMS, ids=[item["id"] for item in ITEMS])
def test_healthy_workload_output_raises_no_alarm(item: dict[str, Any]) -> None:
    assert [d.signature_id for d in find_all(_text(item))] == []
