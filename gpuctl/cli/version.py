"""`gpuctl version`."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuctl.cli.options import TableOrJson, TableOrJsonOutput

HELP = """\
Print gpuctl's version (as `gpuctl --version`). With --components, also every third-party component
gpuctl installs at the version it pins (NVIDIA driver branch, container toolkit, device plugin, GPU
Operator and DRA driver charts, verification image) and the one file where each pin lives.
"""


def command(
    with_components: Annotated[
        bool, typer.Option("--components", help="List the pinned components and where each pin lives.")
    ] = False,
    output: TableOrJsonOutput = TableOrJson.table,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.core.components import components
    from gpuctl.report import version as report

    emit(components(with_components=with_components), output, report)
