"""`gpuctl status`."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from gpuctl.cli.options import Context, Kubeconfig

HELP = """\
GPU inventory of the cluster: one row per GPU node with product, GPUs (capacity /
allocatable / in use by non-terminated pods), driver version, taints and readiness.
Read-only. Exit 0 (also with no GPU node), 2 bad flag or kubeconfig, 3 cluster unreachable.
"""


class StatusOutput(str, Enum):
    """Every command's table, wide, json and yaml, and one self-contained HTML page (-o html)."""

    table = "table"
    json = "json"
    wide = "wide"
    yaml = "yaml"
    html = "html"


def command(
    *,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    output: Annotated[
        StatusOutput, typer.Option("--output", "-o", help="Output format.")
    ] = StatusOutput.table,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.core.status import gpu_status
    from gpuctl.kube.client import load_api_client
    from gpuctl.report import status as report

    result = gpu_status(load_api_client(kubeconfig, context))
    if output is StatusOutput.html:
        import sys
        from datetime import UTC, datetime

        from gpuctl.report.html_page import status_html

        generated_at = datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        sys.stdout.write(status_html(report.to_json(result), generated_at=generated_at, context=context))
        return
    emit(result, output, report)
