"""The last step of every command: hand the result to its report module, exit with its code."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from enum import Enum
from typing import Any, Protocol

import orjson
import typer

from gpuctl.errors import ExitCode

JSON_WRITE_BYTES = 1 << 20


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


# Numbers orjson writes otherwise than json.dumps, below 1e-4: 0.00001 against 1e-05, 1e-7 against
# 1e-07. Matched at the start or after a colon, bracket or comma, as a value; text in a string that
# looks the same only costs the slow path.
_SMALL_FLOAT = re.compile(rb"(?:\A|[\[:,])\s*-?(?:0\.0000|[0-9][0-9.]*e-)")
_SPLIT_DEPTH = 2  # containers this deep or less are written item by item, the rest encoded whole


def _write_json(document: Any) -> None:
    """json.dumps(document, indent=2) and a newline, byte for byte, written about a MB at a time:
    joined whole, thousands of nodes' results are tens of MB at once."""
    pending: list[str] = []
    size = 0
    for piece in _json_pieces(document, 0):
        pending.append(piece)
        size += len(piece)
        if size >= JSON_WRITE_BYTES:
            sys.stdout.write("".join(pending))
            pending, size = [], 0
    sys.stdout.write("".join(pending) + "\n")


def _json_pieces(value: Any, depth: int) -> Iterator[str]:
    """The text of `value` at nesting `depth`: the top containers item by item, each item encoded
    whole by _encoded (json.dumps of a nested value, its lines indented by its depth, is the text
    it has inside its parent)."""
    margin = "\n" + "  " * depth
    if isinstance(value, dict) and value and depth < _SPLIT_DEPTH and all(isinstance(k, str) for k in value):
        for index, (key, item) in enumerate(value.items()):
            yield ("{" if index == 0 else ",") + margin + "  " + json.dumps(key) + ": "
            yield from _json_pieces(item, depth + 1)
        yield margin + "}"
    elif isinstance(value, (list, tuple)) and value and depth < _SPLIT_DEPTH:
        for index, item in enumerate(value):
            yield ("[" if index == 0 else ",") + margin + "  "
            yield from _json_pieces(item, depth + 1)
        yield margin + "]"
    else:
        yield _encoded(value).replace("\n", margin)


def _encoded(value: Any) -> str:
    """json.dumps(value, indent=2). orjson writes the same text 20 times faster (0.4 s against
    0.014 s for a 5,000-node verify's document) where it is ASCII (json.dumps escapes the rest, and
    DEL) and holds no number below 1e-4 (_SMALL_FLOAT); the rest, and what orjson refuses (integers
    beyond 64 bits, keys that are not strings), is the standard library's. NaN and infinities
    become null with orjson (json.dumps writes NaN, which is not JSON); gpuctl's documents hold none."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:
        return json.dumps(value, indent=2)
    if data.isascii() and b"\x7f" not in data and not _small_float(data):
        return data.decode("ascii")
    return json.dumps(value, indent=2)


def _small_float(data: bytes) -> bool:
    """_SMALL_FLOAT in `data`. The regex alone costs 0.3 s over a 5,000-node verify's document (it
    tries every byte); a number below 1e-4 holds "0.0000" or a digit before "e-", which bytes
    methods find in a tenth of that, so the regex runs only where one is."""
    maybe = b"0.0000" in data or any(part[-1:].isdigit() for part in data.split(b"e-")[:-1])
    return maybe and _SMALL_FLOAT.search(data) is not None


def exit_with(code: ExitCode) -> None:
    """Exit with `code` unless it is 0."""
    if code is not ExitCode.OK:
        raise typer.Exit(int(code))
