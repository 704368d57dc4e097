"""Benchmark `gpuctl verify` at scale: 1,000 GPU nodes, podStartSeconds 2, the sim in-process.

Prints wall time, API requests in total and per node, and both against the targets
(<= 12 s wall, <= 5 requests per node). No assertions: figures only.

    python bench/verify_scale.py [--nodes 1000] [--pod-start 2] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gpuctl.core.verify import VerifyOptions, verify
from gpuctl.kube.client import load_api_client
from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.http_server import SimServer

TARGET_WALL_S = 12.0
TARGET_REQUESTS_PER_NODE = 5.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pod-start", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    scenario = parse_scenario(
        {
            "podStartSeconds": args.pod_start,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-{i}", "count": args.nodes, "gpus": 8}, {"name": "cpu-{i}", "count": 3}],
        },
        "bench",
    )
    with tempfile.TemporaryDirectory() as tmp, SimServer(scenario) as server:
        kubeconfig = Path(tmp) / "kubeconfig"
        server.write_kubeconfig(kubeconfig)
        _wait_for_plugins(server, kubeconfig, args.nodes)
        before = server.request_count
        started = time.perf_counter()
        result = verify(load_api_client(kubeconfig), VerifyOptions(concurrency=args.concurrency))
        wall = time.perf_counter() - started
        requests = server.request_count - before
    per_node = requests / max(1, args.nodes)
    failing = sum(not node.ok for node in result.nodes)
    print(f"GPU nodes verified:      {len(result.nodes)} ({failing} failing), ok={result.ok}")
    print(f"verification pods:       {result.pods_created}")
    ratio = wall / TARGET_WALL_S
    print(f"wall time:               {wall:.2f} s   (target {TARGET_WALL_S:.0f} s: {ratio:.2f}x)")
    print(f"API requests:            {requests}")
    print(
        f"requests per GPU node:   {per_node:.2f}   "
        f"(target {TARGET_REQUESTS_PER_NODE:.0f}: {per_node / TARGET_REQUESTS_PER_NODE:.2f}x)"
    )
    print(f"requests by verb:        {server.requests_by_verb()}")
    for node in [n for n in result.nodes if not n.ok][:3]:
        problem = node.first_problem
        print(
            f"  failing: {node.name}: {problem.id if problem else '?'}: {problem.message if problem else ''}"
        )


def _wait_for_plugins(server: SimServer, kubeconfig: Path, count: int) -> None:
    """The device plugin pods need podStartSeconds to advertise GPUs; wait outside the timing."""
    from gpuctl.kube.nodes import list_nodes

    api_client = load_api_client(kubeconfig)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if sum(node.gpu_allocatable > 0 for node in list_nodes(api_client)) >= count:
            return
        time.sleep(0.2)
    del server


if __name__ == "__main__":
    main()
