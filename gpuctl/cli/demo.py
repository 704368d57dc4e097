"""`gpuctl demo`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from gpuctl.core.demo import DemoStep, StepResult

HELP = """\
Show what gpuctl does, on a simulated cluster started in-process (no cluster needed): the
built-in mix of CPU nodes, healthy 8x H100 nodes and two broken GPU nodes. Runs
taint-gpu-nodes, status and verify, shows the diagnosis of the broken nodes, then stops the
simulated cluster. Exit 0 when the demo ran (the broken nodes are expected).
"""


def _announce(step: DemoStep, console: Console) -> None:
    console.print()
    console.print(f"$ {step.command}    # {step.purpose}", style="bold", markup=False, soft_wrap=True)


def _render_step(result: StepResult, console: Console) -> None:
    from gpuctl.core.status import StatusResult
    from gpuctl.core.taint import TaintResult
    from gpuctl.report.status_table import render_status_table
    from gpuctl.report.taint_table import render_taint_table
    from gpuctl.report.verify_table import render_verify_table

    if isinstance(result, TaintResult):
        render_taint_table(result, console)
    elif isinstance(result, StatusResult):
        render_status_table(result, console)
    else:
        render_verify_table(result, console)


def _closing(result: StepResult, console: Console) -> None:
    from gpuctl.core.verify_model import VerifyResult

    if not isinstance(result, VerifyResult):
        return
    proven = [node.name for node in result.nodes if node.ok]
    broken = [node.name for node in result.nodes if not node.ok]
    console.print()
    console.print(
        f"demo finished: {len(proven)} GPU node(s) proven, {len(broken)} diagnosed "
        f"({', '.join(broken) or 'none'}). The broken nodes are injected by the scenario on purpose, "
        "so the demo exits 0; against a real cluster `gpuctl verify` exits 1 for them.",
        markup=False,
        soft_wrap=True,
    )


def command(
    *,
    scenario: Annotated[
        Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--scenario", help="Scenario file (default: the built-in mixed cluster).", show_default=False
        ),
    ] = None,
) -> None:
    from gpuctl.core.demo import demo_cluster, demo_steps
    from gpuctl.report.console import make_console

    console = make_console()
    try:
        with demo_cluster(scenario) as cluster:
            console.print(
                f"simulated cluster from {cluster.scenario_source} serving at {cluster.server.url}",
                markup=False,
                soft_wrap=True,
            )
            for step in demo_steps(cluster.api_client):
                _announce(step, console)
                result = step.run()
                _render_step(result, console)
                _closing(result, console)
    except KeyboardInterrupt:
        console.print("interrupted: simulated cluster stopped")
        raise typer.Exit(130) from None
    console.print("simulated cluster stopped")
