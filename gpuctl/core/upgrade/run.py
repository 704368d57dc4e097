"""Run an upgrade plan batch by batch: cordon → drain → host phase → reboot → ready → verify → uncordon.

Each step runs on every node of the batch before the next step starts. The first step that fails
stops the whole upgrade: the node stays cordoned (and marked, so a rerun finishes it), later
batches are not touched. A stop request (Ctrl-C) is honoured between steps, the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuctl.core.proof.gate import GateOptions
from gpuctl.core.proof.options import node_options
from gpuctl.core.proof.prove import prove
from gpuctl.core.proof.readiness import diagnose_with_verify, poll_until_ready
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.registry import stack_for
from gpuctl.core.upgrade.model import (
    NodePlan,
    NodeUpgrade,
    StepResult,
    UpgradeOptions,
    UpgradePlan,
    UpgradeResult,
)
from gpuctl.core.verify.model import ProofOptions, Toleration
from gpuctl.core.verify.run import UNSCHEDULABLE_TAINT_KEY
from gpuctl.errors import GpuctlError
from gpuctl.kube import objects
from gpuctl.kube.drain import cordon, drain, uncordon
from gpuctl.kube.nodes import node_from_json
from gpuctl.kube.upgrade_marks import (
    CORDONED_BY_GPUCTL,
    clear_upgrade_mark,
    core_api,
    mark_upgrading,
    upgrade_mark,
)

if TYPE_CHECKING:
    from gpuctl.core.bootstrap.host import BootstrapResult
    from gpuctl.core.stacks.base import NodeReadiness
    from gpuctl.core.verify.model import Check
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.nodes import NodeInfo

# The verification pod of a cordoned node tolerates the cordon: the node is proven before it opens.
CORDON_TOLERATION = Toleration(UNSCHEDULABLE_TAINT_KEY, "Exists", "", "NoSchedule")

StepProgress = Callable[[str, str, "StepResult | None"], None]  # node, step, None when it starts


class StepFailed(Exception):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


@dataclass(frozen=True)
class UpgradeContext:
    """What every step needs besides its node."""

    api_client: ApiClient
    options: UpgradeOptions
    run_hosts: Callable[[str], BootstrapResult]  # the host phase limited to these hosts (comma-separated)
    stack: Stack
    proof: ProofOptions
    gate: bool
    timeout_s: float  # --timeout: the wait for the node's GPUs and its verification pods
    should_stop: Callable[[], bool]
    on_step: StepProgress | None = None


def run_upgrade(plan: UpgradePlan, context: UpgradeContext) -> UpgradeResult:
    records = {node.node: NodeUpgrade(node) for node in plan.nodes}
    host_runs: list[BootstrapResult] = []
    for batch in plan.batches:
        if not _run_batch(batch, context, records, host_runs):
            break
    interrupted = context.should_stop()  # asked to stop: the command ends as interrupted (130)
    return UpgradeResult(
        plan, False, tuple(records[n.node] for n in plan.nodes), interrupted, tuple(host_runs)
    )


def _run_batch(
    batch: tuple[NodePlan, ...],
    context: UpgradeContext,
    records: dict[str, NodeUpgrade],
    host_runs: list[BootstrapResult],
) -> bool:
    """Every step on every node of the batch; False at the first that does not pass."""
    host_step: dict[str, tuple[str, str]] = {}  # node → (message, error) of the batch's host run

    def run_hosts(node: NodePlan) -> str:
        if not host_step:
            result = context.run_hosts(",".join(n.host for n in batch))
            host_runs.append(result)
            host_step.update({n.node: _host_verdict(result, n.host) for n in batch})
        message, error = host_step[node.node]
        if error:
            raise StepFailed(error, message)
        return message

    actions: dict[str, Callable[[NodePlan], str]] = {
        "cordon": lambda node: cordon_node(context, node),
        "drain": lambda node: drain_node(context, node),
        "host": run_hosts,
        "reboot": lambda node: _reboot(host_runs[-1], node),
        "ready": lambda node: _wait_ready(context, node),
        "verify": lambda node: prove_node(context, node),
        "uncordon": lambda node: uncordon_node(context, node),
    }
    for step, action in actions.items():
        for node in batch:
            result = run_step(step, node, action, context)
            records[node.node] = replace(records[node.node], steps=(*records[node.node].steps, result))
            if result.status != "ok":
                return False
    return True


def run_step(
    step: str, node: NodePlan, action: Callable[[NodePlan], str], context: UpgradeContext
) -> StepResult:
    if context.should_stop():
        return StepResult(step, "interrupted", 0.0, "stopped before this step (interrupted)")
    if context.on_step is not None:
        context.on_step(node.node, step, None)
    started = time.monotonic()
    try:
        result = StepResult(step, "ok", 0.0, action(node))
    except StepFailed as failure:
        status = "interrupted" if context.should_stop() else "failed"
        result = StepResult(step, status, 0.0, failure.message, failure.hint)
    except GpuctlError as error:
        result = StepResult(step, "failed", 0.0, error.message, error.hint)
    result = replace(result, seconds=round(time.monotonic() - started, 2))
    if context.on_step is not None:
        context.on_step(node.node, step, result)
    return result


def cordon_node(context: UpgradeContext, node: NodePlan) -> str:
    mark = mark_upgrading(context.api_client, node.node)
    cordoned = cordon(core_api(context.api_client), node.node)
    if mark != CORDONED_BY_GPUCTL:
        return "cordoned before gpuctl started: it stays cordoned"
    return "cordoned" if cordoned else "cordoned (by an earlier run)"


def drain_node(context: UpgradeContext, node: NodePlan) -> str:
    result = drain(
        core_api(context.api_client),
        node.node,
        force=context.options.force_drain,
        timeout_s=context.options.drain_timeout_s,
        should_stop=context.should_stop,
    )
    if result.error:
        raise StepFailed(result.error, "the node stays cordoned; fix the cause, then rerun the same command")
    pods = ", ".join(str(pod) for pod in result.evicted)
    return f"evicted {len(result.evicted)} pod(s)" + (f": {pods}" if pods else "")


def _host_verdict(result: BootstrapResult, host: str) -> tuple[str, str]:
    """(message, error) of one host in the batch's host run; error "" when it passed."""
    outcome = next((h for h in result.hosts if h.name == host), None)
    if result.interrupted:
        return "", f"host phase on {host} interrupted"
    if outcome is not None and outcome.succeeded and result.ok:
        return f"{outcome.changed} change(s)", ""
    task = next((t for t in result.failed_tasks if t.host == host), None)
    if task is not None:
        cause = outcome.diagnosis.found if outcome is not None and outcome.diagnosis else None
        error = f"task {task.task!r} failed on {host}: {task.message}"
        return (f"{cause.cause}; {cause.hint}" if cause else "see the failed task above"), error
    return "", f"host phase on {host} failed: {result.error or result.status}"


