"""What a node-by-node upgrade plans and what it did, as frozen results (plain strings throughout)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuctl.errors import ExitCode

if TYPE_CHECKING:
    from gpuctl.core.bootstrap.host import BootstrapResult

# Each node goes through these, in this order; a batch takes each step on all its nodes before the next.
STEPS = ("cordon", "drain", "host", "reboot", "ready", "verify", "uncordon")
DEFAULT_DRAIN_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class UpgradeOptions:
    """`--max-unavailable`, `--force-drain`, `--drain-timeout`."""

    max_unavailable: int = 1
    force_drain: bool = False
    drain_timeout_s: float = DEFAULT_DRAIN_TIMEOUT_S


@dataclass(frozen=True)
class NodePlan:
    """One node the upgrade takes out of service. `changes`: the host tasks the check run said
    would change it; `check_note`: why the check run could not tell (then it is upgraded anyway);
    `resuming`: an earlier run left it unfinished (its gpuctl.io/upgrade annotation)."""

    host: str
    node: str
    batch: int
    changes: tuple[str, ...]
    evict: tuple[str, ...]  # pods its drain would evict
    refused: tuple[tuple[str, str], ...]  # pods its drain refuses without --force-drain, and why
    cordoned_before: bool  # cordoned before gpuctl touched it: it stays cordoned
    expected_gpus: int | None  # what it advertised before: what it must advertise after
    check_note: str = ""
    resuming: bool = False


@dataclass(frozen=True)
class UpgradePlan:
    nodes: tuple[NodePlan, ...]  # in order; the first is the canary (a batch of its own)
    unchanged: tuple[tuple[str, str], ...]  # (host, node) with nothing to change: not touched
    max_unavailable: int
    check_run: BootstrapResult | None = None  # the host phase in check mode that found the changes

    @property
    def batches(self) -> tuple[tuple[NodePlan, ...], ...]:
        count = max((node.batch for node in self.nodes), default=0)
        return tuple(
            tuple(node for node in self.nodes if node.batch == number) for number in range(1, count + 1)
        )


@dataclass(frozen=True)
class StepResult:
    step: str
    status: str  # ok | failed | interrupted
    seconds: float
    message: str
    hint: str = ""


def outcome_of(steps: tuple[StepResult, ...], all_steps: tuple[str, ...], done: str) -> str:
    """A node's outcome from its steps: failed | interrupted | `done` (every step ok) | pending (not
    started, or stopped between two steps). The upgrade's and the migration's node-by-node runs."""
    if any(step.status == "failed" for step in steps):
        return "failed"
    if any(step.status == "interrupted" for step in steps):
        return "interrupted"
    finished = {step.step for step in steps if step.status == "ok"}
    return done if finished >= set(all_steps) else "pending"


@dataclass(frozen=True)
class NodeUpgrade:
    plan: NodePlan
    steps: tuple[StepResult, ...] = ()

    @property
    def outcome(self) -> str:
        """upgraded | failed | interrupted | pending (not started, or stopped between two steps)."""
        return outcome_of(self.steps, STEPS, "upgraded")

    @property
    def failed_step(self) -> StepResult | None:
        return next((step for step in self.steps if step.status != "ok"), None)


@dataclass(frozen=True)
class UpgradeResult:
    plan: UpgradePlan
    check: bool
    nodes: tuple[NodeUpgrade, ...] = ()
    interrupted: bool = False
    host_runs: tuple[BootstrapResult, ...] = field(default=(), compare=False)  # one per batch

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(node.outcome == "upgraded" for node in self.nodes)

    @property
    def exit_code(self) -> ExitCode:
        if self.interrupted:
            return ExitCode.INTERRUPTED
        return ExitCode.OK if self.ok else ExitCode.CHECK_FAILED

    @property
    def stopped_at(self) -> NodeUpgrade | None:
        """The node the upgrade stopped at (failed or interrupted), None when it did not stop."""
        return next((node for node in self.nodes if node.outcome in ("failed", "interrupted")), None)
