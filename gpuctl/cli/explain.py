"""`gpuctl explain`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from gpuctl.cli.options import TableOrJson, TableOrJsonOutput
from gpuctl.errors import ConfigError

HELP = """\
Explain failures in any pasted text: pod logs, `kubectl describe` output, events, nvidia-smi
output, journal or dmesg lines. Prints every known signature found with its cause and fix
(docs/diagnosis.md lists them). FILE defaults to standard input.
Exit 0 when it ran (matches or not), 2 when FILE cannot be read.
"""

_HINT = "pass a text file, or `-` to read standard input (e.g. `kubectl describe pod P | gpuctl explain`)"


def read_text(file: str) -> str:
    """The text of FILE (`-`: standard input); ConfigError naming the file when it is not text."""
    if file == "-":
        data = sys.stdin.buffer.read()
        name = "standard input"
    else:
        path = Path(file)
        name = str(path)
        if path.is_dir():
            raise ConfigError(f"{name} is a directory, not a text file", _HINT)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ConfigError(f"cannot read {name}: {error.strerror or error}", _HINT) from error
    if b"\0" in data:
        raise ConfigError(f"{name} is binary, not text", _HINT)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def command(
    file: Annotated[str, typer.Argument(help="Text to explain; `-` reads standard input.")] = "-",
    output: TableOrJsonOutput = TableOrJson.table,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.core.explain import explain
    from gpuctl.report import explain as report

    emit(explain(text=read_text(file)), output, report)
