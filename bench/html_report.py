"""Benchmark verify's HTML page and CTRF report at fleet size: a simulated cluster of 5,000 GPU
nodes (1% with a driver/library mismatch, 1% with an unhealthy GPU) in its own process, one
`gpuctl verify -o json` run against it, then the page and the CTRF report made from that document.

Prints the page's size (bytes, gzipped bytes, bytes per node), the time to render it and the
CTRF report, and the machine's speed (a fixed pure-Python loop) beside the absolute times.
No assertions: figures only.

    python bench/html_report.py [--nodes 5000] [--keep FILE]   (--keep: write the page there)
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from sim_access import SimAccess
from sim_memory import loop_speed_s
from verify_scale import wait_for_plugins

from gpuctl.report.ctrf import to_ctrf
from gpuctl.report.html_page import to_html
from gpuctl.sim.server.process import start_detached, stop_detached


def scenario(nodes: int) -> dict[str, object]:
    faulty = max(1, nodes // 100)
    return {
        "podStartSeconds": 0.5,
        "devicePlugin": "installed",
        "nodes": [
            {"name": "gpu-{i}", "count": nodes - 2 * faulty, "gpus": 8},
            {"name": "mismatch-{i}", "count": faulty, "gpus": 8, "host": {"driver": "mismatch"}},
            {"name": "unhealthy-{i}", "count": faulty, "gpus": 8, "unhealthyGpus": 1},
        ],
    }


def verify_document(kubeconfig: Path) -> dict[str, object]:
    run = subprocess.run(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(kubeconfig), "-o", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode not in (0, 1):
        raise SystemExit(f"gpuctl verify exited {run.returncode}: {run.stderr[-2000:]}")
    document: dict[str, object] = json.loads(run.stdout)
    return document


def timed(label: str, work: object) -> object:
    started = time.perf_counter()
    value = work() if callable(work) else work
    print(f"{label}: {time.perf_counter() - started:.3f} s")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--keep", type=Path, help="also write the page to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        scenario_file = Path(folder) / "scenario.yaml"
        scenario_file.write_text(yaml.safe_dump(scenario(args.nodes)))
        kubeconfig = Path(folder) / "kubeconfig"
        start_detached(scenario_file, kubeconfig)
        try:
            wait_for_plugins(SimAccess.from_kubeconfig(kubeconfig), args.nodes)
            document = verify_document(kubeconfig)
        finally:
            stop_detached(kubeconfig)
    nodes = len(document["nodes"])  # type: ignore[arg-type]
    print(f"machine: fixed pure-Python loop {loop_speed_s():.3f} s")
    page = str(timed("render HTML page", lambda: to_html(document, generated_at="bench")))
    timed("render CTRF report", lambda: json.dumps(to_ctrf(document, stop_ms=0)))
    size = len(page.encode())
    packed = len(gzip.compress(page.encode()))
    print(f"page: {nodes} nodes, {size:,} bytes ({size / 1e6:.1f} MB, {size / nodes:.0f} B/node)")
    print(f"page gzipped: {packed:,} bytes")
    if args.keep:
        args.keep.write_text(page, encoding="utf-8")


if __name__ == "__main__":
    main()
