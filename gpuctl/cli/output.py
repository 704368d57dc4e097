"""The last step of every command: hand the result to its report module, exit with its code."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Any, Protocol

import typer

from gpuctl.errors import ExitCode

JSON_WRITE_PIECES = 8192


class CommandResult(Protocol):
    @property
    def exit_code(self) -> ExitCode: ...


def emit(result: CommandResult, output: Enum, report: Any) -> None:
    """Print `result` as `output` (table, wide, json, yaml or junit) with `report`, the command's
    gpuctl.report module (SCHEMA, to_json, print_table; print_wide and to_junit where offered),
    then exit with the result's exit code: returns only when it is 0."""
    print_result(result, output, report)
    exit_with(result.exit_code)


def print_result(result: CommandResult, output: Enum, report: Any) -> None:
    """Print `result` as `output` with `report` (see emit), without exiting."""
    if output.value == "json":
        _write_json(report.to_json(result))
    elif output.value == "yaml":
        import yaml

        sys.stdout.write(yaml.safe_dump(report.to_json(result), sort_keys=False, allow_unicode=True))
    elif output.value == "junit":
        sys.stdout.write(report.to_junit(result))
    else:
        from gpuctl.report.console import make_console

        # wide: every column the report has; a report whose table has them all prints it as is
        wide = output.value == "wide" and hasattr(report, "print_wide")
        (report.print_wide if wide else report.print_table)(result, make_console())


def _write_json(document: Any) -> None:
    """json.dumps(document, indent=2) and a newline, written a few thousand pieces at a time:
    joined whole, thousands of nodes' results are tens of MB at once; written piece by piece,
    millions of writes."""
    pieces: list[str] = []
    for piece in json.JSONEncoder(indent=2).iterencode(document):
        pieces.append(piece)
        if len(pieces) >= JSON_WRITE_PIECES:
            sys.stdout.write("".join(pieces))
            pieces.clear()
    sys.stdout.write("".join(pieces) + "\n")


def exit_with(code: ExitCode) -> None:
    """Exit with `code` unless it is 0."""
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))
