"""The in-cluster verify account's node status writes on a sim that evaluates RBAC and admission
policies (`rbac: enforce`): RBAC grants `patch nodes/status` whole, and the rendered policy lets
the account change only the GPUProven condition its `verify --gate` publishes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.test_rbac_admission import _applied, verify_account
from tests.kubectl import needs_kubectl

pytestmark = needs_kubectl
__all__ = ["verify_account"]  # the fixture, shared with test_rbac_admission.py

STATUS_DENIED = (
    "ValidatingAdmissionPolicy 'gpuctl-verify-status' with binding 'gpuctl-verify-status' denied request: "
)


def test_the_account_publishes_the_condition(verify_account: tuple[Any, Path], tmp_path: Path) -> None:
    cluster, kubeconfig = verify_account
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(kubeconfig),
         "--namespace", "gpu-proof", "--gate", "-o", "json"],
        capture_output=True, text=True, timeout=120, check=False, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # gpu-1 failed
    nodes = json.loads(_applied(tmp_path, cluster.kubeconfig, "get", "nodes", "-o", "json"))["items"]
    proven = {
        node["metadata"]["name"]: next(
            (c["status"] for c in node["status"].get("conditions") or [] if c["type"] == "GPUProven"), None
        )
        for node in nodes
    }
    assert proven == {"gpu-0": "True", "gpu-1": "False", "cpu-0": None}


@pytest.mark.parametrize(
    ("patch", "denial"),
    [
        (
            [
                {
                    "op": "add",
                    "path": "/status/conditions/-",
                    "value": {"type": "Maintenance", "status": "True"},
                }
            ],
            "may change no node condition but GPUProven",
        ),
        (
            [{"op": "replace", "path": "/status/capacity/cpu", "value": "1"}],
            "may change no node capacity or allocatable",
        ),
    ],
)
def test_the_policy_refuses_every_other_status_write(
    verify_account: tuple[Any, Path], tmp_path: Path, patch: list[dict[str, Any]], denial: str
) -> None:
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config import new_client_from_config

    cluster, kubeconfig = verify_account
    before = _applied(tmp_path, cluster.kubeconfig, "get", "node", "gpu-0", "-o", "json")
    account = CoreV1Api(new_client_from_config(config_file=str(kubeconfig)))
    with pytest.raises(ApiException) as refused:  # the account's own PATCH of nodes/status
        account.patch_node_status("gpu-0", patch)
    assert refused.value.status == 422
    assert f"{STATUS_DENIED}{denial}" in str(refused.value.body)
    after = _applied(tmp_path, cluster.kubeconfig, "get", "node", "gpu-0", "-o", "json")
    assert json.loads(after)["status"]["capacity"] == json.loads(before)["status"]["capacity"]
