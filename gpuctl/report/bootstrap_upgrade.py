"""The node-by-node part of `gpuctl bootstrap`: its plan (order, batches, what changes on each
node, what each drain evicts and refuses), each node's steps, and where it stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.core.upgrade import NodePlan, NodeUpgrade, StepResult, UpgradePlan, UpgradeResult
from gpuctl.report.safe_text import literal

if TYPE_CHECKING:
    from rich.console import Console

CHANGES_NAMED = 6  # a plan line names the first tasks that would change the node, then counts the rest


def upgrade_json(result: UpgradeResult) -> dict[str, Any]:
    records = {record.plan.node: record for record in result.nodes}
    return {
        "check": result.check,
        "ok": result.ok,
        "interrupted": result.interrupted,
        "max_unavailable": result.plan.max_unavailable,
        "nodes": [_node_json(node, records.get(node.node), check=result.check) for node in result.plan.nodes],
        "unchanged": [{"host": host, "name": node} for host, node in result.plan.unchanged],
    }


def _node_json(node: NodePlan, record: NodeUpgrade | None, *, check: bool) -> dict[str, Any]:
    steps = record.steps if record is not None else ()
    return {
        "name": node.node,
        "host": node.host,
        "batch": node.batch,
        "changes": list(node.changes),
        "check_note": node.check_note,
        "evict": list(node.evict),
        "refused": [{"pod": pod, "reason": why} for pod, why in node.refused],
        "cordoned_before": node.cordoned_before,
        "resuming": node.resuming,
        "expected_gpus": node.expected_gpus,
        "steps": [_step_json(step) for step in steps],
        "outcome": "planned" if check else (record.outcome if record is not None else "pending"),
    }


def _step_json(step: StepResult) -> dict[str, Any]:
    return {
        "step": step.step,
        "status": step.status,
        "seconds": step.seconds,
        "message": step.message,
        "hint": step.hint,
    }


def plan_lines(plan: UpgradePlan) -> list[tuple[str, str]]:
    """The plan in words, with a style per line: each batch, its nodes, their changes and drains."""
    if not plan.nodes:
        untouched = ", ".join(node for _, node in plan.unchanged) or "none"
        return [(f"node-by-node upgrade: nothing to change on the cluster's GPU nodes ({untouched})", "")]
    lines = [
        (
            f"node-by-node upgrade: {len(plan.nodes)} node(s) in {len(plan.batches)} batch(es), "
            f"a canary first, then {plan.max_unavailable} at a time",
            "bold",
        )
    ]
    for number, batch in enumerate(plan.batches, start=1):
        label = "canary" if number == 1 else f"batch {number}"
        lines.append((f"{label}: {', '.join(node.node for node in batch)}", ""))
        for node in batch:
            lines += _node_lines(node)
    if plan.unchanged:
        lines.append((f"not touched (nothing to change): {', '.join(n for _, n in plan.unchanged)}", ""))
    return lines


def _node_lines(node: NodePlan) -> list[tuple[str, str]]:
    named = ", ".join(node.changes[:CHANGES_NAMED])
    more = f" and {len(node.changes) - CHANGES_NAMED} more" if len(node.changes) > CHANGES_NAMED else ""
    changes = f"{len(node.changes)} task(s) would change: {named}{more}" if node.changes else "no task change"
    lines = [(f"  {node.node} (host {node.host}): {changes}", "")]
    if node.check_note:
        lines.append((f"    note: {node.check_note}", "yellow"))
    if node.cordoned_before:
        lines.append(("    cordoned before gpuctl: it stays cordoned afterwards", "yellow"))
    evict = ", ".join(node.evict) or "no pod"
    lines.append((f"    drain evicts: {evict}", ""))
    for pod, why in node.refused:
        lines.append((f"    drain refuses: {pod} ({why}); --force-drain evicts it", "red"))
    return lines


def print_plan(plan: UpgradePlan, console: Console) -> None:
    for line, style in plan_lines(plan):
        console.print(literal(line, style=style), soft_wrap=True)


def step_line(node: str, step: str, result: StepResult | None) -> str:
    """One step of one node as it starts (`result` None) or ends."""
    if result is None:
        return f"{node}: {step} ..."
    text = f"{node}: {step} {result.status} ({result.seconds:.1f}s): {result.message}"
    return text + (f"\n  hint: {result.hint}" if result.hint and result.status != "ok" else "")


def print_upgrade(result: UpgradeResult, console: Console, errors: Console) -> None:
    """The plan (--check), or each node's outcome; where it stopped and why on `errors`."""
    if result.check:
        print_plan(result.plan, console)
        return
    for record in result.nodes:
        done = ", ".join(f"{s.step} {s.seconds:.1f}s" for s in record.steps if s.status == "ok")
        style = "green" if record.outcome == "upgraded" else "red" if record.outcome == "failed" else ""
        console.print(literal(f"{record.plan.node}: {record.outcome} ({done or 'no step'})", style=style))
    if result.plan.unchanged:
        names = ", ".join(node for _, node in result.plan.unchanged)
        console.print(literal(f"not touched (nothing to change): {names}"))
    stopped = result.stopped_at
    failed = stopped.failed_step if stopped is not None else None
    if stopped is None or failed is None:
        return
    errors.print(
        literal(f"{stopped.plan.node}: stopped at step {failed.step}: {failed.message}", style="red"),
        soft_wrap=True,
    )
    if failed.hint:
        errors.print(literal(f"  hint: {failed.hint}"), soft_wrap=True)
    untouched = [r.plan.node for r in result.nodes if not r.steps]
    rest = f"; not touched: {', '.join(untouched)}" if untouched else ""
    errors.print(
        literal(f"  {stopped.plan.node} stays cordoned until a rerun proves it{rest}"), soft_wrap=True
    )
