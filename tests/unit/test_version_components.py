"""`gpuctl version [--components]`: gpuctl's version and every pin, each read from its one home."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpuctl import __version__
from gpuctl.cli.main import run

REPO = Path(__file__).resolve().parents[2]
# Where gpuctl's own code and shipped files live (docs and tests may quote the pins).
SHIPPED = ("gpuctl", "playbooks", "templates")
COMPONENT_KEYS = {"name", "version", "artifact", "layer", "pinned_in", "setting", "override", "used_by"}


def gpuctl(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out


def components(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    code, out = gpuctl(capsys, "version", "--components", "-o", "json")
    assert code == 0
    document = json.loads(out)
    assert document["schema"] == "gpuctl.version/v1"
    assert document["version"] == __version__
    return list(document["components"])


def test_version_prints_what_the_version_flag_prints(capsys: pytest.CaptureFixture[str]) -> None:
    code, plain = gpuctl(capsys, "version")
    assert code == 0
    assert plain == f"gpuctl {__version__}\n"
    assert gpuctl(capsys, "-V") == (0, plain)
    code, out = gpuctl(capsys, "version", "-o", "json")
    assert code == 0
    assert json.loads(out) == {"schema": "gpuctl.version/v1", "version": __version__}


def test_components_name_every_pin(capsys: pytest.CaptureFixture[str]) -> None:
    listed = components(capsys)
    assert [item["name"] for item in listed] == [
        "nvidia-driver",
        "nvidia-container-toolkit",
        "k8s-device-plugin",
        "gpu-operator",
        "dra-driver-nvidia-gpu",
        "verify-image",
        "cuda-sample-image",
        "nccl-tests-image",
    ]
    assert all(set(item) == COMPONENT_KEYS for item in listed)
    by_name = {item["name"]: item for item in listed}
    assert by_name["k8s-device-plugin"]["artifact"] == "nvcr.io/nvidia/k8s-device-plugin:v0.20.1"
    assert by_name["nvidia-container-toolkit"]["version"] == "1.20.0-1"
    assert by_name["nvidia-driver"]["version"] == "580 (branch)"
    assert by_name["gpu-operator"]["version"] == "v26.7.2"
    assert by_name["dra-driver-nvidia-gpu"]["version"] == "0.5.1"
    assert by_name["cuda-sample-image"]["artifact"].startswith("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-")
    assert by_name["nccl-tests-image"]["override"] == "verify --nccl-image"


def test_each_pin_lives_in_the_file_it_names_and_nowhere_else(capsys: pytest.CaptureFixture[str]) -> None:
    shipped = [path for folder in SHIPPED for path in (REPO / folder).rglob("*") if path.is_file()]
    texts = {path: path.read_text(errors="replace") for path in shipped if path.suffix != ".pyc"}
    for item in components(capsys):
        value = item["version"].split()[0]
        home = REPO / item["pinned_in"]
        setting = re.escape(item["setting"])
        assignment = re.compile(rf"^{setting}\s*[:=]\s*\S*{re.escape(value)}", re.MULTILINE)
        assert assignment.search(home.read_text()), f"{item['pinned_in']} does not set {item['setting']}"
        literal = re.compile(rf"[\"':]{re.escape(value)}[\"'\s]")
        holders = sorted(str(path.relative_to(REPO)) for path, text in texts.items() if literal.search(text))
        assert holders == [item["pinned_in"]], f"{item['name']} {value} is also pinned in {holders}"


def test_components_table_shows_where_each_pin_lives(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the wide table, one line per row
    code, out = gpuctl(capsys, "version", "--components")
    assert code == 0
    assert out.startswith(f"gpuctl {__version__}\n")
    for line, name in (("nvidia-container-toolkit", "playbooks/roles/nvidia_container_toolkit"),
                       ("k8s-device-plugin", "gpuctl/defaults.py")):  # fmt: skip
        assert any(line in row and name in row for row in out.splitlines()), out
    code, wide = gpuctl(capsys, "version", "--components", "-o", "wide")
    assert code == 0
    assert "nvcr.io/nvidia/k8s-device-plugin:v0.20.1" in wide
