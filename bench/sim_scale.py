"""Benchmark of the simulated cluster at scale: prints figures, each with its ratio to the target
(<= 1.00x meets it, except where a figure must be at least its target: >= 1.00x), asserts nothing.

    python bench/sim_scale.py [--nodes 5000] [--pods 5000] [--pod-start-seconds 0] [--concurrency 16]
        [--clients load,gpuctl] [--rounds N]  (N rounds: the medians too; the machine is noisy)

1. start-up of a 5,000-GPU-node cluster with the device plugin installed, in-process (target
   <= 1 s), and of `gpuctl sim up --detach` (its Python process start included);
2. pod lifecycles against the sim in its own process, a fresh one per client: create (bounded
   concurrency) → Succeeded (followed with ONE watch) → log read → deleted (one deletecollection);
   lifecycles per second (target >= 1,000), the sim's and the client's CPU time per lifecycle,
   requests by verb from the sim's GET /metrics. Two clients, each against a fresh sim:
   - `load` (the target's figure): a load generator, as a serving benchmark uses, so that the
     figure is the sim's and not its client's: plain keep-alive HTTP/1.1 connections, one per
     worker, and each pod's log read as soon as the watch reports it Succeeded;
   - `gpuctl`: the path gpuctl verify takes (the official client's REST layer, urllib3), all logs
     read after all pods ended. Its client CPU shares the same 2 cores, so this figure is the
     sim's and gpuctl's together.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import resource
import statistics
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
from sim_access import SimAccess

from gpuctl import nvidia_smi
from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.http_server import SimServer
from gpuctl.sim.server.metrics import parse_metrics
from gpuctl.sim.server.process import start_detached, stop_detached

LABEL = "bench=sim-scale"
TARGET_START_S = 1.0
TARGET_LIFECYCLES_PER_S = 1000.0


def scenario(nodes: int, pod_start_seconds: float) -> dict[str, Any]:
    return {
        "podStartSeconds": pod_start_seconds,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": nodes, "gpus": 8}],
    }


def pod(index: int, nodes: int) -> dict[str, Any]:
    container = {
        "name": "smi",
        "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
        "command": list(nvidia_smi.VERIFY_ARGS),
        "resources": {"limits": {"nvidia.com/gpu": "8"}},
    }
    return {
        "metadata": {"name": f"smi-{index}", "labels": {"bench": "sim-scale"}},
        "spec": {
            "restartPolicy": "Never",
            "nodeSelector": {"kubernetes.io/hostname": f"gpu-{index % nodes}"},
            "containers": [container],
        },
    }


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics(sim: SimAccess) -> dict[tuple[str, str, str, int], int]:
    with sim.open("/metrics") as response:
        return parse_metrics(response.read().decode())


def follow_until_done(
    api: Any, version: str, names: set[str], done: set[str], ready: threading.Event
) -> None:
    """One watch on the batch's pods until each is Succeeded or Failed."""
    from kubernetes.client import CoreV1Api

    from gpuctl.kube.raw import stream_json_lines

    response = CoreV1Api(api).list_namespaced_pod(
        "default", label_selector=LABEL, watch=True, resource_version=version,
        timeout_seconds=300, _preload_content=False,
    )  # fmt: skip
    ready.set()
    try:
        for event in stream_json_lines(response):
            obj = event.get("object") or {}
            if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                done.add(obj["metadata"]["name"])
                if done >= names:
                    return
    finally:
        response.close()


def gpuctl_lifecycles(kubeconfig: Path, pods: int, nodes: int, concurrency: int) -> dict[str, float]:
    from kubernetes.client import CoreV1Api

    from gpuctl.kube import rest_requests
    from gpuctl.kube.client import load_api_client, pooled_client
    from gpuctl.kube.raw import call_json

    api = pooled_client(load_api_client(kubeconfig), concurrency)
    core = CoreV1Api(api)
    names = {f"smi-{index}" for index in range(pods)}
    done: set[str] = set()
    watching = threading.Event()
    cpu_before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    listed = call_json(core.list_namespaced_pod, "default", label_selector=LABEL)
    version = listed["metadata"]["resourceVersion"]
    follower = threading.Thread(target=follow_until_done, args=(api, version, names, done, watching))
    follower.start()
    watching.wait(30)
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda index: rest_requests.create_pod(api, "default", pod(index, nodes)), range(pods)))
        created = time.perf_counter()
        follower.join(300)
        finished = time.perf_counter()
        list(pool.map(lambda name: rest_requests.read_log(api, "default", name, {}), sorted(names)))
    call_json(core.delete_collection_namespaced_pod, "default", label_selector=LABEL, grace_period_seconds=0)
    ended = time.perf_counter()
    return {
        "create": created - started,
        "to_completion": finished - started,
        "total": ended - started,
        "completed": float(len(done)),
        "client_cpu": cpu_seconds(cpu_before),
    }


