"""`gpuctl verify --watch`: the whole verdict once, then only what changes, until Ctrl-C."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from gpuctl.core.verify.model import GpuCounts, NodeResult, VerifyResult, failed, passed
from gpuctl.core.verify.watch import changes
from tests.interrupt import interrupt, running
from tests.polling import wait_until

SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 4}],
}


def _read_until(process: subprocess.Popen[str], wanted: str, timeout: float = 60) -> str:
    assert process.stdout is not None
    seen = ""
    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen += line
    return seen


def test_watch_prints_the_verdict_then_only_the_change(sim: Any) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(SCENARIO)
    wait_until(lambda: set(cluster.allocatable_gpus().values()) == {4}, "GPUs advertised")
    argv = [sys.executable, "-m", "gpuctl", "verify", "--watch", "--interval", "5", "-o", "json"]
    argv += ["--kubeconfig", str(cluster.kubeconfig)]
    with running(argv) as process:
        first = json.loads(_read_until(process, "\n"))  # NDJSON: the first run is one line too
        assert first["verify"]["ok"] is True
        assert [
            (c["subject"], c["before"], c["ok"]) for c in first["changes"] if c["subject"].startswith("gpu")
        ] == [
            ("gpu-0", None, True),
            ("gpu-1", None, True),
        ]
        CoreV1Api(cluster.api_client()).patch_node("gpu-1", {"spec": {"unschedulable": True}})
        line = _read_until(process, "\n")
        change = json.loads(line)
        assert [(c["subject"], c["ok"]) for c in change["changes"]] == [("gpu-1", False)]
        assert "node.schedulable" in change["changes"][0]["after"]
        assert change["verify"]["schema"] == "gpuctl.verify/v1"
        stderr = interrupt(process)
    assert process.returncode == 130, stderr
    assert "stopped watching" in stderr
    assert cluster.verification_pods() == []


def _result(*nodes: NodeResult) -> VerifyResult:
    return VerifyResult(nodes, (), "run", "gpuctl-system")


def test_changes_name_new_gone_and_changed_nodes_only() -> None:
    counts = GpuCounts(None, 8, 8, 8)
    good = NodeResult("gpu-0", counts, (passed("node.ready", "Ready"),))
    bad = NodeResult("gpu-0", counts, (failed("node.ready", "NotReady"),))
    other = NodeResult("gpu-1", counts, (passed("node.ready", "Ready"),))
    assert changes(_result(good, other), _result(good, other)) == []
    found = changes(_result(good, other), _result(bad))
    assert [(c.subject, c.before.split()[0], c.after.split()[0] if c.after else "", c.ok) for c in found] == [
        ("gpu-0", "ok", "FAILED", False),
        ("gpu-1", "ok", "", True),
    ]
