"""Wall time of `gpuctl bootstrap --phase cluster --stack dra --migrate` and back, under a running
Deployment: prints figures, asserts nothing.

    python bench/migration.py [--nodes 3] [--gpus 4] [--source device-plugin|operator] [--workdir DIR]

Serves a simulated Kubernetes 1.37 cluster (`gpuctl sim up --detach`) of N GPU nodes on gpuctl's
device plugin, runs a Deployment of N replicas asking for nvidia.com/gpu: 1 behind a
PodDisruptionBudget of minAvailable N-1, then moves every node to DRA (the stand-in DRA driver
chart, a real helm), runs it again (nothing to change), and moves them back; each run's wall
time, and the seconds its nodes spent in each step, summed over the nodes. With `--source
operator` the nodes start on the GPU Operator's device plugin (ClusterPolicy, the hosts' own
driver) and move to DRA, then the second run; there is no way back to run.
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
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.helm when run as a script

from sim_memory import loop_speed_s  # noqa: E402 - after sys.path

from tests.helm import DRA_CHART, HELM, HELM_MISSING  # noqa: E402 - after sys.path

APP = "trainer"
OPERATOR_SCENARIO = {"operator": {"gpuOperator": {"driver": {"enabled": False}}}}
RUNS = {
    "device-plugin": (
        ("device plugin -> DRA", "dra"),
        ("second run", "dra"),
        ("DRA -> device plugin", "device-plugin"),
    ),
    "operator": (("GPU Operator's device plugin -> DRA", "dra"), ("second run", "dra")),
}


def gpuctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, check=False, env=env
    )


def workload(kubeconfig: Path, replicas: int) -> None:
    """The Deployment and its budget, through the official client; waits until it runs."""
    from kubernetes import client, config

    api = config.new_client_from_config(str(kubeconfig))
    container = {
        "name": "train",
        "image": "registry.k8s.io/pause:3.10",
        "resources": {"limits": {"nvidia.com/gpu": "1"}},
    }
    template = {
        "metadata": {"labels": {"app": APP}},
        "spec": {
            "containers": [container],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }
    selector = {"matchLabels": {"app": APP}}
    deployment = {
        "metadata": {"name": APP},
        "spec": {"replicas": replicas, "selector": selector, "template": template},
    }
    client.AppsV1Api(api).create_namespaced_deployment("default", deployment)
    budget = {"metadata": {"name": APP}, "spec": {"minAvailable": replicas - 1, "selector": selector}}
    client.PolicyV1Api(api).create_namespaced_pod_disruption_budget("default", budget)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pods = client.CoreV1Api(api).list_namespaced_pod("default", label_selector=f"app={APP}").items
        if sum(pod.status.phase == "Running" for pod in pods) == replicas:
            return
        time.sleep(0.2)
    raise SystemExit("the Deployment did not start")


def migrate(kubeconfig: Path, stack: str, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    chart = ("--chart", str(DRA_CHART)) if stack == "dra" else ()
    started = time.perf_counter()
    result = gpuctl(
        "bootstrap", "--phase", "cluster", "--kubeconfig", str(kubeconfig), "--stack", stack, "--migrate",
        "--helm", HELM, *chart, "--timeout", "120", "-o", "json", env=env,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if not result.stdout.strip():
        raise SystemExit(f"bootstrap exited {result.returncode}: {result.stderr.strip()[:500]}")
    return elapsed, json.loads(result.stdout)["migration"]


def report(label: str, elapsed: float, migration: dict[str, Any]) -> None:
    steps: dict[str, float] = {}
    for node in migration["nodes"]:
        for step in node["steps"]:
            steps[step["step"]] = steps.get(step["step"], 0.0) + step["seconds"]
    outcomes = [node["outcome"] for node in migration["nodes"]]
    spent = ", ".join(f"{step} {seconds:.2f}s" for step, seconds in steps.items()) or "no node moved"
    print(f"{label}: {elapsed:6.2f}s wall, {outcomes.count('migrated')} node(s) moved; steps summed: {spent}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--source", choices=("device-plugin", "operator"), default="device-plugin")
    args = parser.parse_args()
    if not HELM:
        raise SystemExit(HELM_MISSING)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="gpuctl-bench-"))
    gpu = {"name": "gpu-{i}", "count": args.nodes, "gpus": args.gpus,
           "labels": {"nvidia.com/gpu.count": str(args.gpus)}}  # fmt: skip
    scenario = workdir / "migration.yaml"
    scenario.write_text(
        yaml.safe_dump(
            {
                "kubernetesVersion": "v1.37.0",
                "podStartSeconds": 0.5,
                "draDriver": "absent",
                "nodes": [{"name": "cpu-0"}, gpu],
                **OPERATOR_SCENARIO.get(args.source, {}),
            }
        )
    )
    kubeconfig = workdir / "migration.kubeconfig"
    if gpuctl(
        "sim", "up", "--detach", "--scenario", str(scenario), "--kubeconfig", str(kubeconfig)
    ).returncode:
        raise SystemExit("sim up failed")
    homes = {
        f"HELM_{name}_HOME": str(workdir / "helm" / name.lower()) for name in ("CACHE", "CONFIG", "DATA")
    }
    env = {**os.environ, **homes}
    print(
        f"machine: fixed pure-Python loop {loop_speed_s():.3f} s; {args.nodes} node(s) of {args.gpus} GPU(s)"
    )
    try:
        on_device_plugin = ("bootstrap", "--phase", "cluster", "--kubeconfig", str(kubeconfig), "--no-gate")
        if args.source == "device-plugin" and gpuctl(*on_device_plugin).returncode:
            raise SystemExit("the device plugin did not come up")
        workload(kubeconfig, args.nodes)  # on the Operator: once its device plugin serves the nodes
        for label, stack in RUNS[args.source]:
            elapsed, migration = migrate(kubeconfig, stack, env)
            report(label, elapsed, migration)
    finally:
        gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))


if __name__ == "__main__":
    main()
