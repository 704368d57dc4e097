"""Acceptance: an interrupted `gpuctl verify` deletes its pods even when SIGINT was inherited ignored."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import pytest

SELECTOR = "app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"


def _verification_pods(cluster: Any) -> list[Any]:
    from kubernetes.client import CoreV1Api

    api = CoreV1Api(cluster.api_client())
    return list(api.list_pod_for_all_namespaces(label_selector=SELECTOR).items)


def _gpus_advertised(cluster: Any) -> bool:
    from kubernetes.client import CoreV1Api

    nodes = CoreV1Api(cluster.api_client()).list_node().items
    return all(int((n.status.allocatable or {}).get("nvidia.com/gpu", "0")) == 4 for n in nodes)


def _wait_until(predicate: Any, what: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


# What `gpuctl verify &` in a non-interactive shell (a CI script) gets: SIGINT set to SIG_IGN,
# kept across exec.
IGNORE_SIGINT_THEN_EXEC = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def test_sigint_cleans_up_when_started_as_a_background_job(sim: Any) -> None:
    scenario = {
        "podStartSeconds": 0.05,
        "podRunSeconds": 120,
        "devicePlugin": "installed",
        "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4}],
    }
    cluster = sim(scenario)
    _wait_until(lambda: _gpus_advertised(cluster), "GPUs advertised")
    argv = [sys.executable, "-c", IGNORE_SIGINT_THEN_EXEC, "-m", "gpuctl", "verify"]
    argv += ["--kubeconfig", str(cluster.kubeconfig)]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_until(lambda: len(_verification_pods(cluster)) == 2, "verification pods created")
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert _verification_pods(cluster) == []
