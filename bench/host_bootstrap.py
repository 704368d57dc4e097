"""Wall time of `gpuctl bootstrap --phase host` on real SSH test nodes: prints figures, asserts nothing.

    sudo python bench/host_bootstrap.py [--gpus 8] [--sizes 1,4] [--noop-runs 3] [--top 8] [--workdir DIR]

For each size: bring up fresh (bare) test nodes, time `gpuctl preflight` and a full host bootstrap.
Then time the no-op re-run (which must report changed=0) --noop-runs times per size, the sizes
taking turns (1, 4, then 4, 1, ...) so that every ratio compares runs from the same minutes of this
noisy machine. List the costliest tasks of each size's last no-op and each host's time in tasks,
and tear the nodes down. Ends with the figures of issue 27 (medians of the no-op runs): the 1-node
no-op and its ratio to the 8 s target (a ratio above 1 misses it), and 4 vs 1, reported without a
target (issue 27 retired issue 11's 1.5 x), all from this one run, with the lowest 4-vs-1 ratio
this machine could show for the work measured (the 4-node no-op's CPU seconds spread over
every CPU).

Each bootstrap is timed as a user runs it: the `gpuctl bootstrap --phase host -o json` command in a
process of its own, its start included (from gpuctl's bytecode, as every run after a user's first).
Each run also prints the host phase's own time from that JSON (`duration_s`: ansible-runner and
ansible-playbook, without the command's start), and 4 vs 1 is given for both.

The test nodes share this machine's CPUs with Ansible and with whatever else runs here, so each
no-op run also prints the CPU seconds it cost: the nodes' (their cgroups' cpu.stat, every process of
the node, sshd included) and the controller's (the gpuctl command, ansible-playbook and its workers).
On real hosts each node's share runs on its own CPUs; here it competes with the controller.
Needs what the host test tier needs (root, debootstrap, systemd-nspawn: .ci/install-host-deps.sh).
"""

from __future__ import annotations

import argparse
import compileall
import itertools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.hosts.nodes when run as a script

from gpuctl.core.preflight import run_preflight  # noqa: E402 - after sys.path
from gpuctl.hosts.runner import RUN_IDENT  # noqa: E402 - after sys.path
from tests.hosts.nodes import down, up  # noqa: E402 - after sys.path

NOOP_TARGET_S = 8.0  # issue 27: host bootstrap no-op re-run, 1 node
TASK_EVENTS = ("playbook_on_task_start", "playbook_on_handler_task_start")
MARK_EVENTS = (*TASK_EVENTS, "playbook_on_play_start", "playbook_on_stats")


@dataclass(frozen=True)
class SizeFigures:
    nodes: int
    full_s: float
    noop_runs: tuple[float, ...]  # the command's wall time
    phase_runs: tuple[float, ...]  # the host phase's own time (its JSON's duration_s)
    noop_cpu_runs: tuple[float, ...]  # CPU seconds of each no-op run: the nodes' and the controller's

    @property
    def noop_s(self) -> float:
        return statistics.median(self.noop_runs)

    @property
    def phase_s(self) -> float:
        return statistics.median(self.phase_runs)

    @property
    def noop_cpu_s(self) -> float:
        return statistics.median(self.noop_cpu_runs)


@dataclass(frozen=True)
class CpuSeconds:
    nodes: float  # every process of every test node
    controller: float  # this process and the children it waited for (ansible-playbook, its workers)


def node_cgroups(inventory: Path) -> list[Path]:
    """The cgroup2 directories `up` made for the nodes (recorded in its state file)."""
    state = json.loads((inventory.parent / f"{inventory.stem}.nodes" / "state.json").read_text())
    paths = [Path(item["path"]) for item in state["resources"] if item["kind"] == "cgroup"]
    return [path for path in paths if (path / "cpu.stat").is_file()]


def cpu_now(cgroups: list[Path]) -> CpuSeconds:
    nodes_usec = 0
    for cgroup in cgroups:
        for line in (cgroup / "cpu.stat").read_text().splitlines():
            key, value = line.split()
            if key == "usage_usec":
                nodes_usec += int(value)
    mine = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return CpuSeconds(nodes_usec / 1e6, sum(usage.ru_utime + usage.ru_stime for usage in mine))