class Connection:
    """One keep-alive HTTP/1.1 connection to the sim, for the load generator."""

    def __init__(self, sim: SimAccess) -> None:
        parsed = urllib.parse.urlsplit(sim.url)
        self.connection = http.client.HTTPSConnection(
            parsed.hostname or "127.0.0.1", parsed.port, timeout=120, context=sim.tls
        )
        self.headers = {"Authorization": f"Bearer {sim.token}", "Accept": "application/json"}

    def send(self, method: str, path: str, body: bytes | None = None) -> http.client.HTTPResponse:
        headers = self.headers if body is None else {**self.headers, "Content-Type": "application/json"}
        self.connection.request(method, path, body, headers)
        return self.connection.getresponse()

    def call(self, method: str, path: str, body: bytes | None = None) -> bytes:
        response = self.send(method, path, body)
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {response.status}: {data[:300]!r}")
        return data


PODS_PATH = "/api/v1/namespaces/default/pods"
SELECTOR = "labelSelector=" + urllib.parse.quote(LABEL)
STOP, READ_LOG, CREATE = 0, 1, 2  # job priorities: stop first, then log reads, then creates


class LoadGenerator:
    """`concurrency` workers with a connection each take jobs from one priority queue: log reads
    (queued by the one watch as each pod ends) go ahead of creates."""

    def __init__(self, kubeconfig: Path, pods: int, nodes: int) -> None:

        self.sim, self.pods = SimAccess.from_kubeconfig(kubeconfig), pods
        self.bodies = [orjson.dumps(pod(index, nodes)) for index in range(pods)]
        self.jobs: queue.PriorityQueue[tuple[int, int, str]] = queue.PriorityQueue()
        self.completed: set[str] = set()
        self.failures: list[str] = []
        self.logs_read = 0
        self.all_read = threading.Event()
        self.lock = threading.Lock()

    def worker(self) -> None:
        connection = Connection(self.sim)
        while True:
            priority, index, name = self.jobs.get()
            try:
                if priority == STOP:
                    return
                if priority == CREATE:
                    connection.call("POST", PODS_PATH, self.bodies[index])
                    continue
                connection.call("GET", f"{PODS_PATH}/{name}/log")
            except (OSError, RuntimeError, http.client.HTTPException) as error:
                self.failures.append(str(error))
                self.all_read.set()
                return
            with self.lock:
                self.logs_read += 1
                if self.logs_read == self.pods:
                    self.all_read.set()

    def follow(self, version: str, ready: threading.Event) -> None:
        query = f"{SELECTOR}&watch=true&resourceVersion={version}&timeoutSeconds=300"
        response = Connection(self.sim).send("GET", f"{PODS_PATH}?{query}")
        ready.set()
        for line in response:
            obj = orjson.loads(line).get("object") or {}
            if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                name = obj["metadata"]["name"]
                if name not in self.completed:
                    self.completed.add(name)
                    self.jobs.put((READ_LOG, 0, name))
                    if len(self.completed) == self.pods:
                        break
        response.close()

    def run(self, concurrency: int) -> dict[str, float]:
        for index in range(self.pods):
            self.jobs.put((CREATE, index, ""))
        cpu_before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        control = Connection(self.sim)
        listed = orjson.loads(control.call("GET", f"{PODS_PATH}?{SELECTOR}"))
        watching = threading.Event()
        threading.Thread(
            target=self.follow, args=(listed["metadata"]["resourceVersion"], watching), daemon=True
        ).start()
        watching.wait(30)
        for _ in range(concurrency):
            threading.Thread(target=self.worker, daemon=True).start()
        self.all_read.wait(300)
        finished = time.perf_counter()
        for _ in range(concurrency):
            self.jobs.put((STOP, 0, ""))
        control.call("DELETE", f"{PODS_PATH}?{SELECTOR}&gracePeriodSeconds=0")
        ended = time.perf_counter()
        if self.failures:
            raise SystemExit(f"load generator: {self.failures[0]}")
        return {
            "to_logs": finished - started,
            "total": ended - started,
            "completed": float(len(self.completed)),
            "client_cpu": cpu_seconds(cpu_before),
        }


