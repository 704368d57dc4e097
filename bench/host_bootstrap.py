"""Wall time of `gpuctl bootstrap --phase host` on real SSH test nodes: prints figures, asserts nothing.

    sudo python bench/host_bootstrap.py [--gpus 8] [--sizes 1,4] [--top 8] [--workdir /tmp/gpuctl-bench]

For each size: bring up fresh (bare) test nodes, time a full host bootstrap, then time the no-op
re-run (which must report changed=0) and list its costliest tasks, then tear the nodes down. Also
times `gpuctl preflight`. Ends with the figures of issue 11 and their ratio to the target (a ratio
above 1 misses it), all from this one run; the load average is printed because the test nodes share
this machine's CPUs with Ansible and with whatever else runs here.
Needs what the host test tier needs (root, debootstrap, systemd-nspawn: .ci/install-host-deps.sh).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.hosts.nodes when run as a script

from gpuctl.core.bootstrap import BootstrapResult, run_host_bootstrap  # noqa: E402 - after sys.path
from gpuctl.core.preflight import run_preflight  # noqa: E402 - after sys.path
from gpuctl.hosts.runner import RUN_IDENT  # noqa: E402 - after sys.path
from tests.hosts.nodes import down, up  # noqa: E402 - after sys.path

NOOP_TARGET_S = 8.0  # issue 11: host bootstrap no-op re-run, 1 node
SCALE_TARGET = 1.5  # issue 11: no-op re-run of 4 nodes over that of 1 node
TASK_EVENTS = ("playbook_on_task_start", "playbook_on_handler_task_start")
MARK_EVENTS = (*TASK_EVENTS, "playbook_on_play_start", "playbook_on_stats")


@dataclass(frozen=True)
class SizeFigures:
    nodes: int
    full_s: float
    noop_s: float


def timed_bootstrap(inventory: Path, *, keep_artifacts: bool = False) -> tuple[float, BootstrapResult]:
    start = time.perf_counter()
    result = run_host_bootstrap(inventory_path=inventory, keep_artifacts=keep_artifacts)
    return time.perf_counter() - start, result


def describe(result: BootstrapResult) -> str:
    changed = sum(host.changed for host in result.hosts)
    verdict = "ok" if result.ok else f"FAILED ({'; '.join(task.message for task in result.failed_tasks[:2])})"
    return f"{verdict}, changed={changed}"


def task_costs(artifacts_dir: Path) -> list[tuple[float, str]]:
    """Seconds from each task's start to the next task, play or recap (all hosts), costliest first."""
    events_dir = artifacts_dir / "artifacts" / RUN_IDENT / "job_events"
    events = [json.loads(path.read_text()) for path in events_dir.glob("*.json")]
    marks = [
        (event["counter"], datetime.fromisoformat(event["created"]), event["event"], event["event_data"])
        for event in events
        if event["event"] in MARK_EVENTS
    ]
    marks.sort(key=lambda mark: mark[0])
    costs = [
        ((later - started).total_seconds(), str(data.get("task", "")))
        for (_, started, kind, data), (_, later, _, _) in itertools.pairwise(marks)
        if kind in TASK_EVENTS
    ]
    return sorted(costs, reverse=True)


def print_costs(nodes: int, artifacts_dir: Path | None, top: int) -> None:
    if artifacts_dir is None or top <= 0:
        return
    costs = task_costs(artifacts_dir)
    shutil.rmtree(artifacts_dir, ignore_errors=True)
    total = sum(seconds for seconds, _ in costs)
    print(f"{nodes} node(s): no-op re-run runs {len(costs)} tasks, {total:.1f} s in all; costliest:")
    for seconds, name in costs[:top]:
        print(f"    {seconds:5.2f} s  {name}")


def bench_size(nodes: int, gpus: int, workdir: Path, top: int) -> SizeFigures:
    inventory = workdir / f"bench-{nodes}" / "hosts.yml"
    inventory.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    up(nodes=nodes, gpus=gpus, inventory=inventory, log=lambda _: None)
    print(f"{nodes} node(s): test nodes up in {time.perf_counter() - start:.1f} s")
    try:
        start = time.perf_counter()
        preflight = run_preflight(inventory_path=inventory)
        print(f"{nodes} node(s): preflight {time.perf_counter() - start:.2f} s (ok={preflight.ok})")
        full_s, result = timed_bootstrap(inventory)
        print(f"{nodes} node(s): full host bootstrap {full_s:.1f} s ({describe(result)})")
        noop_s, result = timed_bootstrap(inventory, keep_artifacts=True)
        print(f"{nodes} node(s): no-op re-run {noop_s:.1f} s ({describe(result)})")
        print_costs(nodes, Path(result.artifacts_dir) if result.artifacts_dir else None, top)
    finally:
        down(inventory, log=lambda _: None)
    return SizeFigures(nodes, full_s, noop_s)


def print_targets(figures: dict[int, SizeFigures]) -> None:
    print("issue 11 figures (ratio = figure / target; at most 1 meets the target):")
    if 1 in figures:
        noop = figures[1].noop_s
        ratio = noop / NOOP_TARGET_S
        print(
            f"  host no-op re-run, 1 node: {noop:5.1f} s  target <= {NOOP_TARGET_S:.0f} s   ratio {ratio:.2f}"
        )
    if 1 in figures and 4 in figures:
        scale = figures[4].noop_s / figures[1].noop_s
        ratio = scale / SCALE_TARGET
        print(f"  host no-op re-run, 4 vs 1: {scale:5.2f} x   target <= {SCALE_TARGET} x  ratio {ratio:.2f}")
    for size in sorted(figures):
        print(f"  full host bootstrap, {size} node(s): {figures[size].full_s:5.1f} s  (no target)")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--sizes", default="1,4", help="comma-separated node counts")
    parser.add_argument("--top", type=int, default=8, help="costliest no-op tasks to list (0: none)")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gpuctl-bench-"))
    print(f"load average at start: {load_average()}")
    figures = {}
    for size in (int(part) for part in args.sizes.split(",")):
        figures[size] = bench_size(size, args.gpus, workdir, args.top)
    print(f"load average at end: {load_average()}")
    print_targets(figures)


if __name__ == "__main__":
    main()
