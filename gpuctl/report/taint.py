"""Render a TaintResult: a rich table for people, a `gpuctl.taint/v1` JSON envelope for tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.core.taint import TaintResult
from gpuctl.report.safe_text import literal
from gpuctl.report.tables import emit_table, keep_words_whole

if TYPE_CHECKING:
    from rich.console import Console

_STYLES = {
    "added": "green",
    "updated": "green",
    "removed": "green",
    "unchanged": "dim",
    "failed": "bold red",
}


SCHEMA = "gpuctl.taint/v1"


def to_json(result: TaintResult) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them."""
    return {
        "schema": SCHEMA,
        "ok": result.ok,
        "taint": {"key": result.taint.key, "value": result.taint.value, "effect": result.taint.effect},
        "mode": "remove" if result.remove else "apply",
        "dry_run": result.dry_run,
        "selection": result.selection,
        "writes": result.writes,
        "nodes": [
            {
                "name": change.node,
                "action": change.action,
                "before": change.before,
                "after": change.after,
                "conflicts_retried": change.conflicts_retried,
                "message": change.message,
            }
            for change in result.nodes
        ],
        "warnings": [
            {
                "namespace": warning.namespace,
                "daemonset": warning.name,
                "component": warning.component,
                "message": warning.message,
                "hint": warning.hint,
            }
            for warning in result.warnings
        ],
        "notes": list(result.notes),
        "evictions": [
            {"namespace": pod.namespace, "name": pod.name, "node": pod.node, "owner": pod.owner}
            for pod in result.evictions
        ],
    }


def _summary(result: TaintResult) -> str:
    verb = "remove" if result.remove else "set"
    mode = " (server-side dry run: nothing was changed)" if result.dry_run else ""
    changed = sum(change.action not in ("unchanged", "failed") for change in result.nodes)
    return (
        f"{verb} taint {result.taint} on {result.selection}: {len(result.nodes)} node(s), "
        f"{changed} {'to change' if result.dry_run else 'changed'}, {result.writes} write(s){mode}"
    )


def print_table(result: TaintResult, console: Console) -> None:
    from rich.table import Table

    if not result.nodes:
        from gpuctl.report.console import make_console

        errors = make_console(stderr=True)  # an outcome that exits 1 is said on stderr
        errors.print(f"error: no node matched: {result.selection}", markup=False, soft_wrap=True)
        errors.print("hint: pass --nodes or --selector, or check the GPU nodes with `gpuctl status`")
    else:
        table = Table(title=None, box=None, pad_edge=False)
        for column in ("NODE", "ACTION", "BEFORE", "AFTER", "NOTE"):
            table.add_column(column, overflow="fold")
        for change in result.nodes:
            style = _STYLES.get(change.action, "yellow")
            note = change.message or (
                f"{change.conflicts_retried} conflict(s) retried" if change.conflicts_retried else ""
            )
            cells = (change.node, change.action, change.before or "-", change.after or "-", note)
            table.add_row(*(literal(cell) for cell in cells), style=style)
        emit_table(console, keep_words_whole(table, console.width))
    # Prose lines stay one line each (soft_wrap) so that logs and grep see whole sentences.
    console.print(_summary(result), markup=False, soft_wrap=True)
    verb = "would evict" if result.dry_run else "evicted"
    for pod in result.evictions:
        console.print(f"{verb}: {pod}", style="yellow", markup=False, soft_wrap=True)
    for warning in result.warnings:
        console.print(f"warning: {warning.message}", style="yellow", markup=False, soft_wrap=True)
        console.print(f"  hint: {warning.hint}", markup=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"note: {note}", style="dim", markup=False, soft_wrap=True)
