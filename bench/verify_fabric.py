"""What `gpuctl verify --level fabric` costs: rounds, pods and wall time on N simulated 8 x H100
NVSwitch nodes with 8 x 400G InfiniBand each, healthy and with one node whose NIC trained at a
quarter of its speed (`nicsSlow: 1`, which NCCL's lines do not show: the group is split until that
node is named). Each case against a fresh sim in its own process. Figures only, no assertions.

    python bench/verify_fabric.py [--nodes 64 1000] [--pod-start 0.5] [--concurrency 32]

Each size runs first at --level nccl (the levels fabric includes), the baseline: what the fabric
level adds is the difference. Per case: exit code, the fabric level's rounds (the most any group
took), pods created in all (the nvidia-smi, cuda and nccl rounds' one per node each, then the
fabric rounds' workers and launchers), the failing nodes, and wall time; the machine's speed (a
fixed pure-Python loop) is printed beside the times.
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

from sim_access import SimAccess
from sim_memory import loop_speed_s
from verify_scale import REPO, wait_for_plugins

from gpuctl.sim.server.process import start_detached, stop_detached

HGX = {"gpus": 8, "gpuProduct": "NVIDIA-H100-80GB-HBM3", "interconnect": "nvswitch"}
IB_400G = {"fabric": "ib", "nicsPerNode": 8, "linkGbps": 400}


def scenario(nodes: int, pod_start: float, slow_node: int | None) -> dict[str, Any]:
    groups: list[dict[str, Any]] = [{"name": "gpu-{i}", "count": nodes - (slow_node is not None), **HGX}]
    if slow_node is not None:
        groups.append({"name": "gpu-slow", **HGX, "nicsSlow": 1})
    return {
        "podStartSeconds": pod_start,
        "podRunSeconds": 0.1,
        "devicePlugin": "installed",
        "network": IB_400G,
        "nodes": [*groups, {"name": "cpu-{i}", "count": 3}],
    }


def run_case(nodes: int, pod_start: float, concurrency: int, *, slow: bool, level: str = "fabric") -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scenario_file, kubeconfig = Path(tmp) / "scenario.json", Path(tmp) / "kubeconfig"
        scenario_file.write_text(
            json.dumps(scenario(nodes, pod_start, 0 if slow else None)), encoding="utf-8"
        )
        start_detached(scenario_file, kubeconfig)
        try:
            wait_for_plugins(SimAccess.from_kubeconfig(kubeconfig), nodes)
            command = [
                sys.executable,
                "-m",
                "gpuctl",
                "verify",
                "--kubeconfig",
                str(kubeconfig),
                "-o",
                "json",
            ]
            command += ["--level", level, "--timeout", "600", "--concurrency", str(concurrency)]
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, check=False, cwd=REPO)
            wall = time.perf_counter() - started
        finally:
            stop_detached(kubeconfig)
    report = json.loads(done.stdout)
    rounds = max((node.get("fabric") or {}).get("rounds", 0) for node in report["nodes"])
    failing = [node["name"] for node in report["nodes"] if not node["ok"]]
    case = "one slow node" if slow else "healthy"
    print(
        f"{nodes} nodes, {case}, --level {level}: exit {done.returncode}, fabric rounds {rounds}, "
        f"pods {report['pods_created']} ({report['pods_created'] / nodes:.2f} per node), "
        f"failing {failing}, wall {wall:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[64, 1000])
    parser.add_argument("--pod-start", type=float, default=0.5)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    print(
        f"machine speed: fixed loop {loop_speed_s():.3f} s; "
        f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    for nodes in args.nodes:
        # the levels before fabric, as a baseline: what fabric adds is the difference
        run_case(nodes, args.pod_start, args.concurrency, slow=False, level="nccl")
        for slow in (False, True):
            run_case(nodes, args.pod_start, args.concurrency, slow=slow)


if __name__ == "__main__":
    main()