def _reboot(result: BootstrapResult, node: NodePlan) -> str:
    """What the driver role did about a reboot. A reboot its policy left pending is no failure by
    itself: the proof that follows decides (a driver that needs it fails there, diagnosed)."""
    outcome = next((h for h in result.hosts if h.name == node.host), None)
    driver = outcome.driver if outcome is not None else None
    if driver is not None and driver.reboot_required:
        return f"not rebooted ({driver.message}; gpuctl_reboot_policy does not reboot it): the proof decides"
    return driver.message if driver is not None else "no driver change needing a reboot"


def _wait_ready(context: UpgradeContext, node: NodePlan) -> str:
    """Wait until the node is Ready and its stack says it advertises its GPUs again: the one
    readiness wait (gpuctl.core.proof.readiness). A node not Ready yet is not diagnosed: its
    plugin's last words may be from before its reboot."""
    stack = stack_for(context.stack)
    expected = {node.node: node.expected_gpus}
    latest: dict[str, NodeInfo | None] = {}

    def read() -> list[NodeReadiness]:
        raw = objects.read_node(context.api_client, node.node)
        info = latest[node.node] = node_from_json(raw) if raw is not None else None
        state = stack.readiness(context.api_client, expected)[0]
        return [state if info is not None and info.ready else replace(state, plugin_ready=False)]

    def diagnose(stuck: list[NodeReadiness]) -> dict[str, Check | None]:
        info = latest.get(node.node)
        return diagnose_with_verify(context.api_client, stuck) if info is not None and info.ready else {}

    started = time.monotonic()
    (state,), _ = poll_until_ready(read, diagnose, context.timeout_s, should_stop=context.should_stop)
    if state.ready:
        return f"Ready, {state.allocatable} GPU(s) advertised"
    waited = f"after {time.monotonic() - started:.0f}s"
    info = latest.get(node.node)
    if info is None or not info.ready:
        why = f"{info.ready_reason}: {info.ready_message}" if info is not None else "node gone"
        raise StepFailed(f"node {node.node} not Ready {waited} ({why})")
    problem = state.problem
    detail = f"{problem.id}: {problem.message}" if problem is not None else "no GPUs advertised"
    raise StepFailed(
        f"node {node.node} does not advertise its GPUs {waited}: {detail}",
        problem.hint if problem is not None else "",
    )


def prove_node(context: UpgradeContext, node: NodePlan) -> str:
    """The verify step: gpuctl.core.proof.prove on the node, which the upgrade cordoned and drained
    itself (its cordon is no failure; GPUs still held, a DaemonSet's pod, leave it unproven), and
    with the gate (taint, GPUProven condition, per-GPU rules) on its verdict alone."""
    options = node_options(
        {node.node: node.expected_gpus},
        proof=context.proof,
        timeout_s=context.timeout_s,
        tolerations=(CORDON_TOLERATION,),
    )
    gate = GateOptions() if context.gate else None
    proof = prove(context.api_client, options=options, gate=gate, nodes=(node.node,), cordoned=True)
    refusal = proof.gate_refusal()
    if refusal is not None:
        raise refusal
    verdict = proof.of(node.node)
    if verdict is None:
        raise StepFailed(f"verify found no GPU node {node.node}")
    if verdict.failures:
        first = verdict.failures[0]
        raise StepFailed(f"{first.id}: {first.message}", first.hint)
    seen = next(found.gpus.seen for found in proof.result.nodes if found.name == node.node)
    return f"proven at level {context.proof.level}: {seen} GPU(s) seen"


def uncordon_node(context: UpgradeContext, node: NodePlan) -> str:
    raw = objects.read_node(context.api_client, node.node)
    mark = upgrade_mark(raw) if raw is not None else ""
    if mark == CORDONED_BY_GPUCTL:
        uncordon(core_api(context.api_client), node.node)
        message = "uncordoned"
    else:
        message = "left cordoned: it was cordoned before gpuctl started"
    clear_upgrade_mark(context.api_client, node.node)
    return message
