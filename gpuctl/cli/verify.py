"""`gpuctl verify`: parse options → gpuctl.core.verify → render."""

from __future__ import annotations

import contextlib
import re
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from gpuctl.cli.options import Context, Kubeconfig, Output, VerifyOutput
from gpuctl.errors import ConfigError

if TYPE_CHECKING:
    from gpuctl.core.verify_model import VerifyOptions, VerifyResult

HELP = """\
Prove every GPU node: read-only checks (node Ready and schedulable, nvidia.com/gpu capacity vs
allocatable vs expected, device plugin pod and log, taints) plus one verification pod per GPU
node that requests all its GPUs and runs nvidia-smi; each failure comes with a diagnosis and a
hint. Verification pods are always deleted (success, failure, --timeout, Ctrl-C).
Exit 0 all good, 1 a check failed, 2 usage/config error, 3 cluster unreachable or forbidden,
130 interrupted.
"""

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
DEFAULT_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
DEFAULT_NAMESPACE = "gpuctl-system"

OptStr = Optional[str]  # noqa: UP045 - Typer needs Optional[] on Python 3.10
OptList = Optional[list[str]]  # noqa: UP045 - Typer needs Optional[] on Python 3.10


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (CI cancelling a job) and SIGINT clean up like Ctrl-C does.

    SIGINT is set explicitly: a process started in the background by a non-interactive shell
    (`gpuctl verify & ... kill -INT $!`) inherits SIGINT as ignored, and Python then never raises
    KeyboardInterrupt, so the verification pods would outlive the interrupt.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    interrupted = False

    def interrupt(_signum: int, _frame: Any) -> None:
        # The first signal interrupts; more Ctrl-C must not cut the pod cleanup short, nor kill
        # gpuctl on its way out: signals stay ignored until the process exits with 130.
        nonlocal interrupted
        interrupted = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous_term = signal.signal(signal.SIGTERM, interrupt)
    previous_int = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        if not interrupted:
            signal.signal(signal.SIGTERM, previous_term)
            signal.signal(signal.SIGINT, previous_int)


def _options(
    *,
    expect_nodes: str | None,
    expect_gpus: str | None,
    namespace: str,
    image: str,
    image_pull_secret: str | None,
    runtime_class: str | None,
    timeout: float,
    keep_pods: bool,
    concurrency: int,
    no_pods: bool,
    allow_empty: bool,
    toleration: list[str],
) -> VerifyOptions:
    from gpuctl.core.verify_expect import parse_expectations, parse_toleration
    from gpuctl.core.verify_model import VerifyOptions

    for flag, value, example in (
        ("--namespace", namespace, DEFAULT_NAMESPACE),
        ("--image-pull-secret", image_pull_secret, "registry-credentials"),
        ("--runtime-class", runtime_class, "nvidia"),
    ):
        if value is not None and not _DNS_LABEL.match(value):
            raise ConfigError(
                f"{flag} {value!r}: not a valid Kubernetes name",
                hint=f"use lower-case a-z, 0-9 and '-', e.g. {flag} {example}",
            )
    if not image.strip() or any(ch.isspace() for ch in image):
        raise ConfigError(f"--image {image!r}: not an image reference", hint=f"e.g. --image {DEFAULT_IMAGE}")
    return VerifyOptions(
        expectations=parse_expectations(expect_nodes, expect_gpus),
        namespace=namespace,
        image=image,
        image_pull_secret=image_pull_secret,
        runtime_class=runtime_class,
        timeout_s=timeout,
        keep_pods=keep_pods,
        concurrency=concurrency,
        run_pods=not no_pods,
        allow_empty=allow_empty,
        tolerations=tuple(parse_toleration(text) for text in toleration),
    )


def _render(result: VerifyResult, output: Output) -> None:
    if output is Output.json:
        from gpuctl.report.verify_json import to_json

        sys.stdout.write(to_json(result))
    elif output is Output.junit:
        from gpuctl.report.verify_junit import to_junit

        sys.stdout.write(to_junit(result))
    else:
        from gpuctl.report.console import make_console
        from gpuctl.report.verify_table import render_verify_table

        render_verify_table(result, make_console())


def command(
    *,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    output: VerifyOutput = Output.table,
    expect_nodes: Annotated[
        OptStr, typer.Option(help="Comma-separated node names or globs (gpu-*) that must be GPU nodes.")
    ] = None,
    expect_gpus: Annotated[
        OptStr, typer.Option(help="GPUs per node: N, or NAME=N,GLOB=N, or @FILE (YAML mapping).")
    ] = None,
    allow_empty: Annotated[
        bool, typer.Option("--allow-empty", help="A cluster without any GPU node passes.")
    ] = False,
    namespace: Annotated[
        str, typer.Option(help="Namespace of the verification pods (created if absent, PSS restricted).")
    ] = DEFAULT_NAMESPACE,
    image: Annotated[
        str,
        typer.Option(help="Image of the verification pods (nvidia-smi is injected by the NVIDIA runtime)."),
    ] = DEFAULT_IMAGE,
    image_pull_secret: Annotated[OptStr, typer.Option(help="imagePullSecret for --image.")] = None,
    runtime_class: Annotated[
        OptStr, typer.Option(help="runtimeClassName of the verification pods (e.g. nvidia).")
    ] = None,
    toleration: Annotated[
        OptList,
        typer.Option(
            help="Extra toleration KEY[=VALUE][:EFFECT] (repeatable); GPU taints are tolerated already."
        ),
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds to wait for all verification pods.")] = 300.0,
    concurrency: Annotated[int, typer.Option(min=1, max=256, help="Parallel API requests.")] = 32,
    keep_pods: Annotated[
        bool, typer.Option("--keep-pods", help="Leave the verification pods for debugging.")
    ] = False,
    no_pods: Annotated[bool, typer.Option("--no-pods", help="Read-only checks only; create no pod.")] = False,
) -> None:
    from gpuctl.core.verify import verify
    from gpuctl.kube.client import load_api_client

    options = _options(
        expect_nodes=expect_nodes,
        expect_gpus=expect_gpus,
        namespace=namespace,
        image=image,
        image_pull_secret=image_pull_secret,
        runtime_class=runtime_class,
        timeout=timeout,
        keep_pods=keep_pods,
        concurrency=concurrency,
        no_pods=no_pods,
        allow_empty=allow_empty,
        toleration=toleration or [],
    )
    api_client = load_api_client(kubeconfig, context)
    with _sigterm_as_interrupt():
        try:
            result = verify(api_client, options)
        except KeyboardInterrupt:
            kept = "kept (--keep-pods)" if keep_pods else "deleted"
            sys.stderr.write(f"interrupted: verification pods {kept}\n")
            raise typer.Exit(130) from None
    _render(result, output)
    if not result.ok:
        raise typer.Exit(1)
