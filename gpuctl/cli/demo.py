"""`gpuctl demo`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

HELP = """\
Show what gpuctl does, on a simulated cluster started in-process (no cluster needed): the
built-in mix of CPU nodes, healthy 8x H100 nodes and two broken GPU nodes. Runs
taint-gpu-nodes, status and verify, shows the diagnosis of the broken nodes, then stops the
simulated cluster. Exit 0 when the demo ran (the broken nodes are expected).
"""


def command(
    *,
    scenario: Annotated[
        Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--scenario", help="Scenario file (default: the built-in mixed cluster).", show_default=False
        ),
    ] = None,
) -> None:
    from gpuctl.cli.signals import interruptible
    from gpuctl.core.demo import demo_steps
    from gpuctl.kube.client import load_api_client
    from gpuctl.report.console import make_console
    from gpuctl.report.demo import announce_step, print_step
    from gpuctl.sim.server.inprocess import serve

    console = make_console()
    with interruptible("simulated cluster stopped"), serve(scenario, device_plugin="absent") as cluster:
        console.print(
            f"simulated cluster from {cluster.scenario_source} serving at {cluster.server.url}",
            markup=False,
            soft_wrap=True,
        )
        for step in demo_steps(load_api_client(cluster.kubeconfig)):
            announce_step(step, console)
            print_step(step.run(), console)
    console.print("simulated cluster stopped")
