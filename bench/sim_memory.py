"""The sim's memory over a long run: does its RSS come back down once its watch history expires?

A detached sim of --nodes GPU nodes serves --rounds `gpuctl verify` runs one after another; the
sim's RSS (VmRSS from /proc) is printed after start-up, after each verify, then again after the
history window (store.HISTORY_SECONDS) has passed and a few writes have let the store trim it.
A sim that grew without bound would grow by the same step each round and not come back down.

    python bench/sim_memory.py --nodes 1000 --rounds 4
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

from sim_access import SimAccess

from gpuctl.sim.runtime.store import HISTORY_MIN, HISTORY_SECONDS
from gpuctl.sim.server.process import start_detached, stop_detached

REPO = Path(__file__).resolve().parents[1]


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


def verify(kubeconfig: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(kubeconfig), "-o", "json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        cwd=REPO,
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    print(f"machine: a 2,000,000-step Python loop takes {loop_speed_s():.3f} s; {os.cpu_count()} cores")
    print(f"history: the newest {HISTORY_MIN} changes, beyond them those of the last {HISTORY_SECONDS:g} s")
    with tempfile.TemporaryDirectory() as tmp:
        scenario, kubeconfig = Path(tmp) / "scenario.json", Path(tmp) / "kubeconfig"
        nodes = [{"name": "gpu-{i}", "count": args.nodes, "gpus": 8}]
        scenario.write_text(json.dumps({"podStartSeconds": 0.5, "devicePlugin": "installed", "nodes": nodes}))
        record = start_detached(scenario, kubeconfig)
        sim = SimAccess.from_kubeconfig(kubeconfig)
        try:
            time.sleep(5)  # the device plugin pods start
            print(f"after start-up: {rss_mb(record.pid):.0f} MB")
            for round_index in range(1, args.rounds + 1):
                took = verify(kubeconfig)
                print(f"after verify {round_index} ({took:.1f} s): {rss_mb(record.pid):.0f} MB")
            print(f"waiting {HISTORY_SECONDS + 10:g} s for the history window to pass ...")
            time.sleep(HISTORY_SECONDS + 10)
            with sim.open("/api/v1/nodes?limit=1"):
                print(f"after the window, idle: {rss_mb(record.pid):.0f} MB")
            took = verify(kubeconfig)  # its writes let the store drop the expired history
            print(f"after one more verify ({took:.1f} s): {rss_mb(record.pid):.0f} MB")
        finally:
            stop_detached(kubeconfig)


if __name__ == "__main__":
    main()
