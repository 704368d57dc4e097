"""The gate (gpuctl.core.gate): `verify --gate` taints exactly the GPU nodes that fail
gpuctl.io/unproven=<level>:NoSchedule and lifts it once they pass; bootstrap's cluster phase gates
the nodes never proven (not with --no-gate); `status` shows each node's gate. Other taints are
never touched."""

from __future__ import annotations

import json
from typing import Any

from gpuctl.core.gate import apply_gate
from tests.polling import wait_until

OTHER = {"key": "dedicated", "value": "ml", "effect": "PreferNoSchedule"}
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 2, "taints": [OTHER]}, {"name": "cpu-0"}],
}
GATE = {"key": "gpuctl.io/unproven", "value": "smi", "effect": "NoSchedule"}


def _node(cluster: Any, name: str) -> Any:
    from kubernetes.client import CoreV1Api

    return CoreV1Api(cluster.api_client()).read_node(name)


def _taints(cluster: Any, name: str) -> list[dict[str, str]]:
    return [
        {"key": t.key, "value": t.value, "effect": t.effect} for t in _node(cluster, name).spec.taints or []
    ]


def _cordon(cluster: Any, name: str, unschedulable: bool) -> None:
    from kubernetes.client import CoreV1Api

    CoreV1Api(cluster.api_client()).patch_node(name, {"spec": {"unschedulable": unschedulable}})


def _ready(sim: Any, scenario: dict[str, Any] = SCENARIO) -> Any:
    cluster = sim(scenario)
    wait_until(lambda: set(cluster.allocatable_gpus().values()) == {0, 2}, "GPUs advertised")
    return cluster


def _verify_gate(cli: Any, cluster: Any) -> tuple[int, dict[str, Any]]:
    result = cli(
        "verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", "--gate", "--toleration", "dedicated"
    )
    assert result.stdout, result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_verify_gate_taints_exactly_the_failing_node_then_lifts_it(sim: Any, cli: Any) -> None:
    cluster = _ready(sim)
    _cordon(cluster, "gpu-1", True)  # a fault verify sees: node.schedulable fails
    code, report = _verify_gate(cli, cluster)
    assert code == 1
    node_gate = ("level", "dry_run", "gated", "ungated", "unchanged", "failed")
    assert {key: report["gate"][key] for key in node_gate} == {
        "level": "smi", "dry_run": False, "gated": ["gpu-1"], "ungated": [], "unchanged": ["gpu-0"],
        "failed": [],
    }  # fmt: skip
    # the keys the ecosystem gate added (test_gate_ecosystem.py covers them)
    assert (report["gate"]["taint_key"], report["gate"]["mode"]) == ("gpuctl.io/unproven", "taint")
    assert [(c["node"], c["status"]) for c in report["gate"]["condition"]["nodes"]] == [
        ("gpu-0", "True"),
        ("gpu-1", "False"),
    ]
    assert _taints(cluster, "gpu-1") == [OTHER, GATE]
    assert _taints(cluster, "gpu-0") == [OTHER]
    annotations = _node(cluster, "gpu-0").metadata.annotations
    assert annotations["gpuctl.io/proven-level"].startswith("smi ")

    code, report = _verify_gate(cli, cluster)  # nothing changed: nothing written
    assert report["gate"]["writes"] == 0
    assert report["gate"]["unchanged"] == ["gpu-0", "gpu-1"]

    _cordon(cluster, "gpu-1", False)  # the fault cleared
    code, report = _verify_gate(cli, cluster)
    assert code == 0, json.dumps(report, indent=1)
    assert report["gate"]["ungated"] == ["gpu-1"]
    assert _taints(cluster, "gpu-1") == [OTHER]
    assert not cluster.verification_pods()


def test_a_dry_run_gate_writes_nothing(sim: Any) -> None:
    cluster = _ready(sim)
    result = apply_gate(
        cluster.api_client(), verdicts={"gpu-0": False, "gpu-1": True}, level="cuda", dry_run=True
    )
    assert (result.gated, result.unchanged, result.dry_run) == (("gpu-0",), ("gpu-1",), True)
    assert _taints(cluster, "gpu-0") == [OTHER]
    assert "gpuctl.io/proven-level" not in (_node(cluster, "gpu-1").metadata.annotations or {})


