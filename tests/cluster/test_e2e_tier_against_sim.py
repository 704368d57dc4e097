"""The opt-in e2e tier is real code: run it against a simulated cluster standing in for one."""

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = {
    "devicePlugin": "installed",
    "podStartSeconds": 0.05,
    "nodes": [
        {"name": "cpu-0"},
        {"name": "gpu-{i}", "count": 2, "gpus": 4},
        {"name": "gpu-bad-0", "gpus": 8, "host": {"driver": "mismatch", "toolkit": "configured"}},
    ],
}


def run_e2e_tier(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "e2e")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_e2e_tier_passes_against_a_cluster(sim: Callable[..., Any]) -> None:
    cluster = sim(SCENARIO)
    env = {**os.environ, "GPUCTL_E2E_KUBECONFIG": str(cluster.kubeconfig)}
    result = run_e2e_tier(env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_e2e_tier_is_skipped_without_a_cluster() -> None:
    env = {key: value for key, value in os.environ.items() if key != "GPUCTL_E2E_KUBECONFIG"}
    result = run_e2e_tier(env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 skipped" in result.stdout
