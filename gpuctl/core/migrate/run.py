"""Run a migration: hold the old stack to its nodes, put the new one in place, then batch by batch
cordon → drain → move (the node's stack label) → serve (the new stack serves it, the old has left)
→ verify (at --level, through the new stack's own way of handing out GPUs) → uncordon, with the upgrade's
steps (gpuctl.core.upgrade.run). The first step that fails stops the run with that node cordoned
and marked (a rerun finishes it); a stop request (Ctrl-C) is honoured between steps. Once the last
node has moved, the old stack goes and the whole cluster is verified on the new one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gpuctl.core.bootstrap.cluster import diagnose_with_verify
from gpuctl.core.migrate.model import (
    STACK_LABEL,
    MigrationPlan,
    MigrationResult,
    NodeMigration,
)
from gpuctl.core.migrate.plan import plan_migration
from gpuctl.core.migrate.stacks import (
    extended_resource_problem,
    has_left,
    hold_old_stack,
    install_new_stack,
    label_node,
    new_stack_options,
    remove_old_stack,
    wait_until_serving,
)
from gpuctl.core.stacks.base import ClusterOptions
from gpuctl.core.stacks.registry import stack_for
from gpuctl.core.upgrade.model import NodePlan, UpgradeOptions
from gpuctl.core.upgrade.phase import in_worker_thread
from gpuctl.core.upgrade.run import (
    StepFailed,
    StepProgress,
    UpgradeContext,
    cordon_node,
    drain_node,
    prove_node,
    run_step,
    uncordon_node,
)
from gpuctl.core.verify.model import Expectations, ProofOptions, VerifyOptions, VerifyResult
from gpuctl.core.verify.run import verify
from gpuctl.kube.nodes import list_nodes

if TYPE_CHECKING:
    from gpuctl.core.bootstrap.host import BootstrapResult
    from gpuctl.kube.client import ApiClient

POLL_S = 1.0
STAYS_CORDONED = "the node stays cordoned; fix the cause, then rerun the same command"


@dataclass(frozen=True)
class MigrationRequest:
    """What `bootstrap --phase cluster --stack NEW --migrate` asks; `cluster.stack` is the new stack."""

    cluster: ClusterOptions
    upgrade: UpgradeOptions = field(default_factory=UpgradeOptions)
    proof: ProofOptions = field(default_factory=ProofOptions)
    gate: bool = True
    timeout_s: float = 300.0  # --timeout: the wait for a moved node's GPUs and its verification pods


MigrationPlanHook = Callable[[MigrationPlan], None]


def run_migration(
    api_client: ApiClient,
    request: MigrationRequest,
    expected: dict[str, int | None],
    *,
    on_plan: MigrationPlanHook | None = None,
    on_step: StepProgress | None = None,
) -> MigrationResult:
    """Plan (reported through `on_plan` before anything is written; with --check that is all),
    then move the nodes; `expected`: every GPU node → the GPUs it must offer (None: at least one)."""
    target = request.cluster.stack
    plan = plan_migration(api_client, target, expected, request.upgrade)
    if on_plan is not None:
        on_plan(plan)
    if request.cluster.check or plan.nothing_to_do:
        return MigrationResult(plan, check=request.cluster.check)
    options = new_stack_options(request.cluster, target, plan.feature_gates, plan.driver_root)
    prepared = _prepare_stacks(api_client, plan, options, request.timeout_s)
    if prepared.error:
        return prepared
    context = UpgradeContext(
        api_client=api_client,
        options=request.upgrade,
        run_hosts=_no_host_phase,
        stack=target,
        proof=request.proof,
        gate=request.gate,
        timeout_s=request.timeout_s,
        should_stop=lambda: False,
        on_step=on_step,
    )
    result = in_worker_thread(
        lambda should_stop: _move_nodes(prepared, replace(context, should_stop=should_stop))
    )
    if not result.ok or result.interrupted:
        return result
    removed = remove_old_stack(api_client, plan.source, options) if plan.old_stack_present else ()
    return replace(result, removed=removed, verify=_verify_all(api_client, expected, request))


def _prepare_stacks(
    api_client: ApiClient, plan: MigrationPlan, options: ClusterOptions, timeout_s: float
) -> MigrationResult:
    """Hold the old stack to its nodes, put the new one in place; the result says why no node
    may move yet (`error`), if so."""
    target = plan.target
    labels = {node.name: node.labels.get(STACK_LABEL) for node in list_nodes(api_client)}
    unlabelled = [node.node for node in plan.nodes if labels.get(node.node) is None]
    # The nodes the old stack serves now must still be served once its pods restarted (held).
    on_source = {
        node.node: node.expected_gpus for node in plan.nodes if labels.get(node.node) != target.value
    }
    states = stack_for(plan.source).readiness(api_client, on_source)
    serving = {state.node: state.expected for state in states if state.ready}
    pinned = hold_old_stack(api_client, plan.source, unlabelled) if plan.nodes else ()
    restarted = any(written.startswith("daemonset") for written in pinned)
    lost = wait_until_serving(api_client, plan.source, serving, timeout_s) if restarted else ""
    objects, helm = install_new_stack(api_client, options) if not lost else ((), None)
    result = MigrationResult(plan, False, objects=objects, helm=helm, pinned=pinned)
    conflicts = [obj.ref for obj in objects if obj.action == "conflict"]
    problem = f"{plan.source.value} no longer serves {lost} after its pods restarted" if lost else ""
    problem = problem or (f"conflicts on {', '.join(conflicts)}" if conflicts else "")
    problem = problem or extended_resource_problem(api_client, target)
    if not problem:
        return result
    return replace(result, error=f"no node moved: {problem}", hint="fix it, then rerun the same command")


def _no_host_phase(limit: str) -> BootstrapResult:
    raise StepFailed(f"a migration runs no host phase (asked for {limit})")


def _move_nodes(result: MigrationResult, context: UpgradeContext) -> MigrationResult:
    plan = result.plan
    records = {node.node: NodeMigration(node) for node in plan.nodes}
    actions: dict[str, Callable[[NodePlan], str]] = {
        "cordon": lambda node: cordon_node(context, node),
        "drain": lambda node: drain_node(context, node),
        "move": lambda node: _move(context, node, plan),
        "serve": lambda node: _wait_served(context, node, plan),
        "verify": lambda node: prove_node(context, node),
        "uncordon": lambda node: uncordon_node(context, node),
    }
    for batch in plan.batches:
        if not _run_batch(batch, actions, context, records):
            break
    nodes = tuple(records[node.node] for node in plan.nodes)
    return replace(result, nodes=nodes, interrupted=context.should_stop())


def _run_batch(
    batch: tuple[NodePlan, ...],
    actions: dict[str, Callable[[NodePlan], str]],
    context: UpgradeContext,
    records: dict[str, NodeMigration],
) -> bool:
    """Every step on every node of the batch; False at the first that does not pass."""
    for step, action in actions.items():
        for node in batch:
            result = run_step(step, node, action, context)
            records[node.node] = replace(records[node.node], steps=(*records[node.node].steps, result))
            if result.status != "ok":
                return False
    return True


def _move(context: UpgradeContext, node: NodePlan, plan: MigrationPlan) -> str:
    more = stack_for(plan.source).leave_labels()
    written = label_node(context.api_client, node.node, plan.target, more)
    label = ", ".join(f"{key}={value}" for key, value in {STACK_LABEL: plan.target.value, **more}.items())
    return f"labelled {label}" if written else f"already labelled {label} (by an earlier run)"


def _wait_served(context: UpgradeContext, node: NodePlan, plan: MigrationPlan) -> str:
    """Wait until the new stack serves the node with its GPUs and the old one has left it."""
    stack = stack_for(plan.target)
    expected = {node.node: node.expected_gpus}
    deadline = time.monotonic() + context.timeout_s
    while True:
        state = stack.readiness(context.api_client, expected)[0]
        left = has_left(context.api_client, plan.source, node.node)
        if state.ready and not left:
            return f"{plan.target.value} serves {state.allocatable} GPU(s); {plan.source.value} has left"
        if time.monotonic() >= deadline or context.should_stop():
            break
        time.sleep(POLL_S)
    waited = f"after {context.timeout_s:.0f}s"
    if state.ready:
        raise StepFailed(
            f"node {node.node}: {plan.source.value} has not left {waited}: {left}", STAYS_CORDONED
        )
    problem = diagnose_with_verify(context.api_client, [state]).get(node.node)
    serving = stack_for(plan.target).unserved
    plugin = "its plugin pod is ready" if state.plugin_ready else "its plugin pod is not ready"
    detail = f" ({problem.id}: {problem.message})" if problem is not None else ""
    raise StepFailed(
        f"node {node.node}: {plan.target.value} {serving} for it {waited}, {state.allocatable} of "
        f"{node.expected_gpus or 'its'} GPU(s) offered; {plugin}{detail}",
        (f"{problem.hint}; " if problem is not None and problem.hint else "") + STAYS_CORDONED,
    )


def _verify_all(
    api_client: ApiClient, expected: dict[str, int | None], request: MigrationRequest
) -> VerifyResult:
    gpus = tuple((node, count) for node, count in sorted(expected.items()) if count is not None)
    expectations = Expectations(node_patterns=tuple(sorted(expected)), gpus_by_pattern=gpus)
    options = VerifyOptions(expectations=expectations, timeout_s=request.timeout_s, proof=request.proof)
    return verify(api_client, options)