def test_a_new_level_updates_the_gate_and_taint_remove_keeps_it(sim: Any, cli: Any) -> None:
    cluster = _ready(sim)
    apply_gate(cluster.api_client(), verdicts={"gpu-0": False}, level="smi")
    result = apply_gate(cluster.api_client(), verdicts={"gpu-0": False}, level="nccl")
    assert result.gated == ("gpu-0",)
    assert _taints(cluster, "gpu-0") == [OTHER, GATE | {"value": "nccl"}]
    removed = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--remove")
    assert removed.exit_code == 0, removed.output
    assert GATE | {"value": "nccl"} in _taints(cluster, "gpu-0")
    status = cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "json")
    gates = {node["name"]: node["gate"] for node in json.loads(status.stdout)["nodes"]}
    assert gates == {"gpu-0": "nccl", "gpu-1": None}
    table = cli("status", "--kubeconfig", cluster.kubeconfig)
    assert "GATE" in table.stdout


def test_bootstrap_cluster_gates_nodes_never_proven_unless_no_gate(sim: Any, cli: Any) -> None:
    scenario = {
        "podStartSeconds": 0.05,
        "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 2}, {"name": "cpu-0"}],
    }
    gated = sim(scenario, name="gated")
    apply_gate(gated.api_client(), verdicts={"gpu-1": True}, level="smi")  # gpu-1: proven before
    result = cli("bootstrap", "--phase", "cluster", "--kubeconfig", gated.kubeconfig, "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert GATE in _taints(gated, "gpu-0")
    assert GATE not in _taints(gated, "gpu-1")
    again = cli("bootstrap", "--phase", "verify", "--kubeconfig", gated.kubeconfig, "--timeout", "60")
    assert again.exit_code == 0, again.output
    assert GATE not in _taints(gated, "gpu-0")  # proven: the verify phase lifted it

    plain = sim(scenario, name="plain")
    result = cli(
        "bootstrap", "--phase", "cluster", "--no-gate", "--kubeconfig", plain.kubeconfig, "--timeout", "60"
    )
    assert result.exit_code == 0, result.output
    assert all(taint["key"] != GATE["key"] for taint in _taints(plain, "gpu-0"))


def test_a_gate_whose_patch_is_denied_reports_first_then_exits_3(sim: Any, cli: Any, tmp_path: Any) -> None:
    """On a cluster that evaluates RBAC, an account that may do everything verify does but patch
    nodes: the verdicts still reach stdout (the gate's nodes as failed), then one error line names
    the refused `patch` on `nodes` in the API server's words, exit 3 (not authorised)."""
    from kubernetes.client import CoreV1Api, RbacAuthorizationV1Api

    from gpuctl.sim.server.http_server import kubeconfig_text

    cluster = _ready(sim, {**SCENARIO, "rbac": "enforce"})
    admin = cluster.api_client()
    core, rbac = CoreV1Api(admin), RbacAuthorizationV1Api(admin)
    core.create_namespaced_service_account("default", {"metadata": {"name": "verifier"}})
    every_verb_but_patch = ["get", "list", "watch", "create", "update", "delete", "deletecollection"]
    rbac.create_cluster_role(
        {
            "metadata": {"name": "all-but-patch"},
            "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": every_verb_but_patch}],
        }
    )
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": "verifier"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "all-but-patch",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "verifier", "namespace": "default"}],
        }
    )
    token = core.create_namespaced_service_account_token("verifier", "default", {"spec": {}}).status.token
    kubeconfig = tmp_path / "verifier.kubeconfig"
    server = cluster.server
    kubeconfig.write_text(
        kubeconfig_text(server.url, token, server.certificate.certificate_pem), encoding="utf-8"
    )

    result = cli("verify", "--kubeconfig", kubeconfig, "-o", "json", "--gate", "--toleration", "dedicated")
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    assert [node["name"] for node in report["nodes"]] == ["gpu-0", "gpu-1"]
    assert report["gate"]["failed"] == ["gpu-0", "gpu-1"]
    first, hint = result.stderr.strip().splitlines()
    assert first.startswith("error: not authorised: patch node gpu-"), first
    assert 'cannot patch resource "nodes"' in first
    assert hint.startswith("hint: ")
    assert _taints(cluster, "gpu-0") == [OTHER]

    table = cli("verify", "--kubeconfig", kubeconfig, "--gate", "--toleration", "dedicated")
    assert table.exit_code == 3
    assert "gpu-0" in table.stdout
    assert table.stderr.startswith("error: not authorised: patch node gpu-")
