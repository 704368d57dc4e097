"""Wall time of each `gpuctl bootstrap --phase all` phase, bare hosts → proven: prints figures,
asserts nothing.

    sudo python bench/bootstrap_phases.py [--nodes 2] [--gpus 8] [--workdir /tmp/gpuctl-bench]

Brings up fresh (bare) SSH test nodes, serves a simulated cluster whose GPU nodes are backed by
them (`gpuctl sim up --hosts-from`, one CPU-only node beside them), runs `bootstrap --phase all`
twice (the second must change nothing) and prints each phase's wall time, then tears down.
Needs what the host test tier needs (root, debootstrap, systemd-nspawn: .ci/install-host-deps.sh).
Also, with no root: `--cluster-only N` times the cluster phase alone against N simulated GPU nodes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.hosts.nodes when run as a script

from tests.hosts.nodes import down, up  # noqa: E402 - after sys.path

CPU_ONLY: dict[str, Any] = {"podStartSeconds": 0.5, "devicePlugin": "absent", "nodes": [{"name": "cpu-0"}]}


def gpuctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, check=False
    )


def run_all(inventory: Path, kubeconfig: Path) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    result = gpuctl(
        "bootstrap", "--phase", "all", "-i", str(inventory), "--kubeconfig", str(kubeconfig), "-o", "json"
    )
    elapsed = time.perf_counter() - started
    report = json.loads(result.stdout)
    if result.returncode != 0:
        print(f"bootstrap exited {result.returncode}: {result.stderr.strip()[:500]}")
    return elapsed, report


def describe(elapsed: float, report: dict[str, Any]) -> str:
    phases = ", ".join(f"{p['name']} {p['duration_s']:.1f}s" for p in report["phases"])
    hosts = report["hosts"]
    changed = sum(host["changed"] for host in hosts)
    writes = (report["cluster"] or {}).get("writes")
    return (
        f"{elapsed:.1f}s wall ({phases}); hosts changed={changed}, cluster writes={writes}, ok={report['ok']}"
    )


def bench_hosts(nodes: int, gpus: int, workdir: Path) -> None:
    inventory = workdir / "hosts.yml"
    scenario = workdir / "scenario.yaml"
    kubeconfig = workdir / "sim.kubeconfig"
    scenario.write_text(yaml.safe_dump(CPU_ONLY))
    up(nodes=nodes, gpus=gpus, inventory=inventory)
    try:
        started = gpuctl(
            "sim", "up", "--detach", "--scenario", str(scenario), "--hosts-from", str(inventory),
            "--kubeconfig", str(kubeconfig),
        )  # fmt: skip
        if started.returncode != 0:
            raise SystemExit(started.stderr)
        print(f"{nodes} bare host(s) x {gpus} GPUs, bootstrap --phase all:")
        print("  first run: " + describe(*run_all(inventory, kubeconfig)))
        print("  no-op run: " + describe(*run_all(inventory, kubeconfig)))
    finally:
        gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))
        down(inventory)


def bench_cluster_only(count: int, workdir: Path) -> None:
    gpu = {"name": "gpu-{i}", "count": count, "gpus": 8, "labels": {"nvidia.com/gpu.count": "8"}}
    scenario = workdir / "cluster.yaml"
    scenario.write_text(yaml.safe_dump({**CPU_ONLY, "nodes": [*CPU_ONLY["nodes"], gpu]}))
    kubeconfig = workdir / "cluster.kubeconfig"
    if gpuctl(
        "sim", "up", "--detach", "--scenario", str(scenario), "--kubeconfig", str(kubeconfig)
    ).returncode:
        raise SystemExit("sim up failed")
    try:
        for label in ("first run", "no-op run"):
            started = time.perf_counter()
            result = gpuctl("bootstrap", "--phase", "cluster", "--kubeconfig", str(kubeconfig), "-o", "json")
            elapsed = time.perf_counter() - started
            cluster = json.loads(result.stdout)["cluster"]
            ready = sum(node["ready"] for node in cluster["nodes"])
            print(
                f"cluster phase, {count} GPU nodes, {label}: {elapsed:.2f}s, "
                f"{ready} ready, {cluster['writes']} writes"
            )
    finally:
        gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument(
        "--cluster-only", type=int, default=0, help="time the cluster phase on N sim GPU nodes"
    )
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gpuctl-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.cluster_only:
        bench_cluster_only(args.cluster_only, workdir)
    else:
        bench_hosts(args.nodes, args.gpus, workdir)


if __name__ == "__main__":
    main()
