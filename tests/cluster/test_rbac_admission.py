"""The in-cluster verify's account on a simulated cluster that evaluates RBAC and admission
policies (`rbac: enforce`), as kube-apiserver does: what `gpuctl render --verify-deployment`
renders (its namespace, its ServiceAccount gpuctl-verify, verify's roles and the
ValidatingAdmissionPolicy fencing its node writes) is applied with kubectl, and that account,
with a token from `kubectl create token`, may gate GPU nodes and nothing else: no other taint,
no label, no gate taint on a CPU node (each refused by the policy, 422), no eviction (403, RBAC). The taint
account of `render --rbac` likewise may set and remove its own taint and no other.

The policies are evaluated in CEL by a real CEL implementation (cel-python); a policy of the
user's own, with a message expression and an expression that fails, shows the engine is not
limited to gpuctl's expressions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.defaults import GATE_TAINT_KEY
from gpuctl.sim.server.http_server import kubeconfig_text
from tests.kubectl import KUBECTL, needs_kubectl

pytestmark = needs_kubectl

NAMESPACE = "gpu-proof"
ACCOUNT = "gpuctl-verify"
POLICY_DENIED = f"ValidatingAdmissionPolicy '{ACCOUNT}' with binding '{ACCOUNT}' denied request: "
BROKEN_SMI = {"stdout": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n",
              "exitCode": 9}  # fmt: skip
SCENARIO = {
    "rbac": "enforce",
    "devicePlugin": "installed",
    "podStartSeconds": 0.05,
    "nodes": [
        {"name": "gpu-0", "gpus": 2},
        {"name": "gpu-1", "gpus": 2, "nvidiaSmi": BROKEN_SMI},
        {"name": "cpu-0"},
    ],
}


def _kubectl(home: Path, kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True, text=True, env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, timeout=60,
        check=False,
    )  # fmt: skip


def _applied(home: Path, kubeconfig: Path, *args: str) -> str:
    done = _kubectl(home, kubeconfig, *args)
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture
def verify_account(sim: Any, tmp_path: Path) -> tuple[Any, Path]:
    """The sim, and a kubeconfig holding a token of the rendered Deployment's ServiceAccount."""
    from gpuctl.cli.main import run

    cluster = sim(SCENARIO)
    out = tmp_path / "rendered"
    args = [
        "--verify-deployment",
        "--gpuctl-image",
        "example.org/gpuctl:0.1.0",
        "--verify-namespace",
        NAMESPACE,
    ]
    assert run(["render", *args, "--out", str(out)]) == 0
    # The Deployment's namespace and account, then its roles and policy (not the Deployment: its
    # image is not one the sim runs).
    docs = [doc for doc in yaml.safe_load_all((out / "verify-deployment.yaml").read_text()) if doc]
    account = tmp_path / "account.yaml"
    account.write_text(yaml.safe_dump_all([d for d in docs if d["kind"] in ("Namespace", "ServiceAccount")]))
    _applied(tmp_path, cluster.kubeconfig, "apply", "-f", str(account))
    _applied(tmp_path, cluster.kubeconfig, "apply", "-f", str(out / "verify-deployment-rbac.yaml"))
    return cluster, _account_kubeconfig(cluster, tmp_path, ACCOUNT, NAMESPACE)


def _account_kubeconfig(cluster: Any, home: Path, account: str, namespace: str) -> Path:
    """A kubeconfig holding a token of `account`, from `kubectl create token`."""
    token = _applied(home, cluster.kubeconfig, "create", "token", account, "-n", namespace).strip()
    server = cluster.server
    path = home / f"{account}.kubeconfig"
    path.write_text(kubeconfig_text(server.url, token, server.certificate.certificate_pem))
    path.chmod(0o600)
    return path


def _gate_taints(home: Path, admin: Path) -> dict[str, list[str]]:
    nodes = json.loads(_applied(home, admin, "get", "nodes", "-o", "json"))["items"]
    return {
        node["metadata"]["name"]: [
            t["key"] for t in node["spec"].get("taints") or [] if t["key"] == GATE_TAINT_KEY
        ]
        for node in nodes
    }


