"""Render a BootstrapResult: a summary table with the failing tasks, or a `gpuctl.bootstrap/v1` envelope."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.core.bootstrap import SCHEMA, BootstrapResult, HostOutcome, failed_task_hint

if TYPE_CHECKING:
    from rich.console import Console


def bootstrap_json(result: BootstrapResult) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them."""
    return {
        "schema": SCHEMA,
        "ok": result.ok,
        "phase": result.phase,
        "check": result.check,
        "status": result.status,
        "inventory": result.inventory,
        "playbook": result.playbook,
        "hosts": [
            {
                "name": host.name,
                "ok": host.succeeded,
                "ok_tasks": host.ok_tasks,
                "changed": host.changed,
                "failed": host.failed,
                "unreachable": host.unreachable,
                "skipped": host.skipped,
                "driver": _driver_json(host),
            }
            for host in result.hosts
        ],
        "failed_tasks": [
            {
                "host": task.host,
                "task": task.task,
                "action": task.action,
                "message": task.message,
                "unreachable": task.unreachable,
                "hint": failed_task_hint(task, result.inventory),
            }
            for task in result.failed_tasks
        ],
        "error": result.error,
        "interrupted": result.interrupted,
        "duration_s": result.duration_s,
        "artifacts_dir": result.artifacts_dir,
        "warnings": list(result.warnings),
    }


def _driver_json(host: HostOutcome) -> dict[str, Any] | None:
    """What the driver role found on the host (null when it did not run there)."""
    if host.driver is None:
        return None
    return {
        "state": host.driver.state,
        "message": host.driver.message,
        "reboot_required": host.driver.reboot_required,
        "dkms": host.driver.dkms,
    }


def render_bootstrap_summary(result: BootstrapResult, console: Console) -> None:
    from rich.table import Table
    from rich.text import Text

    for warning in result.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
    table = Table(box=None, pad_edge=False)
    for column in ("HOST", "RESULT", "OK", "CHANGED", "FAILED", "UNREACHABLE", "SKIPPED"):
        table.add_column(column)
    for host in result.hosts:
        verdict = host_verdict(host, interrupted=result.interrupted)
        counts = (host.ok_tasks, host.changed, host.failed, host.unreachable, host.skipped)
        style = None if host.succeeded else "red"
        table.add_row(Text(host.name), verdict, *(str(count) for count in counts), style=style)
    console.print(table)
    for host in result.hosts:
        for line in host.driver.notes() if host.driver else ():
            console.print(Text(f"{host.name}: {line}", style="yellow"))
    for task in result.failed_tasks:
        console.print(Text(f"{task.host}: task {task.task!r} failed: {task.message}", style="red"))
        console.print(Text(f"  hint: {failed_task_hint(task, result.inventory)}"))
    if result.error:
        console.print(Text(f"error: {result.error}", style="red"))
        console.print(Text("  hint: run the same with `-- -vvv` for ansible's details"))
    console.print(Text(_footer(result)))


def host_verdict(host: HostOutcome, *, interrupted: bool) -> str:
    """The RESULT column: a host is "ok" only when it is prepared (its play ran to the end)."""
    if host.succeeded:
        return "ok"
    if host.unreachable:
        return "UNREACHABLE"
    if host.failed:
        return "FAILED"
    return "CANCELLED" if interrupted else "INCOMPLETE"


def _footer(result: BootstrapResult) -> str:
    good, total = sum(host.succeeded for host in result.hosts), len(result.hosts)
    if result.interrupted:
        return (
            f"interrupted after {result.duration_s:.1f}s: the run was cancelled, "
            f"{good} of {total} host(s) prepared; rerun the same command to finish"
        )
    changed = sum(host.changed for host in result.hosts)
    if result.check:
        text = f"check mode, nothing changed: {good} of {total} host(s) checked, {changed} change(s) pending"
    else:
        text = f"{good} of {total} host(s) prepared, {changed} change(s)"
    text += f", {result.duration_s:.1f}s"
    if result.artifacts_dir:
        text += f"; artifacts kept in {result.artifacts_dir}"
    return text
