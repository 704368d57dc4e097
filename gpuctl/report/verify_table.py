"""`gpuctl verify` for people: one row per GPU node, then the cluster checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.verify_model import Check, NodeResult, Status, VerifyResult

if TYPE_CHECKING:
    from rich.console import Console

_STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.WARN: "yellow", Status.SKIP: "dim"}


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _node_status(node: NodeResult) -> Status:
    if not node.ok:
        return Status.FAIL
    return Status.WARN if any(c.status is Status.WARN for c in node.checks) else Status.PASS


def _problem(check: Check | None) -> str:
    if check is None:
        return ""
    text = f"{check.id}: {check.message}"
    return f"{text}\nhint: {check.hint}" if check.hint else text


def _nodes_table(result: VerifyResult) -> object:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="GPU nodes", title_justify="left", show_lines=True)
    for column in ("NODE", "GPUS exp/cap/alloc/seen", "PRODUCT", "DRIVER", "STATUS"):
        table.add_column(column, no_wrap=True)
    table.add_column("FIRST PROBLEM + HINT", overflow="fold")
    for node in result.nodes:
        gpus = node.gpus
        counts = "/".join(_count(v) for v in (gpus.expected, gpus.capacity, gpus.allocatable, gpus.seen))
        status = _node_status(node)
        table.add_row(
            node.name,
            counts,
            node.product or "-",
            node.driver_version or "-",
            Text(status.value.upper(), style=_STYLE[status]),
            Text(_problem(node.first_problem)),
        )
    return table


def _cluster_table(result: VerifyResult) -> object:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Cluster checks", title_justify="left")
    table.add_column("CHECK", no_wrap=True)
    table.add_column("STATUS", no_wrap=True)
    table.add_column("MESSAGE + HINT", overflow="fold")
    for check in result.cluster_checks:
        text = f"{check.message}\nhint: {check.hint}" if check.hint else check.message
        table.add_row(check.id, Text(check.status.value.upper(), style=_STYLE[check.status]), Text(text))
    return table


def render_verify_table(result: VerifyResult, console: Console) -> None:
    if result.nodes:
        console.print(_nodes_table(result))
    console.print(_cluster_table(result))
    failed_nodes = sum(not node.ok for node in result.nodes)
    verdict = "all GPU nodes verified" if result.ok else f"FAILED: {failed_nodes} node(s) with failing checks"
    if not result.ok and failed_nodes == 0:
        verdict = "FAILED: a cluster check failed"
    console.print(
        f"{verdict} ({len(result.nodes)} node(s), {result.pods_created} verification pod(s), "
        f"{result.duration_s:.1f}s)",
        style="green" if result.ok else "bold red",
        markup=False,
    )
