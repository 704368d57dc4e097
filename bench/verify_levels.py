"""What the proof levels cost: `gpuctl verify --level smi|cuda|nccl` on 1,000 simulated GPU nodes
(8 H100 GPUs on NVSwitch each), each level against a fresh sim in its own process, the levels taking
turns between rounds. Figures only, no assertions.

    python bench/verify_levels.py [--nodes 1000] [--pod-start 2] [--rounds 1] [--concurrency 32]

Per level: wall time, client CPU, pods and API requests per node, and the requests per pod of each
kind, to show that a level adds only its extra pods' own requests (create, follow, log, delete) and no
per-node reads. The machine's speed (a fixed pure-Python loop) is printed beside the times.
"""

from __future__ import annotations

import argparse
import os

from sim_access import SimAccess
from sim_memory import loop_speed_s
from verify_scale import REPO, Run, fresh_sim, run_verify

LEVELS = ("smi", "cuda", "nccl")
GPU_NODE = {"gpuProduct": "NVIDIA-H100-80GB-HBM3", "interconnect": "nvswitch"}


def by_kind(run: Run) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for (verb, resource, subresource, _), count in run.requests.items():
        key = f"{verb} {resource}{'/' + subresource if subresource else ''}"
        kinds[key] = kinds.get(key, 0) + count
    return kinds


def report(level: str, run: Run, nodes: int, base: Run | None) -> None:
    requests = sum(run.requests.values())
    print(
        f"--level {level}: exit {run.exit_code}, {run.nodes_verified} GPU nodes ({run.failing} failing), "
        f"wall {run.wall_s:.2f} s, client CPU {run.cpu_s:.2f} s, peak RSS {run.rss_mb:.0f} MB, "
        f"sim CPU {run.sim_cpu_s:.2f} s"
    )
    pods = run.pods_created
    print(f"  pods per node {pods / nodes:.2f}, requests per node {requests / nodes:.2f} ({requests} in all)")
    if pods:
        per_pod = ", ".join(f"{kind} {count / pods:.2f}" for kind, count in sorted(by_kind(run).items()))
        print(f"  requests per pod, by kind: {per_pod}")
    if base is not None and pods > base.pods_created:
        extra = (requests - sum(base.requests.values())) / (pods - base.pods_created)
        smi_per_pod = sum(base.requests.values()) / max(base.pods_created, 1)
        print(
            f"  requests per extra pod over smi: {extra:.2f} "
            f"(smi's requests per pod, its reads included: {smi_per_pod:.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pod-start", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    print(
        f"machine speed: fixed loop {loop_speed_s():.3f} s; "
        f"load {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    for round_index in range(args.rounds):
        runs: dict[str, Run] = {}
        for level in LEVELS if round_index % 2 == 0 else LEVELS[::-1]:
            with fresh_sim(args.nodes, args.pod_start, GPU_NODE) as (kubeconfig, record):
                runs[level] = run_verify(
                    REPO,
                    kubeconfig,
                    SimAccess.from_kubeconfig(kubeconfig),
                    record.pid,
                    args.concurrency,
                    None,
                    "json",
                    ("--level", level, "--timeout", "600"),
                )
        for level in LEVELS:
            report(level, runs[level], args.nodes, None if level == "smi" else runs["smi"])
    print(f"machine speed at end: fixed loop {loop_speed_s():.3f} s")


if __name__ == "__main__":
    main()
