"""verify's reports made from its JSON document: `-o ctrf`, `-o html` and `--report FILE` (the
HTML page written to a file beside whatever --output prints)."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from gpuctl.cli.options import Output
from gpuctl.errors import ConfigError
from gpuctl.output_paths import Input, OutputFile, refuse_inputs, write_output

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyResult

ReportOption = Annotated[
    Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--report",
        help="Also write the run as one self-contained HTML page to this file (as -o html prints it).",
        metavar="FILE",
        show_default=False,
    ),
]
_HINT = "name a file in an existing folder, e.g. `gpuctl verify --report ./verify.html`"


def check_report_file(path: Path | None, read: list[Input]) -> None:
    """Refuse a --report that cannot be written, or that is one of the files the run reads
    (`read`), before the run, not after minutes of it."""
    if path is None:
        return
    if path.is_dir():
        raise ConfigError(f"--report {path}: is a folder, not a file", _HINT)
    if not path.parent.is_dir():
        raise ConfigError(f"--report {path}: folder {path.parent} does not exist", _HINT)
    refuse_inputs(
        [OutputFile("--report", path, path)],
        read,
        "write the report to a file of its own, e.g. `gpuctl verify --report ./verify.html`",
    )


def emit_verify(
    result: VerifyResult, output: Output, *, report_file: Path | None, context: str | None
) -> None:
    """Print `result` as `output`, write the --report page, exit with the result's exit code."""
    from gpuctl.cli.output import emit, exit_with, print_result
    from gpuctl.report import verify as report

    if output not in (Output.ctrf, Output.html) and report_file is None:
        emit(result, output, report)
        return
    from gpuctl.report.ctrf import to_ctrf
    from gpuctl.report.html_page import to_html

    document = report.to_json(result)
    finished = datetime.now(tz=UTC)
    page = ""
    if output is Output.html or report_file is not None:
        page = to_html(document, generated_at=finished.strftime("%Y-%m-%dT%H:%M:%SZ"), context=context)
    if report_file is not None:
        _write(report_file, page)
    if output is Output.ctrf:
        ctrf = to_ctrf(document, stop_ms=int(finished.timestamp() * 1000))
        sys.stdout.write(json.dumps(ctrf, indent=2) + "\n")
    elif output is Output.html:
        sys.stdout.write(page)
    else:
        print_result(result, output, report)
    exit_with(result.exit_code)


def write_report_page(result: VerifyResult, path: Path, *, context: str | None) -> None:
    """The --report page of `result`, written whole over `path` (each --watch round)."""
    from gpuctl.report import verify as report
    from gpuctl.report.html_page import to_html

    generated_at = datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _write(path, to_html(report.to_json(result), generated_at=generated_at, context=context))


def _write(path: Path, text: str) -> None:
    """Write the page whole or not at all, never through a link (gpuctl.output_paths)."""
    try:
        write_output(path, text)
    except OSError as error:
        raise ConfigError(f"--report {path}: cannot write: {error.strerror or error}", _HINT) from error
