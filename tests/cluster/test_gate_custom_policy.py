"""`gpuctl render --gate-taint KEY --gate-condition TYPE` on a sim that evaluates RBAC and
admission policies (`rbac: enforce`): the rendered policies let the in-cluster verify's account
write that taint and that condition, the Deployment's verify gates with them, and the policy
rendered with the defaults still refuses the key (422)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.defaults import GATE_TAINT_KEY
from tests.cluster.test_rbac_admission import (
    ACCOUNT,
    NAMESPACE,
    POLICY_DENIED,
    SCENARIO,
    _account_kubeconfig,
    _applied,
    verify_account,
)
from tests.kubectl import needs_kubectl

pytestmark = needs_kubectl
__all__ = ["verify_account"]  # the fixture, shared with test_rbac_admission.py

READINESS_KEY = "readiness.k8s.io/gpu-proven"  # the Node Readiness Controller's prefix (issue 44)
CONDITION = "GPUReady"


@pytest.fixture
def custom_account(sim: Any, tmp_path: Path) -> tuple[Any, Path, list[str]]:
    """The sim, a kubeconfig holding a token of the account rendered for the custom key and
    condition, and the command the rendered Deployment runs."""
    from gpuctl.cli.main import run

    cluster = sim(SCENARIO)
    out = tmp_path / "rendered"
    gate = ["--gate-taint", READINESS_KEY, "--gate-condition", CONDITION]
    args = [
        "--verify-deployment",
        "--gpuctl-image",
        "example.org/gpuctl:0.1.0",
        "--verify-namespace",
        NAMESPACE,
    ]
    assert run(["render", *args, *gate, "--out", str(out)]) == 0
    docs = [doc for doc in yaml.safe_load_all((out / "verify-deployment.yaml").read_text()) if doc]
    account = tmp_path / "account.yaml"
    account.write_text(yaml.safe_dump_all([d for d in docs if d["kind"] in ("Namespace", "ServiceAccount")]))
    _applied(tmp_path, cluster.kubeconfig, "apply", "-f", str(account))
    _applied(tmp_path, cluster.kubeconfig, "apply", "-f", str(out / "verify-deployment-rbac.yaml"))
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    return cluster, _account_kubeconfig(cluster, tmp_path, ACCOUNT, NAMESPACE), command


def test_the_account_gates_with_the_rendered_key_and_condition(
    custom_account: tuple[Any, Path, list[str]], tmp_path: Path
) -> None:
    cluster, kubeconfig, command = custom_account
    gate_flags = command[command.index("--gate") :]
    assert gate_flags == ["--gate", "--gate-taint", READINESS_KEY, "--gate-condition", CONDITION]
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE,
         "-o", "json", *gate_flags],
        capture_output=True, text=True, timeout=120, check=False, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # gpu-1 failed, and no write was refused (exit 3)
    nodes = json.loads(_applied(tmp_path, cluster.kubeconfig, "get", "nodes", "-o", "json"))["items"]
    taints = {n["metadata"]["name"]: sorted(t["key"] for t in n["spec"].get("taints") or []) for n in nodes}
    assert taints == {"gpu-0": [], "gpu-1": [READINESS_KEY], "cpu-0": []}
    conditions = {
        n["metadata"]["name"]: {c["type"]: c["status"] for c in n["status"].get("conditions") or []}.get(
            CONDITION
        )
        for n in nodes
    }
    assert conditions == {"gpu-0": "True", "gpu-1": "False", "cpu-0": None}


def test_the_default_policy_refuses_another_key(verify_account: tuple[Any, Path]) -> None:
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config import new_client_from_config

    _cluster, kubeconfig = verify_account
    account = CoreV1Api(new_client_from_config(config_file=str(kubeconfig)))
    taint = {"key": READINESS_KEY, "value": "smi", "effect": "NoSchedule"}
    with pytest.raises(ApiException) as refused:
        account.patch_node("gpu-1", [{"op": "add", "path": "/spec/taints", "value": [taint]}])
    assert refused.value.status == 422
    assert f"{POLICY_DENIED}may change no taint but {GATE_TAINT_KEY}" in str(refused.value.body)
