"""Time to ready of `gpuctl bootstrap --phase cluster --stack operator` per GPU node count: prints
figures, asserts nothing.

    python bench/operator_bootstrap.py [--sizes 1,10,100] [--gpus 8] [--workdir DIR]

For each size, a fresh simulated cluster (no device plugin; the sim plays the GPU Operator) and
the real helm of the test extra installing the stand-in gpu-operator chart (tests/charts): the
first run installs the chart and waits until the Operator's validator reports success on every
GPU node and the GPUs are advertised; the second run must change nothing (helm skipped, 0 writes).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.helm when run as a script

from tests.helm import HELM, HELM_MISSING, OPERATOR_CHART  # noqa: E402 - after sys.path

CHART = OPERATOR_CHART


def gpuctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, check=False, env=env
    )


def helm_env(workdir: Path) -> dict[str, str]:
    """helm's caches and config under the bench's folder, not the user's."""
    homes = {
        f"HELM_{name}_HOME": str(workdir / "helm" / name.lower()) for name in ("CACHE", "CONFIG", "DATA")
    }
    return {**os.environ, **homes}


def run_once(kubeconfig: Path, env: dict[str, str], timeout: float) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    result = gpuctl(
        "bootstrap", "--phase", "cluster", "--stack", "operator", "--kubeconfig", str(kubeconfig),
        "--helm", HELM, "--chart", str(CHART), "--timeout", str(timeout), "-o", "json", env=env,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if not result.stdout.strip():
        raise SystemExit(f"bootstrap exited {result.returncode}: {result.stderr.strip()[:500]}")
    return elapsed, json.loads(result.stdout)["cluster"]


def bench_size(count: int, gpus: int, workdir: Path, timeout: float) -> None:
    gpu = {"name": "gpu-{i}", "count": count, "gpus": gpus, "labels": {"nvidia.com/gpu.count": str(gpus)}}
    scenario = workdir / f"operator-{count}.yaml"
    nodes = [{"name": "cpu-0"}, gpu]
    scenario.write_text(yaml.safe_dump({"podStartSeconds": 0.5, "devicePlugin": "absent", "nodes": nodes}))
    kubeconfig = workdir / f"operator-{count}.kubeconfig"
    if gpuctl(
        "sim", "up", "--detach", "--scenario", str(scenario), "--kubeconfig", str(kubeconfig)
    ).returncode:
        raise SystemExit("sim up failed")
    env = helm_env(workdir)
    try:
        for label in ("first run", "no-op run"):
            elapsed, cluster = run_once(kubeconfig, env, timeout)
            ready = sum(node["ready"] for node in cluster["nodes"])
            helm = cluster["helm"] or {}
            print(
                f"{count:>4} GPU node(s), {label}: {elapsed:6.2f}s wall, cluster phase "
                f"{cluster['duration_s']:6.2f}s, {ready}/{len(cluster['nodes'])} ready, "
                f"helm {helm.get('action')}, {cluster['writes']} writes",
                flush=True,
            )
    finally:
        gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,100", help="GPU node counts, comma-separated")
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    if not HELM:
        raise SystemExit(HELM_MISSING)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gpuctl-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    for size in (int(part) for part in args.sizes.split(",")):
        bench_size(size, args.gpus, workdir, args.timeout)


if __name__ == "__main__":
    main()
