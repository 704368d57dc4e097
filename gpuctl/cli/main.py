"""The `gpuctl` entry point: one Typer app, errors caught once, stable exit codes."""

from __future__ import annotations

import functools
import gc
import os
import sys
import traceback
from typing import Annotated, Any

import typer

from gpuctl import __version__
from gpuctl.cli import (
    bootstrap,
    completion,
    demo,
    explain,
    preflight,
    render,
    sim,
    status,
    taint,
    verify,
    version,
)
from gpuctl.cli.argv import check_cluster_options, reorder
from gpuctl.cli.click_errors import ClickException, NoArgsIsHelpError, UsageError
from gpuctl.cli.stdout_guard import final_status, guarded_stdout
from gpuctl.errors import ExitCode, GpuctlError
from gpuctl.report.safe_text import visible

HELP = """\
Take Kubernetes GPU nodes from bare metal to proven GPU-ready, and keep proving it.

Exit codes: 0 ok; 1 a check failed; 2 usage or configuration error (bad flag, missing or
invalid file, unknown context, invalid scenario or inventory); 3 cannot reach or be
authorised by the cluster or the hosts; 70 internal error (a bug: rerun with --debug);
130 interrupted (Ctrl-C).
"""

app = typer.Typer(
    name="gpuctl",
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gpuctl {__version__}")
        raise typer.Exit()


@app.callback()
def _global(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain output (also: NO_COLOR=1).")] = False,
    version: Annotated[  # noqa: ARG001 - handled eagerly by its callback
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    if no_color:
        os.environ["NO_COLOR"] = "1"
    if debug:
        os.environ["GPUCTL_DEBUG"] = "1"


app.command("bootstrap", help=bootstrap.HELP)(bootstrap.command)
app.command("verify", help=verify.HELP)(verify.command)
app.command("taint-gpu-nodes", help=taint.HELP)(taint.command)
app.command("preflight", help=preflight.HELP)(preflight.command)
app.command("status", help=status.HELP)(status.command)
app.command("render", help=render.HELP)(render.command)
app.add_typer(sim.app, name="sim")
app.command("demo", help=demo.HELP)(demo.command)
app.command("explain", help=explain.HELP)(explain.command)
app.command("completion", help=completion.HELP)(completion.command)
app.command("version", help=version.HELP)(version.command)


def _one_line(text: str) -> str:
    """Errors are one line: a message quoting a parser (YAML marks, say) is folded onto it. Its
    control characters are shown, not sent: messages quote files, hosts and server answers."""
    return " ".join(part.strip() for part in visible(text).splitlines() if part.strip())


@functools.cache
def _command() -> Any:
    """The Click command behind `app`, built once per process. Calling `app` builds it anew from
    the functions' signatures each time (tens of milliseconds), which in-process runs (tests,
    embedding) would pay on every call."""
    return typer.main.get_command(app)


def _options_of(words: list[str]) -> tuple[list[str], frozenset[str]] | None:
    """The command that `words` (["sim", "up", ...], ["explain", "FILE"]) start with: its own
    words and the options it declares; None when they name no command (a group without its
    subcommand, or a word that is none)."""
    command: Any = _command()
    path: list[str] = []
    for word in words:
        subcommands = getattr(command, "commands", None)  # a group (Typer may ship its own Click)
        if subcommands is None:
            break
        command = subcommands.get(word)
        if command is None:
            return None
        path.append(word)
    if getattr(command, "commands", None) is not None:
        return None
    return path, frozenset(option for parameter in command.params for option in parameter.opts)


def _print_error(error: GpuctlError) -> None:
    sys.stderr.write(f"error: {_one_line(error.message)}\n")
    if error.hint:
        sys.stderr.write(f"hint: {_one_line(error.hint)}\n")


def _click_failure(error: ClickException | typer.Abort) -> int:
    """What Click refused (a usage error, exit 2), or Ctrl-C outside a command's own handling."""
    if isinstance(error, typer.Abort):
        return int(ExitCode.INTERRUPTED)
    if isinstance(error, UsageError):
        return _usage_error(error)
    sys.stderr.write(f"error: {_one_line(error.format_message())}\n")
    return int(error.exit_code)


def _usage_error(error: UsageError) -> int:
    """A bad flag or command: one `error:` line and a hint naming the help to read (exit 2)."""
    if NoArgsIsHelpError is not None and isinstance(error, NoArgsIsHelpError):  # `gpuctl`, `gpuctl sim`
        error.show()
        return int(error.exit_code)
    sys.stderr.write(f"error: {_one_line(error.format_message())}\n")
    command = error.ctx.command_path if error.ctx is not None else "gpuctl"
    sys.stderr.write(f"hint: see `{command} -h`\n")
    return int(error.exit_code)


# Set by the global flags for the modules that read them; restored after an in-process run.
_FLAG_ENVIRONMENT = ("GPUCTL_DEBUG", "NO_COLOR")


# The cyclic garbage collector's young-generation threshold while a command runs (Python's is
# 700). A command holds thousands of nodes' and pods' parsed JSON, which is long-lived and
# acyclic, and every collection of the oldest generation walks all of it: with 700, a 5,000-node
# verify spent a quarter of its CPU (2 of 8 s) in the collector; with this, 0.3 s. Refcounting
# frees everything acyclic as before; cycles are still collected, less often.
GC_YOUNG_THRESHOLD = 50_000


def run(argv: list[str] | None = None) -> int:
    """Run gpuctl with `argv` and return the exit code; user-facing failures never raise.

    The environment the global flags set (--debug, --no-color) and the collector's thresholds
    are put back afterwards, so one in-process run does not change the next (tests, embedding).
    Standard output closing or filling meanwhile keeps the command's own status (stdout_guard)."""
    saved = {name: os.environ.get(name) for name in _FLAG_ENVIRONMENT}
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        with guarded_stdout() as guard:
            code = _run(argv)
        return final_status(guard, code)
    finally:
        gc.set_threshold(*thresholds)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run(argv: list[str] | None) -> int:
    given = sys.argv[1:] if argv is None else argv
    debug = "--debug" in given or os.environ.get("GPUCTL_DEBUG") == "1"
    if os.environ.get(completion.COMPLETE_VAR):  # the shell asks for completions (TAB)
        completion.register_shells()
    try:
        args = reorder(check_cluster_options(given, _options_of))
        # Not standalone: usage errors come back here to be said in one line like every error.
        returned = _command().main(args=args, prog_name="gpuctl", standalone_mode=False)
        return returned if isinstance(returned, int) else 0
    except (ClickException, typer.Abort) as error:
        return _click_failure(error)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except GpuctlError as error:
        if debug:
            traceback.print_exc()
        _print_error(error)
        return int(error.exit_code)
    except Exception as error:  # last resort: a bug is exit 70 and one line, not a traceback
        if debug:
            traceback.print_exc()
        answer = _server_answer(error)
        if answer is not None:
            _print_error(answer)
            return int(answer.exit_code)
        sys.stderr.write(f"error: internal error: {type(error).__name__}: {_one_line(str(error))}\n")
        sys.stderr.write("hint: rerun with --debug and report the traceback\n")
        return int(ExitCode.INTERNAL)


def _server_answer(error: Exception) -> GpuctlError | None:
    """An API server's answer that no caller expected (a 404 for the node list): the server's
    words, exit 3; not a bug of gpuctl's."""
    exceptions = sys.modules.get("kubernetes.client.exceptions")  # not imported: not the API's
    if exceptions is None or not isinstance(error, exceptions.ApiException):
        return None
    from gpuctl.kube.api_errors import unexpected_answer

    return unexpected_answer(error)


def main() -> None:
    code = run()  # its output is flushed, or was discarded where it could not be written
    if code == ExitCode.INTERRUPTED:
        # The cleanup has run; worker threads the interrupt left blocked (a watch, a pool) must
        # not turn the interpreter's shutdown into a crash (seen as SIGABRT under load).
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)
