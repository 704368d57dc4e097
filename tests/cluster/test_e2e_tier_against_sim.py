"""The opt-in e2e tier is real code: run it against simulated clusters standing in for real ones.
It must pass on a healthy cluster and fail on a broken one, an empty one, or one that does not
meet the user's expectations."""

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = {
    "devicePlugin": "installed",
    "podStartSeconds": 0.05,
    "nodes": [{"name": "cpu-0"}, {"name": "gpu-{i}", "count": 2, "gpus": 4}],
}
# One GPU node whose driver was upgraded under its device plugin: it advertises GPUs, but
# nvidia-smi fails in every pod there.
BROKEN = {
    **HEALTHY,
    "nodes": [
        *HEALTHY["nodes"],
        {"name": "gpu-bad-0", "gpus": 8, "host": {"driver": "mismatch", "toolkit": "configured"}},
    ],
}
NO_GPU_NODE = {**HEALTHY, "nodes": [{"name": "cpu-0"}]}
E2E_VARIABLES = ("GPUCTL_E2E_KUBECONFIG", "GPUCTL_E2E_EXPECT_NODES", "GPUCTL_E2E_EXPECT_GPUS")


def run_e2e_tier(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in E2E_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(ROOT / "tests" / "e2e")],
        cwd=ROOT,
        env={**env, **variables},
        capture_output=True,
        text=True,
        check=False,
    )


def test_e2e_tier_passes_against_a_healthy_cluster(sim: Callable[..., Any]) -> None:
    cluster = sim(HEALTHY)
    result = run_e2e_tier(
        GPUCTL_E2E_KUBECONFIG=str(cluster.kubeconfig), GPUCTL_E2E_EXPECT_NODES="2", GPUCTL_E2E_EXPECT_GPUS="4"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 passed" in result.stdout


def test_e2e_tier_fails_on_a_broken_gpu_node(sim: Callable[..., Any]) -> None:
    cluster = sim(BROKEN)
    result = run_e2e_tier(GPUCTL_E2E_KUBECONFIG=str(cluster.kubeconfig))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "2 failed, 2 passed" in result.stdout
    assert "gpu-bad-0: nvidia-smi.run" in result.stdout  # the failure names the node and the check
    assert "gpu-bad-0/nvidia-smi.run" in result.stdout


def test_e2e_tier_fails_on_a_cluster_without_gpu_nodes(sim: Callable[..., Any]) -> None:
    cluster = sim(NO_GPU_NODE)
    result = run_e2e_tier(GPUCTL_E2E_KUBECONFIG=str(cluster.kubeconfig))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "verify found no GPU node" in result.stdout


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("GPUCTL_E2E_EXPECT_NODES", "3", "GPUCTL_E2E_EXPECT_NODES=3"),
        ("GPUCTL_E2E_EXPECT_GPUS", "8", "gpu.capacity: capacity 4 nvidia.com/gpu, expected 8"),
    ],
)
def test_e2e_tier_fails_when_the_expectations_are_not_met(
    sim: Callable[..., Any], variable: str, value: str, message: str
) -> None:
    cluster = sim(HEALTHY)
    result = run_e2e_tier(GPUCTL_E2E_KUBECONFIG=str(cluster.kubeconfig), **{variable: value})
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in result.stdout


def test_e2e_tier_is_skipped_without_a_cluster() -> None:
    result = run_e2e_tier()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 skipped" in result.stdout
