"""Bad inventories and narrow terminals found in acceptance runs: no test nodes needed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuctl.cli.main import run
from gpuctl.hosts.events import HostProgress, ProgressState
from gpuctl.package_data import default_driver_branch
from gpuctl.report.bootstrap_progress import COLUMNS, progress_renderable

REPO = Path(__file__).resolve().parents[2]


def write_inventory(tmp_path: Path, host_vars: dict[str, object]) -> Path:
    inventory = tmp_path / "hosts.yml"
    host = {"ansible_host": "127.0.0.1", **host_vars}
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {"node-a": host}}}}}))
    return inventory


@pytest.mark.parametrize("command", [["preflight"], ["bootstrap", "--phase", "host"]])
@pytest.mark.parametrize("port", ["abc", -1, 70000])
def test_bad_ansible_port_names_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], port: object
) -> None:
    inventory = write_inventory(tmp_path, {"ansible_port": port})
    code = run([*command, "--inventory", str(inventory)])
    err = capsys.readouterr().err
    assert code == 2
    first = err.splitlines()[0]
    assert str(inventory) in first
    assert "ansible_port" in first
    assert "node-a" in first
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [["preflight"], ["bootstrap", "--phase", "host"]])
def test_driver_version_off_the_default_branch_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    # gpuctl_driver_branch is left at the role default: the pin must still be checked against it.
    inventory = write_inventory(tmp_path, {"gpuctl_driver_version": "570.86.15-1"})
    code = run([*command, "--inventory", str(inventory)])
    err = capsys.readouterr().err
    assert code == 2
    assert "gpuctl_driver_version" in err.splitlines()[0]
    assert f"'{default_driver_branch()}'" in err
    assert "Traceback" not in err


def test_default_driver_branch_matches_the_role_default() -> None:
    defaults = yaml.safe_load((REPO / "playbooks/roles/nvidia_driver/defaults/main.yml").read_text())
    assert str(defaults["gpuctl_driver_branch"]) == default_driver_branch()


def test_limit_matching_nothing_prints_only_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inventory = write_inventory(tmp_path, {})
    code = run(["preflight", "--inventory", str(inventory), "--limit", "no-such-host"])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err.startswith("error: ")
    assert "no-such-host" in captured.err
    assert "WARNING" not in captured.err + captured.out


@pytest.mark.parametrize("width", [80, 100])
def test_progress_keeps_host_names_and_counts_on_a_narrow_terminal(width: int) -> None:
    from rich.console import Console

    state = ProgressState()
    for name in ("gpu-node-0", "gpu-node-1"):
        state.add_host(name)
    state.hosts["gpu-node-0"] = HostProgress(
        "gpu-node-0", current_task="Container runtime | import the drop-ins from config.toml " * 2, ok=171
    )
    console = Console(width=width, force_terminal=False)
    with console.capture() as capture:
        console.print(progress_renderable(state, width=width))
    lines = capture.get().splitlines()
    header = next(line for line in lines if line.startswith("HOST"))
    assert header.split() == list(COLUMNS)
    assert any(line.startswith("gpu-node-0 ") and " 171 " in line for line in lines)
    assert any(line.startswith("gpu-node-1 ") for line in lines)
    assert all(len(line.rstrip()) <= width for line in lines)
