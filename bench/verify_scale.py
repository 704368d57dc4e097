"""Benchmark `gpuctl verify` as a new user runs it: 5,000 GPU nodes, podStartSeconds 2, the
simulated cluster in its own process (`gpuctl sim up --detach`), gpuctl in another.

Prints, each with its ratio to the target (<= 1.00x meets it), from one run:
wall time of `gpuctl verify` (<= 10 s), its CPU time per GPU node (<= 1 ms), its peak RSS
(<= 150 MB), API requests per GPU node (<= 3, read from the sim's GET /metrics), plus the sim's
own CPU time and the machine's load average (the figures are noisy on a shared machine).
No assertions: figures only.

    python bench/verify_scale.py [--nodes 5000] [--pod-start 2] [--concurrency 32] [--output json|table]
        [--source DIR ...]   also time the gpuctl of another source tree, each run against a fresh
                             sim (before/after in one run: `git worktree add /tmp/before <commit>`)
        [--rounds N]         N runs of each tree, their order alternating; ratios of the medians
        [--profile N]        then run gpuctl again under cProfile (every thread) and print its N
                             costliest functions
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim_access import SimAccess

from gpuctl.sim.server.metrics import parse_metrics
from gpuctl.sim.server.process import start_detached, stop_detached

TARGET_WALL_S = 10.0
TARGET_CPU_MS_PER_NODE = 1.0
TARGET_RSS_MB = 150.0
TARGET_REQUESTS_PER_NODE = 3.0
REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    source: Path
    exit_code: int
    wall_s: float
    cpu_s: float
    rss_mb: float
    requests: dict[tuple[str, str, str, int], int]
    sim_cpu_s: float
    nodes_verified: int
    failing: int
    pods_created: int = 0


def scenario(nodes: int, pod_start: float, gpu_node: dict[str, object] | None = None) -> dict[str, object]:
    """`gpu_node`: more fields of the GPU nodes (product, interconnect, ...)."""
    return {
        "podStartSeconds": pod_start,
        "devicePlugin": "installed",
        "nodes": [
            {"name": "gpu-{i}", "count": nodes, "gpus": 8, **(gpu_node or {})},
            {"name": "cpu-{i}", "count": 3},
        ],
    }


def metrics(sim: SimAccess) -> dict[tuple[str, str, str, int], int]:
    with sim.open("/metrics") as response:
        return parse_metrics(response.read().decode())


def process_cpu_s(pid: int) -> float:
    """utime + stime of a running process (its threads included), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for_plugins(sim: SimAccess, count: int) -> None:
    """The device plugin pods need podStartSeconds to advertise GPUs; wait outside the timing."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with sim.open("/api/v1/nodes") as response:
            items = json.loads(response.read())["items"]
        allocatable = [item["status"].get("allocatable", {}) for item in items]
        ready = sum(int(gpus.get("nvidia.com/gpu", "0")) > 0 for gpus in allocatable)
        if ready >= count:
            return
        time.sleep(0.5)
    raise SystemExit(f"the device plugin did not advertise GPUs on {count} nodes within 120 s")


def run_verify(  # noqa: PLR0917 - a benchmark's knobs
    source: Path,
    kubeconfig: Path,
    sim: SimAccess,
    sim_pid: int,
    concurrency: int,
    profile: Path | None,
    output: str = "json",
    extra_args: tuple[str, ...] = (),
) -> Run:
    command = [sys.executable]
    if profile is not None:  # every thread profiled (timings inflate; the shares are what count)
        command += [str(REPO / "bench" / "profile_threads.py"), str(profile)]
    else:
        command += ["-m", "gpuctl"]
    command += ["verify", "--kubeconfig", str(kubeconfig), "-o", output]
    command += ["--concurrency", str(concurrency), *extra_args]
    env = {**os.environ, "PYTHONPATH": str(source)}
    before, sim_before = metrics(sim), process_cpu_s(sim_pid)
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=source)
    text = child.stdout.read() if child.stdout else b""
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    sim_cpu = process_cpu_s(sim_pid) - sim_before
    after = metrics(sim)
    requests = {key: after[key] - before.get(key, 0) for key in after if after[key] != before.get(key, 0)}
    verified, failing, pods = _counts(text, output)
    return Run(
        source,
        os.waitstatus_to_exitcode(status),
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        requests,
        sim_cpu,
        verified,
        failing,
        pods,
    )


def _counts(text: bytes, output: str) -> tuple[int, int, int]:
    """GPU nodes verified and failing, and pods created, from the JSON document or the table's
    closing line."""
    if output == "table":
        found = [
            re.search(pattern, text)
            for pattern in (
                rb"\((\d+) node\(s\)",
                rb"FAILED: (\d+) node\(s\)",
                rb"(\d+) verification pod\(s\)",
            )
        ]
        verified, failed, pods = (int(match.group(1)) if match else 0 for match in found)
        return verified, failed, pods
    try:
        document = json.loads(text)
    except ValueError:
        document = {}
    nodes = document.get("nodes", [])
    return len(nodes), sum(not node.get("ok") for node in nodes), int(document.get("pods_created", 0))


def figure(label: str, value: float, unit: str, target: float, extra: str = "") -> None:
    """One figure with its ratio to the target (<= 1.00x meets it)."""
    print(f"  {label:<21} {value:8.3f} {unit:<3} target {target:g} {unit}: {value / target:.2f}x {extra}")


def report(run: Run, nodes: int) -> None:
    total = sum(run.requests.values())
    print(
        f"gpuctl from {run.source}: exit {run.exit_code}, "
        f"{run.nodes_verified} GPU nodes, {run.failing} failing"
    )
    figure("wall time", run.wall_s, "s", TARGET_WALL_S)
    figure(
        "client CPU per node", run.cpu_s * 1000 / nodes, "ms", TARGET_CPU_MS_PER_NODE, f"({run.cpu_s:.2f} s)"
    )
    figure("client peak RSS", run.rss_mb, "MB", TARGET_RSS_MB)
    figure("requests per node", total / nodes, "", TARGET_REQUESTS_PER_NODE, f"({total} in all)")
    print(f"  sim CPU (own process) {run.sim_cpu_s:8.3f} s")
    by_kind: dict[str, int] = {}
    for (verb, resource, subresource, _), count in run.requests.items():
        key = f"{verb} {resource}{'/' + subresource if subresource else ''}"
        by_kind[key] = by_kind.get(key, 0) + count
    print("  requests: " + ", ".join(f"{key} {count}" for key, count in sorted(by_kind.items())))


def print_profile(path: Path, top: int) -> None:
    import pstats

    stats = pstats.Stats(str(path))
    print(f"\ncProfile of gpuctl verify (all threads; top {top} by own time):")
    stats.sort_stats("tottime").print_stats(top)
    print(f"cProfile (top {top} by cumulative time):")
    stats.sort_stats("cumulative").print_stats(top)


@contextlib.contextmanager
def fresh_sim(
    nodes: int, pod_start: float, gpu_node: dict[str, object] | None = None
) -> Iterator[tuple[Path, Any]]:
    """A sim of `nodes` GPU nodes in its own process, its device plugin pods running; stopped after."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario_file, kubeconfig = Path(tmp) / "scenario.json", Path(tmp) / "kubeconfig"
        scenario_file.write_text(json.dumps(scenario(nodes, pod_start, gpu_node)), encoding="utf-8")
        began = time.perf_counter()
        record = start_detached(scenario_file, kubeconfig)
        took = time.perf_counter() - began
        print(f"sim up --detach, {nodes} GPU nodes: {took:.2f} s (the process's start included)")
        try:
            wait_for_plugins(SimAccess.from_kubeconfig(kubeconfig), nodes)
            yield kubeconfig, record
        finally:
            stop_detached(kubeconfig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pod-start", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--source", type=Path, action="append", default=[])
    parser.add_argument("--profile", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=1, help="runs of each tree, alternating their order")
    parser.add_argument(
        "--output", choices=("json", "table"), default="json", help="verify's -o (table: a user's default)"
    )
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    sources = [REPO, *(source.resolve() for source in args.source)]
    for source in sources:
        # A user's runs after the first import gpuctl from its bytecode cache; a shell with
        # PYTHONDONTWRITEBYTECODE set would make every timed run compile it again.
        compileall.compile_dir(source / "gpuctl", quiet=1)
    runs: dict[Path, list[Run]] = {source: [] for source in sources}
    for round_index in range(args.rounds):
        # Each run against a fresh sim, sources alternating between rounds: a second verify against
        # one sim meets a slower sim (its history grows) and costs the client more.
        for source in sources if round_index % 2 == 0 else sources[::-1]:
            with fresh_sim(args.nodes, args.pod_start) as (kubeconfig, record):
                run = run_verify(
                    source,
                    kubeconfig,
                    SimAccess.from_kubeconfig(kubeconfig),
                    record.pid,
                    args.concurrency,
                    None,
                    args.output,
                )
            runs[source].append(run)
            report(run, args.nodes)
    if len(sources) > 1:
        base = runs[REPO]
        for other in sources[1:]:
            ratio = {
                what: statistics.median(getattr(b, what) for b in base)
                / statistics.median(getattr(o, what) for o in runs[other])
                for what in ("wall_s", "cpu_s", "rss_mb")
            }
            print(
                f"this tree vs {other} (medians of {args.rounds} run(s) each): wall {ratio['wall_s']:.2f}x, "
                f"CPU {ratio['cpu_s']:.2f}x, RSS {ratio['rss_mb']:.2f}x"
            )
    if args.profile:
        with (
            tempfile.TemporaryDirectory() as tmp,
            fresh_sim(args.nodes, args.pod_start) as (kubeconfig, record),
        ):
            profile = Path(tmp) / "verify.prof"
            run_verify(
                REPO, kubeconfig, SimAccess.from_kubeconfig(kubeconfig), record.pid, args.concurrency, profile
            )
            print_profile(profile, args.profile)
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
