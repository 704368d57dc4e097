"""`gpuctl taint-gpu-nodes`."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated, Optional

import typer

from gpuctl.cli.flag_rules import refuse_inapplicable_flags
from gpuctl.cli.options import Context, Kubeconfig, TableOrJson, TableOrJsonOutput
from gpuctl.defaults import GPU_TAINT, GPU_TAINT_KEY, GPU_TAINT_VALUE
from gpuctl.errors import ConfigError, GpuctlError
from gpuctl.report.safe_text import visible

HELP = f"""\
Taint every GPU node (default {GPU_TAINT}) so that only pods that
tolerate it land there; --remove takes it off. Idempotent: nodes that already match get no
write at all. --dry-run asks the API server to validate the patches without persisting them.
Also warns about GPU DaemonSets (device plugin, GFD, NFD worker, operator validator,
dcgm-exporter) whose tolerations do not match the taint. A NoExecute taint that would evict
running pods names them first and needs --yes (or a yes on a terminal).
Exit 0 done (warnings included), 1 no node matched or a node could not be patched, 2 bad
flag, unknown node or evictions not confirmed, 3 cluster unreachable or forbidden.
"""


class Effect(str, Enum):
    NoSchedule = "NoSchedule"
    PreferNoSchedule = "PreferNoSchedule"
    NoExecute = "NoExecute"


def _node_names(nodes: str | None) -> list[str]:
    if nodes is None:
        return []
    names = [name.strip() for name in nodes.split(",") if name.strip()]
    if not names:
        raise ConfigError("--nodes: no node name given", hint="e.g. --nodes gpu-0,gpu-1")
    return names


def _ask(refusal: GpuctlError) -> bool:
    """On a terminal, show what would be evicted and ask; scripts get the refusal (exit 2)."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    typer.echo(f"warning: {visible(refusal.message)}", err=True)  # it names pods and nodes
    return typer.confirm("Taint the nodes and evict these pods?", default=False, err=True)


def command(
    *,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    key: Annotated[str, typer.Option("--key", help="Taint key.")] = GPU_TAINT_KEY,
    value: Annotated[str, typer.Option("--value", help="Taint value (may be empty).")] = GPU_TAINT_VALUE,
    effect: Annotated[Effect, typer.Option("--effect", help="Taint effect.")] = Effect.NoSchedule,
    selector: Annotated[
        Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--selector", "-l", help="Label selector choosing the nodes (instead of GPU discovery)."
        ),
    ] = None,
    nodes: Annotated[
        Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option("--nodes", help="Comma-separated node names (each must exist)."),
    ] = None,
    remove: Annotated[bool, typer.Option("--remove", help="Take the taint (key+effect) off.")] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Server-side dry run: show what would change.")
    ] = False,
    output: TableOrJsonOutput = TableOrJson.table,
    yes: Annotated[
        bool,
        typer.Option(
            "--yes", "-y", help="Evict without asking: a NoExecute taint evicts pods that do not tolerate it."
        ),
    ] = False,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.cli.signals import interruptible
    from gpuctl.core.taint import taint_gpu_nodes, taint_spec
    from gpuctl.core.taint.evictions import EvictionsNeedConfirmation
    from gpuctl.kube.client import load_api_client
    from gpuctl.report import taint as report

    refuse_inapplicable_flags("taint-gpu-nodes")
    spec = taint_spec(key, value, effect.value)
    names = _node_names(nodes)
    api_client = load_api_client(kubeconfig, context)
    with interruptible("nodes patched so far keep their change; rerun to finish"):
        try:
            result = taint_gpu_nodes(
                api_client, taint=spec, remove=remove, dry_run=dry_run, selector=selector,
                node_names=names, allow_evictions=yes,
            )  # fmt: skip
        except EvictionsNeedConfirmation as refusal:
            if not _ask(refusal):
                raise
            result = taint_gpu_nodes(
                api_client, taint=spec, remove=remove, dry_run=dry_run, selector=selector,
                node_names=names, allow_evictions=True,
            )  # fmt: skip
    emit(result, output, report)
