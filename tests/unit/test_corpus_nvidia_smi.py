"""nvidia-smi captured on real machines (drivers 418-610, Linux and Windows, MIG on and off): the
default table, `-L`, `-q` text, `-q -x` XML and `--query-gpu` CSV, and what nvidia-smi prints when
it fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.diagnose.scan import find_all
from gpuctl.nvidia_smi import VERIFY_QUERY_FIELDS, parse_query_csv
from gpuctl.nvidia_smi_parse import driver_version_field, parse_nvidia_smi

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "nvidia-smi.yaml").read_text(encoding="utf-8"))
REPORTS = [item for item in ITEMS if item["format"] != "query"]  # what parse_nvidia_smi reads
QUERIES = [item for item in ITEMS if item["format"] == "query"]


def _h200(capture: str) -> Path:
    """One of the captures of an H200 with driver 580.159.04 (see nvidia-smi.yaml)."""
    return CORPUS / "nvidia-smi" / f"linux-nvidia-h200-580.159.04.{capture}"


def _text(item: dict[str, Any]) -> str:
    return (CORPUS / item["file"]).read_text(encoding="utf-8")


def test_corpus_spans_models_drivers_and_systems() -> None:
    assert len(ITEMS) >= 25
    assert {item["format"] for item in ITEMS} == {"table", "list", "q", "xml", "query"}
    assert {"linux", "windows"} <= {item["os"] for item in ITEMS}
    majors = {int(item["driver"].split(".")[0]) for item in ITEMS}
    assert min(majors) <= 470
    assert max(majors) >= 610
    assert any(item["expect"].get("mig") for item in ITEMS)


@pytest.mark.parametrize("item", REPORTS, ids=[item["id"] for item in REPORTS])
def test_capture_parses(item: dict[str, Any]) -> None:
    report = parse_nvidia_smi(_text(item))
    expect = item["expect"]
    assert report.format == item["format"]
    assert len(report.gpus) == expect["gpus"]
    assert [gpu.name for gpu in report.gpus] == expect["names"]
    if "mig_devices" in expect:
        assert report.mig_devices == expect["mig_devices"]
    if "driver" in expect:
        assert (report.driver_version, report.cuda_version) == (expect["driver"], expect["cuda"])
        assert [gpu.memory_total_mib for gpu in report.gpus] == expect["memory_mib"]
        assert [gpu.pci_bus_id for gpu in report.gpus] == expect["bus_ids"]
        assert any(gpu.mig_mode == "Enabled" for gpu in report.gpus) is expect["mig"]


@pytest.mark.parametrize("item", QUERIES, ids=[item["id"] for item in QUERIES])
def test_query_capture_parses(item: dict[str, Any]) -> None:
    assert parse_query_csv(_text(item), tuple(item["fields"])) == item["expect"]["rows"]


def test_the_termination_log_holds_what_stdout_would_have() -> None:
    """`-f FILE` (the verification pod's /dev/termination-log): the file is the stdout of the same
    query without it, byte for byte; that run's stdout was empty."""
    assert _h200("query-verify-f.txt").read_bytes() == _h200("query-verify.txt").read_bytes()


@pytest.mark.parametrize("item", ITEMS, ids=[item["id"] for item in ITEMS])
def test_healthy_capture_raises_no_alarm(item: dict[str, Any]) -> None:
    assert [d.signature_id for d in find_all(_text(item))] == []


def test_driver_610_names_kmd_version_and_590_does_not() -> None:
    new = CORPUS / "nvidia-smi" / "linux-nvidia-geforce-rtx-2080-super-610.57.04.help-query-gpu-head.txt"
    old = CORPUS / "nvidia-smi" / "linux-nvidia-h100-80gb-hbm3-590.48.01.help-query-gpu-head.txt"
    assert driver_version_field(new.read_text(encoding="utf-8")) == "kmd_version"
    assert driver_version_field(old.read_text(encoding="utf-8")) == "driver_version"


def test_driver_580_names_driver_version() -> None:
    help_text = _h200("help-query-gpu-head.txt").read_text(encoding="utf-8")
    assert driver_version_field(help_text) == "driver_version"


@pytest.mark.parametrize(
    ("capture", "signatures"), [("no-devices", ["smi.no-devices"]), ("invalid-field", [])]
)
def test_real_error_output_is_not_a_gpu_list(capture: str, signatures: list[str]) -> None:
    """`nvidia-smi -i 7 ...` on a one-GPU host (exit 6), and a field nvidia-smi does not know (exit 2)."""
    text = _h200(f"{capture}.txt").read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="expected 6 comma-separated values, got 1"):
        parse_query_csv(text, VERIFY_QUERY_FIELDS)
    with pytest.raises(ValueError, match="unexpected nvidia-smi -L line"):
        parse_nvidia_smi(text)
    assert [d.signature_id for d in find_all(text)] == signatures


def test_garbage_is_not_nvidia_smi() -> None:
    with pytest.raises(ValueError, match="unexpected"):
        parse_nvidia_smi("Failed to initialize NVML: Unknown Error\n")
    with pytest.raises(ValueError, match="not nvidia-smi XML"):
        parse_nvidia_smi("<?xml version='1.0'?><other/>")


def test_explain_recognises_pasted_q_text(capsys: pytest.CaptureFixture[str]) -> None:
    """`gpuctl explain FILE` on `nvidia-smi -q` of an H200 with five MIG devices, through the CLI."""
    from gpuctl.cli.main import run

    capture = CORPUS / "nvidia-smi" / "linux-nvidia-h200-mig-590.48.01.q.txt"
    assert run(["explain", str(capture), "-o", "json"]) == 0
    smi = json.loads(capsys.readouterr().out)["nvidia_smi"]
    assert (smi["format"], smi["driver_version"], smi["mig_devices"]) == ("q", "590.48.01", 5)
    assert [(gpu["name"], gpu["mig_mode"]) for gpu in smi["gpus"]] == [("NVIDIA H200", "Enabled")]
