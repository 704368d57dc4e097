"""`gpuctl sim up --kubeconfig` never loses a file it did not write, and `sim down` undoes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

SCENARIO = "nodes:\n  - name: gpu-{i}\n    count: 1\n    gpus: 2\n"
REAL_CLUSTER = """apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: 'https://10.0.0.1:6443'}
contexts:
- name: prod
  context: {cluster: prod, user: admin}
current-context: prod
users:
- name: admin
  user: {token: secret}
"""


def gpuctl(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    return path


def test_up_merges_into_an_existing_kubeconfig_and_down_restores_it(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(REAL_CLUSTER, encoding="utf-8")
    kubeconfig.chmod(0o600)
    up = gpuctl("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.returncode == 0, up.stderr
        assert "merged context gpuctl-sim" in up.stdout
        merged = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))
        assert merged["current-context"] == "gpuctl-sim"
        assert {context["name"] for context in merged["contexts"]} == {"prod", "gpuctl-sim"}
        assert kubeconfig.stat().st_mode & 0o777 == 0o600
        status = gpuctl("status", "--kubeconfig", kubeconfig)
        assert status.returncode == 0, status.stderr
    finally:
        down = gpuctl("sim", "down", "--kubeconfig", kubeconfig)
    assert down.returncode == 0, down.stderr
    assert yaml.safe_load(kubeconfig.read_text(encoding="utf-8")) == yaml.safe_load(REAL_CLUSTER)


def test_up_refuses_a_file_that_is_not_a_kubeconfig(cli: Any, tmp_path: Path) -> None:
    precious = tmp_path / "notes.txt"
    precious.write_text("- my notes\n- more\n", encoding="utf-8")
    result = cli("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", precious, "--detach")
    assert result.exit_code == 2, result.output
    assert "not a kubeconfig; gpuctl will not overwrite it" in result.stderr
    assert precious.read_text(encoding="utf-8") == "- my notes\n- more\n"


def test_down_removes_what_up_wrote_and_a_second_down_is_fine(cli: Any, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "new" / "sim.kubeconfig"
    up = cli("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.exit_code == 0, up.output
        assert f"created the folder {tmp_path / 'new'}" in up.stderr
    finally:
        down = cli("sim", "down", "--kubeconfig", kubeconfig)
    assert down.exit_code == 0, down.output
    assert sorted(path.name for path in kubeconfig.parent.iterdir()) == []
    again = cli("sim", "down", "--kubeconfig", kubeconfig)
    assert again.exit_code == 0, again.output
    assert "nothing to stop" in again.stderr
