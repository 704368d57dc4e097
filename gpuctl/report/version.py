"""Render a ComponentsResult: a table for people, a `gpuctl.version/v1` JSON envelope for tools."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from gpuctl.core.components import ComponentsResult

SCHEMA = "gpuctl.version/v1"


def to_json(result: ComponentsResult) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them. `components`
    is present only with --components."""
    document: dict[str, Any] = {"schema": SCHEMA, "version": result.gpuctl_version}
    if result.with_components:
        document["components"] = [asdict(component) for component in result.components]
    return document


def _table(result: ComponentsResult, columns: tuple[str, ...]) -> Any:
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column.upper().replace("_", " "), overflow="fold")
    for component in result.components:
        row = asdict(component)
        table.add_row(*(row[column] for column in columns))
    return table


def print_table(result: ComponentsResult, console: Console) -> None:
    console.print(f"gpuctl {result.gpuctl_version}", highlight=False)
    if result.with_components:
        console.print(_table(result, ("name", "version", "layer", "pinned_in", "setting")))


def print_wide(result: ComponentsResult, console: Console) -> None:
    console.print(f"gpuctl {result.gpuctl_version}", highlight=False)
    if result.with_components:
        columns = ("name", "version", "layer", "artifact", "pinned_in", "setting", "override", "used_by")
        console.print(_table(result, columns))
