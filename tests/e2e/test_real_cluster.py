"""Tier 4 (opt-in): gpuctl against a real cluster. Set GPUCTL_E2E_KUBECONFIG to run it.

Safe on a live cluster: `status` and `taint-gpu-nodes --dry-run` write nothing, and `verify`
only creates its own verification pods, which must all be gone afterwards. Extra `verify` flags
for the cluster at hand (an --image from an internal registry, --runtime-class nvidia,
--expect-gpus ...) go in GPUCTL_E2E_VERIFY_ARGS, split like a shell would.
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
VERIFY_ARGS = shlex.split(os.environ.get("GPUCTL_E2E_VERIFY_ARGS", ""))
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
    for node in report["nodes"]:
        assert {"name", "product", "gpus", "driver", "taints", "ready"} <= set(node)


def test_verify_proves_or_diagnoses_every_gpu_node_and_leaves_no_pod(cli: Cli) -> None:
    result = cli("verify", "--kubeconfig", KUBECONFIG, "--output", "json", *VERIFY_ARGS)
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["schema"] == "gpuctl.verify/v1"
    assert report["ok"] is (result.exit_code == 0)
    for node in report["nodes"]:
        assert {"name", "ok", "gpus", "checks"} <= set(node)
        assert {"expected", "capacity", "allocatable", "seen"} <= set(node["gpus"])
        for check in node["checks"]:
            assert check["status"] in ("pass", "fail", "warn", "skip")
            if check["status"] == "fail":
                assert check["message"]
                assert check["hint"], f"{node['name']}: {check['id']} fails without a hint"
    assert _verification_pods() == []


def test_verify_junit_is_well_formed(cli: Cli) -> None:
    result = cli("verify", "--kubeconfig", KUBECONFIG, "--output", "junit", *VERIFY_ARGS)
    assert result.exit_code in (0, 1), result.stderr
    suite = ET.fromstring(result.stdout)
    assert suite.iter("testcase")
    assert _verification_pods() == []


def test_taint_dry_run_changes_nothing(cli: Cli) -> None:
    before = _node_taints()
    result = cli("taint-gpu-nodes", "--kubeconfig", KUBECONFIG, "--dry-run", "--output", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert json.loads(result.stdout)["schema"] == "gpuctl.taint/v1"
    assert _node_taints() == before
