"""Benchmark of the simulated cluster at scale: prints figures, asserts nothing.

    python bench/sim_scale.py [--nodes 1000] [--pod-start-seconds 2] [--concurrency 32]

1. start-up time of a 1,000-GPU-node cluster with the device plugin installed (targets: < 1 s);
2. 1,000 nvidia-smi pods (one per node) created with bounded concurrency through the official
   client, followed to Succeeded with ONE watch, logs read, deleted by collection: wall time,
   requests served by verb.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gpuctl import nvidia_smi
from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.http_server import SimServer

LABEL = "bench=sim-scale"


def scenario(nodes: int, pod_start_seconds: float) -> dict[str, Any]:
    return {
        "podStartSeconds": pod_start_seconds,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": nodes, "gpus": 8}],
    }


def pod(node: str) -> dict[str, Any]:
    container = {
        "name": "smi",
        "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
        "command": list(nvidia_smi.VERIFY_ARGS),
        "resources": {"limits": {"nvidia.com/gpu": "8"}},
    }
    return {
        "metadata": {"name": f"smi-{node}", "labels": {"bench": "sim-scale"}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": node},
            "containers": [container],
        },
    }


def run_pods(server: SimServer, nodes: int, concurrency: int) -> dict[str, float]:
    from kubernetes import client, watch

    from gpuctl.kube.client import load_api_client

    kubeconfig = server.write_kubeconfig(Path(tempfile.mkdtemp()) / "kubeconfig")
    api = load_api_client(kubeconfig)
    api.configuration.connection_pool_maxsize = concurrency
    api = client.ApiClient(api.configuration)
    core = client.CoreV1Api(api)
    names = [f"gpu-{i}" for i in range(nodes)]
    server.reset_counts()
    started = time.perf_counter()
    version = core.list_namespaced_pod("default", label_selector=LABEL).metadata.resource_version
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda n: core.create_namespaced_pod("default", pod(n)), names))
    created = time.perf_counter()
    done: set[str] = set()
    for event in watch.Watch().stream(
        core.list_namespaced_pod,
        "default",
        label_selector=LABEL,
        resource_version=version,
        timeout_seconds=120,
    ):
        if event["object"].status.phase in ("Succeeded", "Failed"):
            done.add(event["object"].metadata.name)
            if len(done) == nodes:
                break
    finished = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda n: core.read_namespaced_pod_log(f"smi-{n}", "default"), names))
    core.delete_collection_namespaced_pod("default", label_selector=LABEL, grace_period_seconds=0)
    ended = time.perf_counter()
    return {
        "create": created - started,
        "to_completion": finished - started,
        "total": ended - started,
        "completed": float(len(done)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pod-start-seconds", type=float, default=2.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()

    parsed = parse_scenario(scenario(args.nodes, args.pod_start_seconds), "bench")
    began = time.perf_counter()
    server = SimServer(parsed).start()
    start_seconds = time.perf_counter() - began
    try:
        print(f"start-up, {args.nodes} GPU nodes + device plugin: {start_seconds:.3f} s (target < 1 s)")
        figures = run_pods(server, args.nodes, args.concurrency)
        by_verb = server.requests_by_verb()
        total_requests = server.request_count
    finally:
        server.stop()
    pods, per_pod = int(figures["completed"]), total_requests / args.nodes
    print(f"{pods} pods, podStartSeconds {args.pod_start_seconds}, concurrency {args.concurrency}:")
    print(f"  created in {figures['create']:.2f} s ({args.nodes / figures['create']:.0f} creates/s)")
    print(f"  all finished after {figures['to_completion']:.2f} s")
    print(f"  create -> Succeeded -> logs -> deleted: {figures['total']:.2f} s (target ~12 s)")
    print(f"  requests: {total_requests} ({per_pod:.2f} per pod): {dict(sorted(by_verb.items()))}")


if __name__ == "__main__":
    main()
