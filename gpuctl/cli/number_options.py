"""Typer options for the numeric flags, parsed and range-checked by gpuctl.bounds (one table of
every number a user gives gpuctl)."""

from __future__ import annotations

from typing import Any

import typer

from gpuctl.bounds import Bound


def number_option(bound: Bound, help_text: str, metavar: str = "SECONDS") -> Any:
    """The option `bound.name`: a value out of its range is exit 2 naming the flag and range."""

    def parse(raw: str | float) -> float | int:
        return bound.count(raw) if bound.integer else bound.parse(raw)

    return typer.Option(bound.name, parser=parse, metavar=metavar, help=help_text)
