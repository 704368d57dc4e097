"""What the gate costs: `gpuctl verify` without and with `--gate` (taint mode, and `--gate-mode
condition`) on simulated GPU nodes, each against a fresh sim in its own process, the variants
taking turns between rounds. Figures only, no assertions.

    python bench/verify_gate.py [--nodes 1000] [--pod-start 2] [--rounds 1] [--concurrency 32]

Per variant: wall time, client CPU, API requests per node and the requests the gate adds per node
by kind: the GPUProven condition is one server-side apply per node (`patch nodes/status`) after one
list of the nodes, and the gate taint writes only the nodes whose verdict changed. The machine's
speed (a fixed pure-Python loop) is printed beside the times.
"""

from __future__ import annotations

import argparse
import os

from sim_access import SimAccess
from sim_memory import loop_speed_s
from verify_levels import by_kind
from verify_scale import REPO, Run, fresh_sim, run_verify

VARIANTS: dict[str, tuple[str, ...]] = {
    "no gate": (),
    "--gate": ("--gate",),
    "--gate --gate-mode condition": ("--gate", "--gate-mode", "condition"),
}


def report(name: str, run: Run, nodes: int, base: Run | None) -> None:
    requests = sum(run.requests.values())
    print(
        f"{name}: exit {run.exit_code}, {run.nodes_verified} GPU nodes ({run.failing} failing), "
        f"wall {run.wall_s:.2f} s, client CPU {run.cpu_s:.2f} s, peak RSS {run.rss_mb:.0f} MB, "
        f"sim CPU {run.sim_cpu_s:.2f} s, requests per node {requests / nodes:.2f}"
    )
    if base is None:
        return
    before, after = by_kind(base), by_kind(run)
    added = {kind: after[kind] - before.get(kind, 0) for kind in after if after[kind] != before.get(kind, 0)}
    shown = ", ".join(f"{kind} {count / nodes:.3f}" for kind, count in sorted(added.items()))
    print(f"  added per node over no gate: {shown}; wall {run.wall_s - base.wall_s:+.2f} s")


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
    names = list(VARIANTS)
    for round_index in range(args.rounds):
        runs: dict[str, Run] = {}
        for name in names if round_index % 2 == 0 else names[::-1]:
            with fresh_sim(args.nodes, args.pod_start) as (kubeconfig, record):
                runs[name] = run_verify(
                    REPO,
                    kubeconfig,
                    SimAccess.from_kubeconfig(kubeconfig),
                    record.pid,
                    args.concurrency,
                    None,
                    "json",
                    VARIANTS[name],
                )
        for name in names:
            report(name, runs[name], args.nodes, None if name == "no gate" else runs["no gate"])
    print(f"machine speed at end: fixed loop {loop_speed_s():.3f} s")


if __name__ == "__main__":
    main()
