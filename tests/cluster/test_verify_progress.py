"""verify shows live progress on a terminal, and nothing extra when its streams are pipes."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from typing import Any

from tests.polling import wait_until


def _cluster(sim: Any) -> Any:
    scenario = {
        "podStartSeconds": 1.5,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": 3, "gpus": 8}],
    }
    cluster = sim(scenario)
    wait_until(lambda: set(cluster.allocatable_gpus().values()) == {8}, "GPUs advertised")
    return cluster


def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def test_progress_on_a_terminal(sim: Any) -> None:
    cluster = _cluster(sim)
    controller, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    process = subprocess.Popen(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(cluster.kubeconfig)],
        stdout=subprocess.PIPE,
        stderr=terminal,
        env=env,
    )
    os.close(terminal)
    shown = _read_all(controller).decode(errors="replace")
    stdout, _ = process.communicate(timeout=60)
    os.close(controller)
    assert process.returncode == 0, shown
    assert "3 pod(s) on 3 node(s)" in shown
    assert "3 created" in shown
    assert "done" in shown
    assert "verify:" not in stdout.decode()


def test_nothing_extra_when_piped(sim: Any) -> None:
    cluster = _cluster(sim)
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(cluster.kubeconfig)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "verify:" not in done.stdout