def timed_bootstrap(inventory: Path, *, keep_artifacts: bool = False) -> tuple[float, dict[str, Any]]:
    """The command's wall time and its JSON report."""
    command = [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "--inventory", str(inventory)]
    command += ["-o", "json"] + (["--keep-artifacts"] if keep_artifacts else [])
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    try:
        return wall, json.loads(done.stdout)
    except ValueError:
        problem = done.stderr.strip()[-500:]
        sys.exit(f"gpuctl bootstrap exited {done.returncode} without a JSON report: {problem}")


def describe(report: dict[str, Any]) -> str:
    changed = sum(host["changed"] for host in report["hosts"])
    problems = "; ".join(task["message"] for task in report["failed_tasks"][:2]) or report["error"]
    verdict = "ok" if report["ok"] else f"FAILED ({problems})"
    return f"{verdict}, changed={changed}, host phase {report['duration_s']:.1f} s"


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


def host_busy(artifacts_dir: Path) -> dict[str, tuple[int, float]]:
    """Per host: how many task results it returned and the seconds its workers spent on them."""
    events_dir = artifacts_dir / "artifacts" / RUN_IDENT / "job_events"
    busy: dict[str, tuple[int, float]] = {}
    for path in events_dir.glob("*.json"):
        data = json.loads(path.read_text()).get("event_data", {})
        if data.get("host") and data.get("duration") is not None and "task" in data:
            count, seconds = busy.get(data["host"], (0, 0.0))
            busy[data["host"]] = (count + 1, seconds + float(data["duration"]))
    return busy


def print_costs(nodes: int, artifacts_dir: Path | None, top: int) -> None:
    if artifacts_dir is None or top <= 0:
        return
    costs = task_costs(artifacts_dir)
    busy = host_busy(artifacts_dir)
    shutil.rmtree(artifacts_dir, ignore_errors=True)
    total = sum(seconds for seconds, _ in costs)
    print(f"{nodes} node(s): no-op re-run runs {len(costs)} tasks, {total:.1f} s in all; costliest:")
    for seconds, name in costs[:top]:
        print(f"    {seconds:5.2f} s  {name}")
    print(f"{nodes} node(s): per host, task results and seconds from worker start to result:")
    for host, (count, seconds) in sorted(busy.items()):
        print(f"    {host}: {count} results, {seconds:5.2f} s")


