"""`gpuctl sim up/down` as a user runs them: subprocesses, kubeconfig, sidecar, errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gpuctl.sim.server.process import pid_alive, sidecar_path


def gpuctl(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def node_names(kubeconfig: Path) -> list[str]:
    from kubernetes import client

    from gpuctl.kube.client import load_api_client

    return [node.metadata.name for node in client.CoreV1Api(load_api_client(kubeconfig)).list_node().items]


def test_up_detach_then_down(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text("nodes:\n  - name: gpu-{i}\n    count: 3\n    gpus: 8\n", encoding="utf-8")
    kubeconfig = tmp_path / "kubeconfig"
    up = gpuctl("sim", "up", "--scenario", scenario, "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.returncode == 0, up.stderr
        assert "serving at https://127.0.0.1:" in up.stdout
        assert node_names(kubeconfig) == ["gpu-0", "gpu-1", "gpu-2"]
        record = json.loads(sidecar_path(kubeconfig).read_text())
        again = gpuctl("sim", "up", "--scenario", scenario, "--kubeconfig", kubeconfig, "--detach")
        assert again.returncode == 2
        assert "already running" in again.stderr
    finally:
        down = gpuctl("sim", "down", "--kubeconfig", kubeconfig)
    assert down.returncode == 0, down.stderr
    assert not sidecar_path(kubeconfig).exists()
    assert not pid_alive(record["pid"])


def test_up_without_scenario_serves_the_builtin_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    up = gpuctl("sim", "up", "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.returncode == 0, up.stderr
        names = node_names(kubeconfig)
        assert any(name.startswith("cpu-") for name in names)
        assert any(name.startswith("gpu-") for name in names)
    finally:
        gpuctl("sim", "down", "--kubeconfig", kubeconfig)


def test_foreground_up_stops_on_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuctl", "sim", "up", "--kubeconfig", str(kubeconfig)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not sidecar_path(kubeconfig).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert node_names(kubeconfig)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert not sidecar_path(kubeconfig).exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("nodes:\n  - name: gpu\n    gpus: -1\n", "nodes[0].gpus: must be >= 0"),
        ("nodes: [\n", "line "),
        ("devicePlugin: sometimes\n", "devicePlugin: must be one of absent, installed"),
    ],
)
def test_invalid_scenario_exits_2_naming_the_field(
    tmp_path: Path, cli: Any, content: str, message: str
) -> None:
    scenario = tmp_path / "bad.yaml"
    scenario.write_text(content, encoding="utf-8")
    result = cli("sim", "up", "--scenario", scenario, "--kubeconfig", tmp_path / "kc", "--detach")
    assert result.exit_code == 2
    assert message in result.stderr
    assert str(scenario) in result.stderr
    assert "Traceback" not in result.output
    assert not (tmp_path / "kc").exists()


def test_missing_scenario_file(tmp_path: Path, cli: Any) -> None:
    result = cli("sim", "up", "--scenario", tmp_path / "absent.yaml", "--kubeconfig", tmp_path / "kc")
    assert result.exit_code == 2
    assert "scenario file not found" in result.stderr
    assert "Traceback" not in result.output


def test_down_without_a_sim(tmp_path: Path, cli: Any) -> None:
    result = cli("sim", "down", "--kubeconfig", tmp_path / "kc")
    assert result.exit_code == 0  # a second `down` is not an error
    assert "no simulated cluster recorded" in result.stderr
    assert "nothing to stop" in result.stderr


def test_down_with_a_stale_record(tmp_path: Path, cli: Any) -> None:
    kubeconfig = tmp_path / "kc"
    finished = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    )
    sidecar_path(kubeconfig).write_text(
        json.dumps({"pid": int(finished.stdout), "url": "http://127.0.0.1:1"})
    )
    result = cli("sim", "down", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0
    assert "was not running" in result.stderr
    assert not sidecar_path(kubeconfig).exists()
    assert "Traceback" not in result.output
