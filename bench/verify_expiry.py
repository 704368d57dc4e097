"""Benchmark `gpuctl verify` against a sim that expires what a real API server expires: continue
tokens after `listTokenTTLSeconds` (410 Expired) and watches after `watchTTLSeconds` (ended, and a
watch from a compacted version answered 410). Every GPU node must still be proven.

Prints verify's exit code, the nodes proven, the wall time and the requests (lists and watches
beyond verify_scale.py's figures are the re-lists and re-watches), with the machine's speed (a
fixed pure-Python loop) beside the times. No assertions: figures only.

    python bench/verify_expiry.py [--nodes 1000] [--pod-start 2] [--list-token-ttl 1] [--watch-ttl 2]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from sim_access import SimAccess
from sim_memory import loop_speed_s
from verify_scale import REPO, report, run_verify, scenario, wait_for_plugins

from gpuctl.sim.server.process import start_detached, stop_detached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pod-start", type=float, default=2.0)
    parser.add_argument("--list-token-ttl", type=float, default=1.0)
    parser.add_argument("--watch-ttl", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    print(f"machine speed: fixed loop {loop_speed_s():.3f} s; load average {os.getloadavg()[0]:.2f}")
    expiring = {"listTokenTTLSeconds": args.list_token_ttl, "watchTTLSeconds": args.watch_ttl}
    print(f"sim: {args.nodes} GPU nodes, podStartSeconds {args.pod_start:g}, {expiring}")
    with tempfile.TemporaryDirectory() as tmp:
        scenario_file, kubeconfig = Path(tmp) / "scenario.json", Path(tmp) / "kubeconfig"
        scenario_file.write_text(
            json.dumps({**scenario(args.nodes, args.pod_start), **expiring}), encoding="utf-8"
        )
        record = start_detached(scenario_file, kubeconfig)
        try:
            sim = SimAccess.from_kubeconfig(kubeconfig)
            wait_for_plugins(sim, args.nodes)
            run = run_verify(REPO, kubeconfig, sim, record.pid, args.concurrency, None)
        finally:
            stop_detached(kubeconfig)
    report(run, args.nodes)
    proven = run.nodes_verified - run.failing
    print(f"  every GPU node proven: {proven == args.nodes} ({proven} of {args.nodes})")
    print(f"machine speed at end: fixed loop {loop_speed_s():.3f} s")


if __name__ == "__main__":
    main()