def load_lifecycles(kubeconfig: Path, pods: int, nodes: int, concurrency: int) -> dict[str, float]:
    return LoadGenerator(kubeconfig, pods, nodes).run(concurrency)


def cpu_seconds(before: resource.struct_rusage) -> float:
    after = resource.getrusage(resource.RUSAGE_SELF)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def ratio_line(label: str, value: float, unit: str, target: float, at_least: bool = False) -> str:
    ratio = value / target
    sign = ">=" if at_least else "<="
    return f"{label}: {value:.3f} {unit}   (target {sign} {target:g} {unit}: {ratio:.2f}x)"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--pod-start-seconds", type=float, default=0.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--clients", default="load,gpuctl", help="which clients run, in order (load, gpuctl)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat it all; print the medians too")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")

    startups: list[float] = []
    rates: dict[str, list[float]] = {client: [] for client in args.clients.split(",")}
    runs = {"load": load_lifecycles, "gpuctl": gpuctl_lifecycles}
    for _ in range(args.rounds):
        parsed = parse_scenario(scenario(args.nodes, args.pod_start_seconds), "bench")
        began = time.perf_counter()
        SimServer(parsed).start().stop()
        startups.append(time.perf_counter() - began)
        label = f"start-up in-process, {args.nodes} GPU nodes + device plugin"
        print(ratio_line(label, startups[-1], "s", TARGET_START_S))
        for client, found in rates.items():
            found.append(lifecycles_against_fresh_sim(client, runs[client], args))
    if args.rounds > 1:
        print(f"medians of {args.rounds} rounds:")
        print("  " + ratio_line("start-up in-process", statistics.median(startups), "s", TARGET_START_S))
        for client, found in rates.items():
            label = f"lifecycles per second ({client} client)"
            median = statistics.median(found)
            print("  " + ratio_line(label, median, "/s", TARGET_LIFECYCLES_PER_S, at_least=True))
    print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def lifecycles_against_fresh_sim(client: str, run: Any, args: argparse.Namespace) -> float:
    """One client's lifecycles against a sim of its own; the lifecycles per second."""
    with tempfile.TemporaryDirectory() as tmp:
        scenario_file, kubeconfig = Path(tmp) / "scenario.json", Path(tmp) / "kubeconfig"
        scenario_file.write_text(json.dumps(scenario(args.nodes, args.pod_start_seconds)), encoding="utf-8")
        began = time.perf_counter()
        record = start_detached(scenario_file, kubeconfig)
        print(f"sim up --detach (a new Python process): {time.perf_counter() - began:.3f} s")
        try:
            time.sleep(0.5)  # the device plugin pods start (podStartSeconds)
            sim = SimAccess.from_kubeconfig(kubeconfig)
            before, sim_before = metrics(sim), process_cpu_s(record.pid)
            figures = run(kubeconfig, args.pods, args.nodes, args.concurrency)
            sim_cpu = process_cpu_s(record.pid) - sim_before
            after = metrics(sim)
        finally:
            stop_detached(kubeconfig)
    by_verb: dict[str, int] = {}
    for key, count in after.items():
        by_verb[key[0]] = by_verb.get(key[0], 0) + count - before.get(key, 0)
    pods, total = int(figures["completed"]), figures["total"]
    print(
        f"client {client}: {pods} of {args.pods} pods Succeeded, podStartSeconds {args.pod_start_seconds}, "
        f"concurrency {args.concurrency}:"
    )
    if "create" in figures:
        print(f"  created in {figures['create']:.2f} s ({args.pods / figures['create']:.0f} creates/s)")
        print(f"  all Succeeded after {figures['to_completion']:.2f} s")
    else:
        print(f"  every log read after {figures['to_logs']:.2f} s")
    print(f"  create -> Succeeded -> logs -> deleted: {total:.2f} s")
    rate = args.pods / total
    label = f"lifecycles per second ({client} client)"
    print("  " + ratio_line(label, rate, "/s", TARGET_LIFECYCLES_PER_S, at_least=True))
    print(f"  sim CPU: {sim_cpu:.2f} s, {sim_cpu * 1000 / args.pods:.3f} ms per lifecycle "
          f"(one core's worth: {args.pods / max(sim_cpu, 1e-9):.0f} lifecycles/s)")  # fmt: skip
    client_cpu = figures["client_cpu"]
    print(f"  client CPU: {client_cpu:.2f} s, {client_cpu * 1000 / args.pods:.3f} ms per lifecycle")
    print(f"  requests: {sum(by_verb.values())}: {dict(sorted(by_verb.items()))}")
    return rate


if __name__ == "__main__":
    main()