def prepare(nodes: int, gpus: int, inventory: Path) -> float:
    """Bring up the nodes, run preflight and the full host bootstrap; the bootstrap's wall time."""
    start = time.perf_counter()
    up(nodes=nodes, gpus=gpus, inventory=inventory, log=lambda _: None)
    print(f"{nodes} node(s): test nodes up in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    preflight = run_preflight(inventory_path=inventory)
    print(f"{nodes} node(s): preflight {time.perf_counter() - start:.2f} s (ok={preflight.ok})")
    full_s, report = timed_bootstrap(inventory)
    print(f"{nodes} node(s): full host bootstrap {full_s:.1f} s ({describe(report)})")
    return full_s


@dataclass(frozen=True)
class NoopRun:
    wall_s: float  # the command's
    phase_s: float  # the host phase's (its JSON's duration_s)
    cpu_s: float  # the nodes' and the controller's
    artifacts: Path | None


def timed_noop(nodes: int, inventory: Path, run: int, *, keep_artifacts: bool) -> NoopRun:
    cgroups = node_cgroups(inventory)
    before = cpu_now(cgroups)
    noop_s, report = timed_bootstrap(inventory, keep_artifacts=keep_artifacts)
    after = cpu_now(cgroups)
    nodes_cpu, controller_cpu = after.nodes - before.nodes, after.controller - before.controller
    print(
        f"{nodes} node(s): no-op re-run {run}: {noop_s:.1f} s ({describe(report)}); CPU s: nodes "
        f"{nodes_cpu:.2f}, controller {controller_cpu:.2f}; load {load_average()}"
    )
    artifacts = Path(report["artifacts_dir"]) if report["artifacts_dir"] else None
    return NoopRun(noop_s, report["duration_s"], nodes_cpu + controller_cpu, artifacts)


def bench(sizes: list[int], gpus: int, workdir: Path, top: int, runs_wanted: int) -> dict[int, SizeFigures]:
    inventories = {size: workdir / f"bench-{size}" / "hosts.yml" for size in sizes}
    started: list[Path] = []
    try:
        full = {}
        for size, inventory in inventories.items():
            inventory.parent.mkdir(parents=True, exist_ok=True)
            started.append(inventory)
            full[size] = prepare(size, gpus, inventory)
        runs: dict[int, list[NoopRun]] = {size: [] for size in sizes}
        for run in range(1, runs_wanted + 1):
            for size in sizes if run % 2 else sizes[::-1]:
                last = run == runs_wanted
                runs[size].append(timed_noop(size, inventories[size], run, keep_artifacts=last))
        for size in sizes:
            print_costs(size, runs[size][-1].artifacts, top)
    finally:
        for inventory in started:
            down(inventory, log=lambda _: None)
    return {
        size: SizeFigures(
            size,
            full[size],
            tuple(run.wall_s for run in runs[size]),
            tuple(run.phase_s for run in runs[size]),
            tuple(run.cpu_s for run in runs[size]),
        )
        for size in sizes
    }


def print_targets(figures: dict[int, SizeFigures]) -> None:
    print("issue 27 figures (ratio = figure / target; at most 1 meets the target):")
    if 1 in figures:
        noop = figures[1].noop_s
        ratio = noop / NOOP_TARGET_S
        print(
            f"  host no-op re-run, 1 node: {noop:5.1f} s  target <= {NOOP_TARGET_S:.0f} s   ratio {ratio:.2f}"
            f"  (runs {spread(figures[1])})"
        )
    if 1 in figures and 4 in figures:
        scale = figures[4].noop_s / figures[1].noop_s
        print(f"  host no-op re-run, 4 vs 1: {scale:5.2f} x   (no target)")
        print(f"    (4 nodes: runs {spread(figures[4])})")
        phase_scale = figures[4].phase_s / figures[1].phase_s
        print(
            f"    (the host phase alone, without the command's start: 1 node {figures[1].phase_s:.1f} s,"
            f" 4 nodes {figures[4].phase_s:.1f} s, {phase_scale:.2f} x)"
        )
        # The nodes run on this machine's CPUs too: the 4-node no-op cannot take less than its CPU
        # seconds spread over every CPU, which bounds the ratio this machine can show from below.
        cpus = os.cpu_count() or 1
        floor = figures[4].noop_cpu_s / cpus
        print(
            f"    (4 nodes: {figures[4].noop_cpu_s:.1f} CPU s a no-op, nodes and controller, on {cpus} CPUs:"
            f" at least {floor:.1f} s, so 4 vs 1 {floor / figures[1].noop_s:.2f} x at best on this machine)"
        )
    for size in sorted(figures):
        print(f"  full host bootstrap, {size} node(s): {figures[size].full_s:5.1f} s  (no target)")


def spread(figures: SizeFigures) -> str:
    return ", ".join(f"{seconds:.1f}" for seconds in figures.noop_runs) + f" s; median {figures.noop_s:.1f} s"


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg()) + f" on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--sizes", default="1,4", help="comma-separated node counts")
    parser.add_argument("--noop-runs", type=int, default=3, help="no-op re-runs per size (median reported)")
    parser.add_argument("--top", type=int, default=8, help="costliest no-op tasks to list (0: none)")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gpuctl-bench-"))
    # A user's runs after the first start gpuctl from its bytecode; a shell with
    # PYTHONDONTWRITEBYTECODE set would make every timed run compile it again.
    compileall.compile_dir(ROOT / "gpuctl", quiet=1)
    print(f"load average at start: {load_average()}")
    sizes = [int(part) for part in args.sizes.split(",")]
    figures = bench(sizes, args.gpus, workdir, args.top, max(1, args.noop_runs))
    print(f"load average at end: {load_average()}")
    print_targets(figures)


if __name__ == "__main__":
    main()
