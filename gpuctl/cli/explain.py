"""`gpuctl explain`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from gpuctl.cli.options import Context, Kubeconfig, OptionalInventory, TableOrJson, TableOrJsonOutput
from gpuctl.errors import ConfigError
from gpuctl.input_files import TEXT_LIMIT, read_input_file, read_stream

HELP = """\
Explain failures in any pasted text: pod logs, `kubectl describe` output, events, nvidia-smi
output, journal or dmesg lines. Prints every known signature found with its cause and fix
(docs/diagnosis.md lists them). FILE defaults to standard input.
`gpuctl explain pod/NAME [-n NS]` and `gpuctl explain node/NAME` read the evidence themselves (events,
container statuses and logs, the scheduler's message, the node's state, the GPU plugin and operand
pods on the node and their logs; with --inventory the node's host over SSH) and print the one cause
and fix with the evidence lines that led there.
When several failures are found, the one that explains the others (the lowest layer: the fabric,
then the GPU, the driver, ..., the application) is printed first as the cause, the rest as its
consequences. `--since 2h` (or `30m`, `1d`, `'2026-12-06 10:00'`) keeps only the lines stamped from
then on in a journalctl, `dmesg -T`, `kubectl logs --timestamps` or klog capture.
Exit 0 when it ran (matches or not), 2 when FILE cannot be read or holds nothing (an empty file,
standard input empty or closed), --since is malformed or finds no time stamp, or the pod or node
does not exist, 3 cluster or host unreachable.
"""

_HINT = "pass a text file, or `-` to read standard input (e.g. `kubectl describe pod P | gpuctl explain`)"
_TOO_LONG = "pass the part around the failure, e.g. `kubectl logs POD --tail 100000 | gpuctl explain`"
# What names standard input: `-`, and /dev/stdin, which is refused elsewhere as an input file.
STDIN_NAMES = ("-", "/dev/stdin")


def read_text(file: str) -> str:
    """The text of FILE (`-` or /dev/stdin: standard input); ConfigError naming the file when it is
    not text, or holds nothing to explain."""
    if file in STDIN_NAMES:
        data = _standard_input()
        name = "standard input"
    else:
        path = Path(file)
        name = str(path)
        try:
            data = read_input_file(path, "text to explain", limit=TEXT_LIMIT, hint=_HINT)
        except OSError as error:
            raise ConfigError(f"cannot read {name}: {error.strerror or error}", _HINT) from error
    if b"\0" in data:
        raise ConfigError(f"{name} is binary, not text", _HINT)
    if not data.strip():
        raise ConfigError(f"{name} is empty: nothing to explain", _HINT)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _standard_input() -> bytes:
    """Standard input, read to its end (at most TEXT_LIMIT); ConfigError when it is closed or
    unreadable (`gpuctl explain <&-`, `< /`)."""
    stream = sys.stdin
    if stream is None or stream.closed:  # Python starts without sys.stdin when descriptor 0 is closed
        raise ConfigError("standard input is closed: nothing to explain", _HINT)
    if stream.isatty():
        sys.stderr.write("reading the text to explain from the terminal; end it with Ctrl-D\n")
    try:
        return read_stream(getattr(stream, "buffer", stream), "standard input", hint=_TOO_LONG)
    except OSError as error:
        raise ConfigError(f"cannot read standard input: {error.strerror or error}", _HINT) from error


Namespace = Annotated[
    Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--namespace",
        "-n",
        help="Namespace of pod/NAME (default: the context's namespace, else default).",
        show_default=False,
    ),
]


Since = Annotated[
    Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--since",
        help="Keep only the lines stamped at or after WHEN: a duration before now (30m, 2h, 1d) or a "
        "time stamp (2026-12-06 10:00, ISO 8601 with or without zone). For journalctl, dmesg -T, "
        "kubectl logs --timestamps and klog captures.",
        metavar="WHEN",
        show_default=False,
    ),
]


def command(
    *,
    file: Annotated[
        str, typer.Argument(help="Text to explain; `-` reads standard input; pod/NAME or node/NAME.")
    ] = "-",
    namespace: Namespace = None,
    since: Since = None,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    inventory: OptionalInventory = None,
    output: TableOrJsonOutput = TableOrJson.table,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.core.explain_subject.target import subject_of
    from gpuctl.kube.client import context_namespace
    from gpuctl.report import explain as report

    subject = subject_of(file, namespace, lambda: context_namespace(kubeconfig, context))
    if subject is None:
        from gpuctl.core.explain import explain
        from gpuctl.core.since import since as since_moment

        # -n is context (ignored: a text has no namespace); the others would name a cluster or host
        _refuse_cluster_options(file, kubeconfig=kubeconfig, context=context, inventory=inventory)
        window = None if since is None else since_moment(since)  # before waiting on standard input
        emit(explain(text=read_text(file), since=window), output, report)
        return
    if since is not None:
        raise ConfigError(
            f"--since applies to a text (FILE or -), not to {file}: gpuctl reads the recent evidence of a "
            f"{subject.kind} itself",
            hint="capture the log with its time stamps and pass it: "
            "`kubectl logs POD --timestamps --since 2h | gpuctl explain --since 2h -`",
        )
    from gpuctl.core.explain_subject.subject import explain_subject
    from gpuctl.kube.client import load_api_client

    emit(explain_subject(load_api_client(kubeconfig, context), subject, inventory), output, report)


def _refuse_cluster_options(file: str, **given: object) -> None:
    """A text is explained as it is: the options that name where a pod or node lives mean nothing."""
    text = "standard input" if file in STDIN_NAMES else file
    for name, value in given.items():
        if value is not None:
            raise ConfigError(
                f"--{name} applies to `gpuctl explain pod/NAME` and `node/NAME`, not to a text ({text})",
                hint=f"drop --{name}, or name a pod or node: `gpuctl explain pod/NAME -n NAMESPACE`",
            )
