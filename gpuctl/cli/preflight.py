"""`gpuctl preflight`."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuctl.cli.options import Inventory, Limit, TableOrJson, TableOrJsonOutput

HELP = """\
Read-only SSH probes of every host in group gpu_nodes, in parallel: reachable, sudo, OS,
kernel headers, NVIDIA GPUs on the PCI bus, nouveau, Secure Boot, installed driver, NVSwitch,
container runtime and its config, free disk. Host keys are checked (known_hosts).
Exit 0 every host can be bootstrapped, 1 some cannot, 2 bad inventory, 3 no host reachable.
"""


def command(
    inventory: Inventory,
    limit: Limit = None,
    output: TableOrJsonOutput = TableOrJson.table,
    insecure_skip_host_key_check: Annotated[
        bool,
        typer.Option(
            "--insecure-skip-host-key-check",
            help="DANGEROUS: accept any SSH host key (man-in-the-middle possible); record the keys instead.",
        ),
    ] = False,
) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.cli.signals import interruptible
    from gpuctl.core.preflight import run_preflight
    from gpuctl.report import preflight as report
    from gpuctl.report.console import make_console

    if insecure_skip_host_key_check:
        make_console(stderr=True).print(
            "WARNING: --insecure-skip-host-key-check: SSH host keys are NOT verified",
            style="bold red",
            markup=False,
        )
    with interruptible("no host was changed (preflight only reads)"):
        result = run_preflight(
            inventory_path=inventory, limit=limit, insecure_skip_host_key_check=insecure_skip_host_key_check
        )
    emit(result, output, report)
