"""The sim's memory over a long run: does its RSS stay put while it serves verify after verify?

A detached sim of --nodes GPU nodes serves --rounds `gpuctl verify` runs one after another; the
sim's RSS (VmRSS from /proc) is printed after start-up and after each verify, then the growth from
the first verify to the last, with what each pod lifecycle (one verification pod, its events and
its changes in the watch history) left behind. Python keeps freed memory for reuse, so the growth
is what counts, not whether RSS comes back down. The target: the last verify ends within 30 MB of
the RSS after the first, about 10 KB kept per pod lifecycle.

Events live an hour by default (kube-apiserver's --event-ttl), so every verify's events of a short
run are still alive at its end; --event-ttl S sets the scenario's eventTTLSeconds to see the
sim once they expire.

    python bench/sim_memory.py [--nodes 1000] [--rounds 4] [--event-ttl S]
        [--source DIR ...]   also measure the sim of another source tree, in the same run
                             (before/after: `git worktree add /tmp/before <commit>`)
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

REPO = Path(__file__).resolve().parents[1]
TARGET_GROWTH_MB = 30.0
# After a verify, the sim finishes deleting its pods (their grace period) before RSS is read:
# what it keeps is measured, not the work still in flight.
SETTLE_SECONDS = 5.0


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def loop_speed_s() -> float:
    """The machine's speed: a fixed pure-Python loop, printed beside the absolute times."""
    started = time.perf_counter()
    total = 0
    for index in range(2_000_000):
        total += index % 7
    return time.perf_counter() - started


def gpuctl(source: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """`gpuctl ARGS` as the tree at `source` runs it."""
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args],
        capture_output=True,
        check=False,
        cwd=source,
        env={**os.environ, "PYTHONPATH": str(source)},
    )


def measure(source: Path, nodes: int, rounds: int, event_ttl: float | None) -> list[float]:
    """The sim's RSS after start-up and after each verify, in MB."""
    top: dict[str, object] = {"podStartSeconds": 0.5, "devicePlugin": "installed"}
    if event_ttl is not None:
        top["eventTTLSeconds"] = event_ttl
    with tempfile.TemporaryDirectory() as tmp:
        scenario, kubeconfig = Path(tmp) / "scenario.json", Path(tmp) / "kubeconfig"
        scenario.write_text(json.dumps({**top, "nodes": [{"name": "gpu-{i}", "count": nodes, "gpus": 8}]}))
        started = gpuctl(
            source, "sim", "up", "--detach", "--scenario", str(scenario), "--kubeconfig", str(kubeconfig)
        )
        if started.returncode != 0:
            raise SystemExit(f"sim up failed: {started.stderr.decode(errors='replace')}")
        pid = int(json.loads(kubeconfig.with_name(kubeconfig.name + ".sim.json").read_text())["pid"])
        try:
            time.sleep(5)  # the device plugin pods start
            sizes = [rss_mb(pid)]
            print(f"{source}: after start-up {sizes[0]:.0f} MB")
            for round_index in range(1, rounds + 1):
                began = time.perf_counter()
                verified = gpuctl(source, "verify", "--kubeconfig", str(kubeconfig), "-o", "json")
                took = time.perf_counter() - began
                time.sleep(SETTLE_SECONDS)
                sizes.append(rss_mb(pid))
                outcome = f"{took:.1f} s, exit {verified.returncode}"
                print(f"  after verify {round_index} ({outcome}): {sizes[-1]:.0f} MB")
        finally:
            gpuctl(source, "sim", "down", "--kubeconfig", str(kubeconfig))
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--event-ttl", type=float, default=None, help="the scenario's eventTTLSeconds")
    parser.add_argument("--source", type=Path, action="append", default=[])
    args = parser.parse_args()
    print(f"machine: a 2,000,000-step Python loop takes {loop_speed_s():.3f} s; {os.cpu_count()} cores")
    ttl = "the default (3600 s)" if args.event_ttl is None else f"{args.event_ttl:g} s"
    print(f"{args.nodes} GPU nodes, {args.rounds} verifies against one sim; events live {ttl}")
    results = {
        source: measure(source, args.nodes, args.rounds, args.event_ttl) for source in [REPO, *args.source]
    }
    for source, sizes in results.items():
        growth = sizes[-1] - sizes[1]
        per_pod_kb = growth * 1024 / (args.nodes * max(1, args.rounds - 1))
        print(
            f"{source}: growth from verify 1 to verify {args.rounds}: {growth:+.0f} MB "
            f"({growth / TARGET_GROWTH_MB:.2f}x the {TARGET_GROWTH_MB:g} MB target), "
            f"{per_pod_kb:.1f} KB per pod lifecycle"
        )


if __name__ == "__main__":
    main()
