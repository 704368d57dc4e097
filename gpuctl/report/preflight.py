"""Render a PreflightResult: a rich table for people, a `gpuctl.preflight/v1` JSON envelope for tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.core.preflight import PreflightResult
from gpuctl.report.safe_text import literal
from gpuctl.report.tables import keep_words_whole

if TYPE_CHECKING:
    from rich.console import Console

SCHEMA = "gpuctl.preflight/v1"
_STYLES = {"pass": "green", "warn": "yellow", "fail": "red"}


def to_json(result: PreflightResult) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them."""
    return {
        "schema": SCHEMA,
        "ok": result.ok,
        "inventory": result.inventory,
        "warnings": list(result.warnings),
        "hosts": [
            {
                "name": host.name,
                "address": host.address,
                "ok": host.ok,
                "reachable": host.reachable,
                "findings": [
                    {"id": f.id, "status": f.status, "message": f.message, "hint": f.hint}
                    for f in host.findings
                ],
            }
            for host in result.hosts
        ],
    }


def print_wide(result: PreflightResult, console: Console) -> None:
    """`-o wide`: also the address each host was probed at, and the hints of passing checks."""
    print_table(result, console, wide=True)


def print_table(result: PreflightResult, console: Console, *, wide: bool = False) -> None:
    from rich.table import Table

    for warning in result.warnings:
        console.print(f"warning: {warning}", style="yellow", markup=False, highlight=False)
    table = Table(box=None, pad_edge=False)
    for column in ("HOST", *(("ADDRESS",) if wide else ()), "CHECK", "STATUS", "FINDING"):
        table.add_column(column, overflow="fold")
    for host in result.hosts:
        for finding in host.findings:
            shown = finding.hint and (wide or finding.status != "pass")
            message = finding.message + (f"\n  hint: {finding.hint}" if shown else "")
            address = (host.address,) if wide else ()
            cells = (host.name, *address, finding.id, finding.status.upper(), message)
            table.add_row(*(literal(cell) for cell in cells), style=_STYLES.get(finding.status))
    console.print(keep_words_whole(table, console.width))
    console.print(_summary(result), markup=False, highlight=False)


def _summary(result: PreflightResult) -> str:
    ready = [host.name for host in result.hosts if host.ok]
    blocked = [host.name for host in result.hosts if not host.ok]
    text = f"{len(ready)} of {len(result.hosts)} host(s) ready for `gpuctl bootstrap --phase host`"
    if blocked:
        text += f"; not ready: {', '.join(blocked)} (fix the FAIL rows, then rerun `gpuctl preflight`)"
    return text
