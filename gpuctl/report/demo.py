"""How `gpuctl demo` shows each step: the command it stands for, its result, a closing line."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.bootstrap import BootstrapRun
from gpuctl.core.status import StatusResult
from gpuctl.core.taint import TaintResult
from gpuctl.core.verify.model import VerifyResult
from gpuctl.report import bootstrap, status, taint, verify

if TYPE_CHECKING:
    from rich.console import Console

    from gpuctl.core.demo import DemoStep, StepResult


def announce_step(step: DemoStep, console: Console) -> None:
    console.print()
    console.print(f"$ {step.command}    # {step.purpose}", style="bold", markup=False, soft_wrap=True)


def print_step(result: StepResult, console: Console) -> None:
    if isinstance(result, BootstrapRun):
        bootstrap.print_table(result, console)
    elif isinstance(result, TaintResult):
        taint.print_table(result, console)
    elif isinstance(result, StatusResult):
        status.print_table(result, console)
    else:
        verify.print_table(result, console)
    if isinstance(result, VerifyResult):
        _closing(result, console)


def _closing(result: VerifyResult, console: Console) -> None:
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
