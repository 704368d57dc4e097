"""The callers of gpuctl.core.proof.prove against the simulated cluster: bootstrap's verify phase and
the upgrade's verify step gate as `verify --gate` does (the taint, and the GPUProven condition on
every node judged), and the upgrade's ready step is the one readiness wait, which stops at a node
diagnosed beyond the cluster layer instead of waiting out its timeout."""

from __future__ import annotations

import json
import time
from typing import Any

from gpuctl.core.bootstrap.host import BootstrapResult
from gpuctl.core.stacks import Stack
from gpuctl.core.upgrade.model import NodePlan, UpgradeOptions
from gpuctl.core.upgrade.run import UpgradeContext, _wait_ready, cordon_node, prove_node, run_step
from gpuctl.core.verify.model import ProofOptions
from tests.polling import wait_until

GATE = {"key": "gpuctl.io/unproven", "value": "smi", "effect": "NoSchedule"}


def _node(cluster: Any, name: str) -> Any:
    from kubernetes.client import CoreV1Api

    return CoreV1Api(cluster.api_client()).read_node(name)


def _condition(cluster: Any, name: str) -> tuple[str, str] | None:
    found = [c for c in _node(cluster, name).status.conditions or [] if c.type == "GPUProven"]
    return (found[0].status, found[0].reason) if found else None


def _taints(cluster: Any, name: str) -> list[dict[str, str]]:
    return [
        {"key": t.key, "value": t.value, "effect": t.effect} for t in _node(cluster, name).spec.taints or []
    ]


def _plan(node: str) -> NodePlan:
    return NodePlan(
        host=node,
        node=node,
        batch=1,
        changes=(),
        evict=(),
        refused=(),
        cordoned_before=False,
        expected_gpus=2,
    )


def _no_host_run(limit: str) -> BootstrapResult:
    raise AssertionError(f"these steps run no host phase (asked for {limit})")


def _context(cluster: Any, timeout_s: float) -> UpgradeContext:
    return UpgradeContext(
        api_client=cluster.api_client(),
        options=UpgradeOptions(),
        run_hosts=_no_host_run,
        stack=Stack.DEVICE_PLUGIN,
        proof=ProofOptions(),
        gate=True,
        timeout_s=timeout_s,
        should_stop=lambda: False,
    )


def test_bootstrap_verify_phase_publishes_the_condition_and_gates_the_failing_node(
    sim: Any, cli: Any
) -> None:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 2}],
        }
    )
    wait_until(lambda: set(cluster.allocatable_gpus().values()) == {2}, "GPUs advertised")
    from kubernetes.client import CoreV1Api

    CoreV1Api(cluster.api_client()).patch_node("gpu-1", {"spec": {"unschedulable": True}})
    result = cli("bootstrap", "--phase", "verify", "--kubeconfig", cluster.kubeconfig, "-o", "json")
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verify"]["gate"]["gated"] == ["gpu-1"]
    assert (GATE in _taints(cluster, "gpu-1"), GATE in _taints(cluster, "gpu-0")) == (True, False)
    assert (_condition(cluster, "gpu-0"), _condition(cluster, "gpu-1")) == (
        ("True", "smi"),
        ("False", "node.schedulable"),
    )


def test_the_upgrade_proves_its_cordoned_node_and_publishes_the_condition(sim: Any) -> None:
    cluster = sim(
        {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 2}]}
    )
    wait_until(lambda: cluster.allocatable_gpus().get("gpu-0") == 2, "GPUs advertised")
    context, plan = _context(cluster, 60.0), _plan("gpu-0")
    assert run_step("cordon", plan, lambda node: cordon_node(context, node), context).status == "ok"
    verified = run_step("verify", plan, lambda node: prove_node(context, node), context)
    assert (verified.status, verified.message) == ("ok", "proven at level smi: 2 GPU(s) seen")
    assert _condition(cluster, "gpu-0") == ("True", "smi")  # its own cordon is no failure


def test_the_upgrade_ready_step_stops_at_a_node_stuck_beyond_the_cluster(sim: Any) -> None:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-0", "gpus": 2, "host": {"driver": "missing", "toolkit": "configured"}}],
        }
    )
    context, plan = _context(cluster, 60.0), _plan("gpu-0")
    started = time.monotonic()
    waited = run_step("ready", plan, lambda node: _wait_ready(context, node), context)
    assert waited.status == "failed"
    assert waited.message.startswith("node gpu-0 does not advertise its GPUs after "), waited.message
    assert time.monotonic() - started < 30, "diagnosed beyond the cluster layer: no use waiting out --timeout"
