"""Tier 4 (opt-in): gpuctl against a real cluster. Set GPUCTL_E2E_KUBECONFIG to run it.

The tier fails unless `gpuctl verify` proves every GPU node of the cluster: exit 0, `ok: true`,
and at least one GPU node, each of them proven. Optional expectations make it stricter:
GPUCTL_E2E_EXPECT_NODES (how many GPU nodes the cluster must have) and GPUCTL_E2E_EXPECT_GPUS
(passed to `verify --expect-gpus`: `8`, `gpu-0=8,dgx-*=4`; every node must then see that many).

Safe on a live cluster: `status` and `taint-gpu-nodes --dry-run` write nothing, and `verify`
only creates its own verification pods, which must all be gone afterwards. Extra `verify` flags
for the cluster at hand (an --image from an internal registry, --runtime-class nvidia ...) go in
GPUCTL_E2E_VERIFY_ARGS, split like a shell would.
"""

from __future__ import annotations

import json
import os
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuctl.kube.client import load_api_client

KUBECONFIG = os.environ.get("GPUCTL_E2E_KUBECONFIG", "")
EXPECT_NODES = os.environ.get("GPUCTL_E2E_EXPECT_NODES", "")
EXPECT_GPUS = os.environ.get("GPUCTL_E2E_EXPECT_GPUS", "")
VERIFY_ARGS = [
    *shlex.split(os.environ.get("GPUCTL_E2E_VERIFY_ARGS", "")),
    *(["--expect-gpus", EXPECT_GPUS] if EXPECT_GPUS else []),
]
VERIFY_NAMESPACE = "gpuctl-system"
VERIFY_PODS = "app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not KUBECONFIG, reason="set GPUCTL_E2E_KUBECONFIG to run against a real cluster"),
]

Cli = Callable[..., Any]


def _node_taints() -> dict[str, list[dict[str, Any]]]:
    from kubernetes import client

    api = client.CoreV1Api(load_api_client(Path(KUBECONFIG)))
    return {
        node.metadata.name: [taint.to_dict() for taint in node.spec.taints or []]
        for node in api.list_node().items
    }


def _verification_pods() -> list[str]:
    from kubernetes import client

    api = client.CoreV1Api(load_api_client(Path(KUBECONFIG)))
    pods = api.list_pod_for_all_namespaces(label_selector=VERIFY_PODS).items
    return [f"{pod.metadata.namespace}/{pod.metadata.name}" for pod in pods]


def test_status_reports_the_gpu_inventory(cli: Cli) -> None:
    result = cli("status", "--kubeconfig", KUBECONFIG, "--output", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "gpuctl.status/v1"
    assert report["nodes"], "status lists no GPU node"
    for node in report["nodes"]:
        assert {"name", "product", "gpus", "driver", "taints", "ready"} <= set(node)


def _unproven(report: dict[str, Any]) -> list[str]:
    """One line per GPU node or cluster check that verify did not prove, with its failing checks."""
    lines = []
    for node in report["nodes"]:
        failing = [f"{c['id']}: {c['message']}" for c in node["checks"] if c["status"] == "fail"]
        if not node["ok"] or failing:
            lines.append(f"{node['name']}: " + ("; ".join(failing) or "not ok"))
    lines += [f"cluster {c['id']}: {c['message']}" for c in report["cluster_checks"] if c["status"] == "fail"]
    return lines


def test_verify_proves_every_gpu_node_and_leaves_no_pod(cli: Cli) -> None:
    result = cli("verify", "--kubeconfig", KUBECONFIG, "--output", "json", *VERIFY_ARGS)
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "gpuctl.verify/v1"
    assert _verification_pods() == []
    for node in report["nodes"]:
        for check in node["checks"]:
            if check["status"] == "fail":
                assert check["hint"], f"{node['name']}: {check['id']} fails without a hint"
    assert report["nodes"], "verify found no GPU node: nothing was proven"
    unproven = "not proven:\n" + "\n".join(_unproven(report))
    assert report["ok"] is True, unproven
    assert result.exit_code == 0, unproven
    if EXPECT_NODES:
        names = [node["name"] for node in report["nodes"]]
        assert len(names) == int(EXPECT_NODES), (
            f"GPUCTL_E2E_EXPECT_NODES={EXPECT_NODES}, verify found {names}"
        )
    for node in report["nodes"]:
        gpus = node["gpus"]
        assert gpus["seen"] == gpus["allocatable"] > 0, f"{node['name']}: {gpus}"
        if EXPECT_GPUS:
            assert gpus["seen"] == gpus["expected"], f"{node['name']}: {gpus}"


def test_verify_junit_has_a_passing_testcase_per_check(cli: Cli) -> None:
    result = cli("verify", "--kubeconfig", KUBECONFIG, "--output", "junit", *VERIFY_ARGS)
    root = ET.fromstring(result.stdout)
    cases = list(root.iter("testcase"))
    failed = [
        f"{case.get('classname')}/{case.get('name')}" for case in cases if case.find("failure") is not None
    ]
    assert _verification_pods() == []
    assert cases, "no testcase: verify found nothing to prove"
    assert not failed, f"failing: {failed}"
    assert result.exit_code == 0, result.stderr


def test_taint_dry_run_changes_nothing(cli: Cli) -> None:
    before = _node_taints()
    result = cli("taint-gpu-nodes", "--kubeconfig", KUBECONFIG, "--dry-run", "--output", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert json.loads(result.stdout)["schema"] == "gpuctl.taint/v1"
    assert _node_taints() == before
