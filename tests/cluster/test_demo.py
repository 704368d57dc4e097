"""`gpuctl demo` end to end, as a new user runs it: a subprocess, the console script's entry point."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from tests.interrupt import with_sigint_default

GPUCTL = [sys.executable, "-m", "gpuctl"]


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    completed = subprocess.run(
        [*GPUCTL, "demo"], capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "Traceback" not in output
    assert "$ gpuctl bootstrap --phase cluster --no-taint" in output
    assert "DaemonSet kube-system/nvidia-device-plugin-daemonset  created" in output
    assert "5/6 GPU node(s) ready" in output  # gpu-notoolkit-0 never gets its GPUs, and says why
    assert "$ gpuctl taint-gpu-nodes" in output
    assert "6 node(s), 6 changed, 6 write(s)" in output
    assert "6 node(s), 0 changed, 0 write(s)" in output  # the idempotent second run
    assert "$ gpuctl status" in output
    assert "$ gpuctl verify" in output
    # The diagnosis of the two broken nodes of the built-in scenario.
    assert "driver/library version mismatch" in output
    assert "nvidia-ctk runtime configure" in output
    assert "demo finished: 4 GPU node(s) proven, 2 diagnosed (gpu-mismatch-0, gpu-notoolkit-0)" in output
    assert output.rstrip().endswith("simulated cluster stopped")


def test_demo_with_a_scenario_file_and_a_bad_one(tmp_path: Path) -> None:
    scenario = tmp_path / "small.yaml"
    scenario.write_text(yaml.safe_dump({"podStartSeconds": 0.05, "devicePlugin": "installed",
                                        "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4}]}))  # fmt: skip
    good = subprocess.run([*GPUCTL, "demo", "--scenario", str(scenario)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert "demo finished: 2 GPU node(s) proven, 0 diagnosed (none)" in good.stdout

    scenario.write_text(yaml.safe_dump({"nodes": [{"name": "gpu-0", "gpus": -1}]}))
    bad = subprocess.run([*GPUCTL, "demo", "--scenario", str(scenario)], capture_output=True, text=True,
                         timeout=60, check=False)  # fmt: skip
    assert bad.returncode == 2
    assert "nodes[0].gpus" in bad.stderr
    assert "Traceback" not in bad.stdout + bad.stderr


def test_demo_interrupted_stops_the_cluster(tmp_path: Path) -> None:
    # A slow nvidia-smi keeps the demo in its verify step long enough to interrupt it there.
    scenario = tmp_path / "slow.yaml"
    slow = {"podStartSeconds": 0.05, "podRunSeconds": 30, "devicePlugin": "installed",
            "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4}]}  # fmt: skip
    scenario.write_text(yaml.safe_dump(slow))
    process = subprocess.Popen(
        with_sigint_default([*GPUCTL, "demo", "--scenario", str(scenario)]), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"},
    )  # fmt: skip
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("$ gpuctl verify"):
            break
    process.send_signal(signal.SIGINT)
    rest, errors = process.communicate(timeout=60)
    output = "".join(lines) + rest + errors
    assert process.returncode == 130, output
    assert "interrupted: simulated cluster stopped" in output
    assert "Traceback" not in output
