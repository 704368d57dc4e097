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
    assert report["gate"] | {"writes": 0} == {
        "level": "smi", "dry_run": False, "gated": ["gpu-1"], "ungated": [], "unchanged": ["gpu-0"],
        "failed": [], "writes": 0,
    }  # fmt: skip
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