def test_the_deployments_account_gates_gpu_nodes(verify_account: tuple[Any, Path], tmp_path: Path) -> None:
    """`verify --gate` as that account: the failing GPU node gets the gate taint, the proven one
    (tainted before) loses it, the CPU node is left alone."""
    cluster, kubeconfig = verify_account
    _applied(tmp_path, cluster.kubeconfig, "taint", "node", "gpu-0", f"{GATE_TAINT_KEY}=smi:NoSchedule")
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "verify", "--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE,
         "--gate", "-o", "json"],
        capture_output=True, text=True, timeout=120, check=False, env={"HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # gpu-1 failed
    assert "Traceback" not in done.stderr
    assert _gate_taints(tmp_path, cluster.kubeconfig) == {"gpu-0": [], "gpu-1": [GATE_TAINT_KEY], "cpu-0": []}


@pytest.mark.parametrize(
    ("args", "denial"),
    [
        (
            ("taint", "node", "gpu-0", "example.com/other=1:NoSchedule"),
            f"may change no taint but {GATE_TAINT_KEY}",
        ),
        (("taint", "node", "gpu-0", "nvidia.com/gpu=present:NoSchedule"), "may change no taint but"),
        (("label", "node", "gpu-0", "pool=gpu"), "may change no node label"),
        (
            ("annotate", "node", "gpu-0", "example.com/owner=me"),
            "may change no annotation outside gpuctl.io/",
        ),
        (("cordon", "gpu-0"), "may not cordon or uncordon a node"),
        (
            ("taint", "node", "cpu-0", f"{GATE_TAINT_KEY}=smi:NoSchedule"),
            f"may add {GATE_TAINT_KEY} only to a node with NVIDIA GPUs",
        ),
    ],
)
def test_the_policy_refuses_every_other_node_write(
    verify_account: tuple[Any, Path], tmp_path: Path, args: tuple[str, ...], denial: str
) -> None:
    """RBAC lets the account patch nodes; the admission policy lets it patch only the gate."""
    cluster, kubeconfig = verify_account
    allowed = _kubectl(tmp_path, kubeconfig, "annotate", "node", "gpu-0", "gpuctl.io/note=1")
    assert allowed.returncode == 0, allowed.stderr  # the policy does let gpuctl.io/ writes through
    before = _applied(tmp_path, cluster.kubeconfig, "get", "nodes", "-o", "json")
    done = _kubectl(tmp_path, kubeconfig, *args)
    assert f"{POLICY_DENIED}{denial}" in done.stderr, (done.returncode, done.stdout, done.stderr)
    assert _applied(tmp_path, cluster.kubeconfig, "get", "nodes", "-o", "json") == before  # nothing written


def test_the_account_cannot_evict_a_kube_system_pod(verify_account: tuple[Any, Path]) -> None:
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException

    from gpuctl.kube.client import load_api_client

    cluster, kubeconfig = verify_account
    (pod, *_) = CoreV1Api(cluster.api_client()).list_namespaced_pod("kube-system").items
    account = CoreV1Api(load_api_client(kubeconfig))
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod.metadata.name}}
    with pytest.raises(ApiException) as denied:
        account.create_namespaced_pod_eviction(pod.metadata.name, "kube-system", body)
    assert denied.value.status == 403
    said = json.loads(denied.value.body)["message"]
    assert (
        f'User "system:serviceaccount:{NAMESPACE}:{ACCOUNT}" cannot create resource "pods/eviction"' in said
    )


def test_the_taint_account_may_change_only_its_own_taint(sim: Any, tmp_path: Path) -> None:
    """`render --rbac`'s taint account: the GPU taint (--taint-key) and nothing else, not even
    the gate's taint."""
    from gpuctl.cli.main import run

    cluster = sim(SCENARIO)
    out = tmp_path / "rbac"
    assert run(["render", "--rbac", "--taint-key", "example.com/gpu", "--out", str(out)]) == 0
    for name in ("rbac-verify.yaml", "rbac-taint.yaml"):  # the first holds the namespace and accounts
        _applied(tmp_path, cluster.kubeconfig, "apply", "-f", str(out / name))
    kubeconfig = _account_kubeconfig(cluster, tmp_path, "gpuctl-taint", "gpuctl-system")
    allowed = _kubectl(tmp_path, kubeconfig, "taint", "node", "gpu-0", "example.com/gpu=present:NoSchedule")
    assert allowed.returncode == 0, allowed.stderr
    refused = _kubectl(tmp_path, kubeconfig, "taint", "node", "gpu-0", f"{GATE_TAINT_KEY}=smi:NoSchedule")
    said = "ValidatingAdmissionPolicy 'gpuctl-taint' with binding 'gpuctl-taint' denied request: "
    assert f"{said}may change no taint but example.com/gpu" in refused.stderr, refused.stderr
    removed = _kubectl(tmp_path, kubeconfig, "taint", "node", "gpu-0", "example.com/gpu-")
    assert removed.returncode == 0, removed.stderr


USERS_POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: small-configmaps}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["configmaps"]}
  variables:
  - {name: keys, expression: "has(object.data) ? object.data.size() : 0"}
  validations:
  - expression: "variables.keys <= 1"
    messageExpression: "'at most 1 key, not ' + string(variables.keys)"
    reason: Forbidden
  - expression: "!has(object.data) || !('probe' in object.data) || int(object.data.probe) > 0"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: small-configmaps-everywhere}
spec: {policyName: small-configmaps, validationActions: [Deny]}
"""


def test_a_users_policy_is_evaluated_in_cel(sim: Any, tmp_path: Path) -> None:
    """Any CEL the policy holds (variables, string conversion, a message expression, the reason)
    is evaluated; an expression that fails denies under failurePolicy: Fail."""
    cluster = sim({"rbac": "enforce"})
    policy = tmp_path / "policy.yaml"
    policy.write_text(USERS_POLICY)
    admin = cluster.kubeconfig
    _applied(tmp_path, admin, "apply", "-f", str(policy))
    ok = _kubectl(tmp_path, admin, "create", "configmap", "one", "--from-literal", "a=1")
    assert ok.returncode == 0, ok.stderr
    big = _kubectl(
        tmp_path, admin, "create", "configmap", "two", "--from-literal", "a=1", "--from-literal", "b=2"
    )
    said = "ValidatingAdmissionPolicy 'small-configmaps' with binding 'small-configmaps-everywhere'"
    said += " denied request"
    assert f'configmaps "two" is forbidden: {said}: at most 1 key, not 2' in big.stderr, big.stderr
    failing = _kubectl(tmp_path, admin, "create", "configmap", "three", "--from-literal", "probe=x")
    assert f"{said}: expression '" in failing.stderr, failing.stderr
    assert "resulted in error" in failing.stderr
    denied = _kubectl(tmp_path, admin, "create", "configmap", "four", "--from-literal", "probe=0")
    assert f"{said}: failed expression: " in denied.stderr, denied.stderr  # no message: the expression
