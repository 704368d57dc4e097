"""A NoExecute taint evicts running pods: gpuctl names them first and needs --yes to go on."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

SCENARIO: dict[str, Any] = {
    "devicePlugin": "installed",
    "podStartSeconds": 0.05,
    "nodes": [{"name": "cpu-0"}, {"name": "gpu-{i}", "count": 2, "gpus": 8}],
}


def _node_taints(cluster: Any, name: str) -> list[str]:
    from kubernetes.client import CoreV1Api

    node = CoreV1Api(cluster.api_client()).read_node(name)
    return [f"{taint.key}:{taint.effect}" for taint in node.spec.taints or []]


def test_no_execute_is_refused_without_yes_naming_the_pods(
    sim: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    cluster = sim(SCENARIO)
    refused = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--effect", "NoExecute")
    assert refused.exit_code == 2, refused.output
    first = refused.stderr.splitlines()[0]
    assert first.startswith("error: taint nvidia.com/gpu=present:NoExecute would evict 2 running pod(s)")
    assert "on gpu-0 (DaemonSet/" in first
    assert "--yes" in refused.stderr
    assert _node_taints(cluster, "gpu-0") == []

    dry = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--effect", "NoExecute", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "would evict: " in dry.stdout
    assert "on gpu-1 (DaemonSet/" in dry.stdout
    assert _node_taints(cluster, "gpu-0") == []

    done = cli(
        "taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--effect", "NoExecute", "--yes", "-o", "json"
    )
    assert done.exit_code == 0, done.output
    evictions = json.loads(done.stdout)["evictions"]
    assert sorted(pod["node"] for pod in evictions) == ["gpu-0", "gpu-1"]
    assert _node_taints(cluster, "gpu-0") == ["nvidia.com/gpu:NoExecute"]


def test_verify_hint_names_the_missing_toleration_not_an_existing_one(
    sim: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    cluster = sim(SCENARIO)
    tainted = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--effect", "NoExecute", "--yes")
    assert tainted.exit_code == 0, tainted.output
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "--no-pods", "-o", "json", "--timeout", "20")
    checks = {check["id"]: check for check in json.loads(result.stdout)["cluster_checks"]}
    hint = checks["cluster.daemonset-tolerations"]["hint"]
    assert "effect: NoExecute" in hint
    assert "effect: NoSchedule" not in hint
