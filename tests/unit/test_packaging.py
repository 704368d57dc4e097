"""The wheel carries everything gpuctl reads at run time, so `pip install .` works from any folder."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("gpuctl-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_ships_playbooks_templates_and_the_default_scenario(wheel_names: set[str]) -> None:
    shipped = {
        "gpuctl/sim/scenarios/default.yaml",
        "gpuctl/schemas/verify.v1.schema.json",
        "gpuctl/schemas/status.v1.schema.json",
        "gpuctl/playbooks/site.yml",
        "gpuctl/playbooks/roles/nvidia_driver/defaults/main.yml",
        "gpuctl/templates/nvidia-device-plugin.yaml.j2",
        "gpuctl/py.typed",
    }
    assert shipped <= wheel_names


def test_every_playbook_and_template_file_is_shipped(wheel_names: set[str]) -> None:
    for folder in ("playbooks", "templates"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert f"gpuctl/{path.relative_to(ROOT).as_posix()}" in wheel_names


def test_every_gpuctl_module_is_shipped(wheel_names: set[str]) -> None:
    """Sub-packages (gpuctl/sim/server, api, runtime ...) need an __init__.py to be found and shipped."""
    for path in (ROOT / "gpuctl").rglob("*.py"):
        assert path.relative_to(ROOT).as_posix() in wheel_names
