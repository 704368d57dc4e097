"""nvidia-smi captured on real machines (drivers 418-610, Linux and Windows, MIG on and off)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.diagnose.scan import find_all
from gpuctl.nvidia_smi_parse import driver_version_field, parse_nvidia_smi

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ITEMS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "nvidia-smi.yaml").read_text(encoding="utf-8"))


def _text(item: dict[str, Any]) -> str:
    return (CORPUS / item["file"]).read_text(encoding="utf-8")


def test_corpus_spans_models_drivers_and_systems() -> None:
    assert len(ITEMS) >= 25
    assert {item["format"] for item in ITEMS} == {"table", "list", "xml"}
    assert {"linux", "windows"} <= {item["os"] for item in ITEMS}
    majors = {int(item["driver"].split(".")[0]) for item in ITEMS}
    assert min(majors) <= 470
    assert max(majors) >= 610
    assert any(item["expect"].get("mig") for item in ITEMS)


@pytest.mark.parametrize("item", ITEMS, ids=[item["id"] for item in ITEMS])
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


@pytest.mark.parametrize("item", ITEMS, ids=[item["id"] for item in ITEMS])
def test_healthy_capture_raises_no_alarm(item: dict[str, Any]) -> None:
    assert [d.signature_id for d in find_all(_text(item))] == []


def test_driver_610_names_kmd_version_and_590_does_not() -> None:
    new = CORPUS / "nvidia-smi" / "linux-nvidia-geforce-rtx-2080-super-610.57.04.help-query-gpu-head.txt"
    old = CORPUS / "nvidia-smi" / "linux-nvidia-h100-80gb-hbm3-590.48.01.help-query-gpu-head.txt"
    assert driver_version_field(new.read_text(encoding="utf-8")) == "kmd_version"
    assert driver_version_field(old.read_text(encoding="utf-8")) == "driver_version"


def test_garbage_is_not_nvidia_smi() -> None:
    with pytest.raises(ValueError, match="unexpected"):
        parse_nvidia_smi("Failed to initialize NVML: Unknown Error\n")
    with pytest.raises(ValueError, match="not nvidia-smi XML"):
        parse_nvidia_smi("<?xml version='1.0'?><other/>")
