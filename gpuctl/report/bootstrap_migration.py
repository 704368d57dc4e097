"""The migration part of `gpuctl bootstrap --phase cluster --migrate`: its plan (old and new stack,
batches, what each drain evicts, the sharing settings carried and not carried), each node's steps,
what was done to the stacks, and where it stopped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.report import verify as verify_report
from gpuctl.report.safe_text import literal

if TYPE_CHECKING:
    from rich.console import Console

    from gpuctl.core.migrate import MigrationPlan, MigrationResult, NodeMigration
    from gpuctl.core.upgrade import NodePlan, StepResult


def migration_json(result: MigrationResult) -> dict[str, Any]:
    plan = result.plan
    records = {record.plan.node: record for record in result.nodes}
    return {
        "check": result.check,
        "ok": result.ok,
        "interrupted": result.interrupted,
        "from": plan.source.value,
        "to": plan.target.value,
        "max_unavailable": plan.max_unavailable,
        "nodes": [_node_json(node, records.get(node.node), check=result.check) for node in plan.nodes],
        "moved": list(plan.moved),
        "carried": list(plan.carried),
        "not_carried": list(plan.not_carried),
        "dra_feature_gates": list(plan.feature_gates),
        "dra_driver_root": plan.driver_root or None,
        "pinned": list(result.pinned),
        "objects": [{"ref": obj.ref, "action": obj.action} for obj in result.objects],
        "helm": {"action": result.helm.action, "chart": result.helm.chart} if result.helm else None,
        "removed": list(result.removed),
        "verify": verify_report.to_json(result.verify) if result.verify is not None else None,
        "error": result.error,
        "hint": result.hint,
    }


def _node_json(node: NodePlan, record: NodeMigration | None, *, check: bool) -> dict[str, Any]:
    steps = record.steps if record is not None else ()
    return {
        "name": node.node,
        "batch": node.batch,
        "evict": list(node.evict),
        "refused": [{"pod": pod, "reason": why} for pod, why in node.refused],
        "cordoned_before": node.cordoned_before,
        "resuming": node.resuming,
        "expected_gpus": node.expected_gpus,
        "steps": [_step_json(step) for step in steps],
        "outcome": "planned" if check else (record.outcome if record is not None else "pending"),
    }


def migration_plan_lines(plan: MigrationPlan) -> list[tuple[str, str]]:
    """The plan in words, with a style per line."""
    header = f"migration {plan.source.value} -> {plan.target.value}"
    if not plan.nodes:
        moved = ", ".join(plan.moved) or "none"
        left = "; the old stack is removed" if plan.old_stack_present else ": nothing to change"
        return [(f"{header}: every GPU node is on {plan.target.value} ({moved}){left}", "")]
    lines = [(f"{header}: the old stack is removed once the last node has moved", "bold")]
    for number, batch in enumerate(plan.batches, start=1):
        label = "canary" if number == 1 else f"batch {number}"
        lines.append((f"{label}: {', '.join(node.node for node in batch)}", ""))
        lines += [line for node in batch for line in _node_lines(node, plan)]
    if plan.moved:
        lines.append((f"already on {plan.target.value}: {', '.join(plan.moved)}", ""))
    lines += [(f"carried: {note}", "") for note in plan.carried]
    lines += [(f"not carried: {note}", "yellow") for note in plan.not_carried]
    if plan.driver_root:
        lines.append((f"DRA driver: nvidiaDriverRoot {plan.driver_root} (the Operator's driver)", ""))
    return lines


def _node_lines(node: NodePlan, plan: MigrationPlan) -> list[tuple[str, str]]:
    gpus = f"{node.expected_gpus} GPU(s)" if node.expected_gpus is not None else "its GPUs"
    lines = [(f"  {node.node}: {plan.source.value} -> {plan.target.value}, {gpus}", "")]
    if node.check_note:
        lines.append((f"    note: {node.check_note}", "yellow"))
    if node.cordoned_before:
        lines.append(("    cordoned before gpuctl: it stays cordoned afterwards", "yellow"))
    lines.append((f"    drain evicts: {', '.join(node.evict) or 'no pod'}", ""))
    for pod, why in node.refused:
        lines.append((f"    drain refuses: {pod} ({why}); --force-drain evicts it", "red"))
    return lines


def _step_json(step: StepResult) -> dict[str, Any]:
    return {
        "step": step.step,
        "status": step.status,
        "seconds": step.seconds,
        "message": step.message,
        "hint": step.hint,
    }


def print_migration_plan(plan: MigrationPlan, console: Console) -> None:
    for line, style in migration_plan_lines(plan):
        console.print(literal(line, style=style), soft_wrap=True)


def print_migration(result: MigrationResult, console: Console, errors: Console) -> None:
    """The plan (--check), or each node's outcome and what became of the stacks; where it stopped
    and why on `errors`."""
    if result.check or not result.nodes:
        print_migration_plan(result.plan, console)
    for record in result.nodes:
        done = ", ".join(f"{s.step} {s.seconds:.1f}s" for s in record.steps if s.status == "ok")
        style = "green" if record.outcome == "migrated" else "red" if record.outcome == "failed" else ""
        console.print(literal(f"{record.plan.node}: {record.outcome} ({done or 'no step'})", style=style))
    for removed in result.removed:
        console.print(literal(f"removed: {removed}"))
    if result.error:
        errors.print(literal(result.error, style="red"), soft_wrap=True)
        errors.print(literal(f"  hint: {result.hint}"), soft_wrap=True)
    if result.verify is not None:
        verify_report.print_table(result.verify, console)
    _print_stop(result, errors)


def _print_stop(result: MigrationResult, errors: Console) -> None:
    stopped = result.stopped_at
    failed = next((s for s in stopped.steps if s.status != "ok"), None) if stopped is not None else None
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
    stays = f"  {stopped.plan.node} stays cordoned until a rerun proves it{rest}"
    errors.print(literal(stays), soft_wrap=True)
