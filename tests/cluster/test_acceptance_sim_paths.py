"""Acceptance: `gpuctl sim up --kubeconfig` paths a new user types (new folder, a folder, unwritable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SCENARIO = "nodes:\n  - name: gpu-{i}\n    count: 1\n    gpus: 2\n"


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_detached_sim_creates_the_kubeconfig_folder(cli: Any, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "not" / "yet" / "sim.kubeconfig"
    up = cli("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.exit_code == 0, up.output
        assert "server: https://127.0.0.1:" in kubeconfig.read_text(encoding="utf-8")
    finally:
        down = cli("sim", "down", "--kubeconfig", kubeconfig)
    assert down.exit_code == 0, down.output


def test_kubeconfig_that_is_a_folder_exits_2(cli: Any, tmp_path: Path) -> None:
    result = cli("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", tmp_path, "--detach")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.stderr.startswith(f"error: {tmp_path}: --kubeconfig is a directory")
    assert not tmp_path.with_name(tmp_path.name + ".sim.log").exists()


def test_unwritable_kubeconfig_folder_exits_2(cli: Any, tmp_path: Path) -> None:
    kubeconfig = Path("/proc/gpuctl-test/sim.kubeconfig")  # /proc refuses new folders, even to root
    result = cli("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "internal error" not in result.output
    assert str(kubeconfig) in result.stderr.splitlines()[0]
