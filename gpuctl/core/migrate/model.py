"""What a migration between GPU stacks plans and what it did, as frozen results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.upgrade.model import NodePlan, StepResult, outcome_of
from gpuctl.errors import ExitCode

if TYPE_CHECKING:
    from gpuctl.core.chart_release import HelmOutcome
    from gpuctl.core.stacks import Stack
    from gpuctl.core.verify.model import VerifyResult
    from gpuctl.kube.apply import Applied

# The node label gpuctl owns that says which stack serves a node's GPUs (the stack's --stack value):
# both stacks' DaemonSets select it while a cluster moves, and after.
STACK_LABEL = "gpuctl.io/gpu-stack"
# Each node goes through these, in this order; a batch takes each step on all its nodes before the next.
MIGRATION_STEPS = ("cordon", "drain", "move", "serve", "verify", "uncordon")


@dataclass(frozen=True)
class MigrationPlan:
    """`nodes`: the GPU nodes to move, in order, the first a batch of its own (the canary);
    `moved`: those already served by the new stack; `carried`/`not_carried`: the GPU sharing
    settings of the old stack and what becomes of them."""

    source: Stack
    target: Stack
    nodes: tuple[NodePlan, ...]
    moved: tuple[str, ...]
    max_unavailable: int
    carried: tuple[str, ...] = ()
    not_carried: tuple[str, ...] = ()
    old_stack_present: bool = True  # its DaemonSets or release are still there (removed at the end)
    # The feature gates the new stack is rendered with, to carry the old sharing over.
    feature_gates: tuple[str, ...] = ()
    # Where the new stack finds the NVIDIA driver the old stack installed ("": the host's root).
    driver_root: str = ""

    @property
    def batches(self) -> tuple[tuple[NodePlan, ...], ...]:
        count = max((node.batch for node in self.nodes), default=0)
        return tuple(
            tuple(node for node in self.nodes if node.batch == number) for number in range(1, count + 1)
        )

    @property
    def nothing_to_do(self) -> bool:
        return not self.nodes and not self.old_stack_present


@dataclass(frozen=True)
class NodeMigration:
    plan: NodePlan
    steps: tuple[StepResult, ...] = ()

    @property
    def outcome(self) -> str:
        """migrated | failed | interrupted | pending (not started, or stopped between two steps)."""
        return outcome_of(self.steps, MIGRATION_STEPS, "migrated")


@dataclass(frozen=True)
class MigrationResult:
    """`objects`/`helm`: the new stack put in place (and the old one held to its nodes);
    `removed`: what of the old stack was removed once its last node had moved; `verify`: the
    whole cluster proven on the new stack at the end."""

    plan: MigrationPlan
    check: bool
    nodes: tuple[NodeMigration, ...] = ()
    interrupted: bool = False
    objects: tuple[Applied, ...] = ()
    helm: HelmOutcome | None = None
    pinned: tuple[str, ...] = ()  # what was written to hold the old stack to its nodes
    removed: tuple[str, ...] = ()
    verify: VerifyResult | None = None
    error: str = ""  # a step outside the nodes' (installing, removing) that failed
    hint: str = ""

    @property
    def ok(self) -> bool:
        nodes_ok = all(node.outcome == "migrated" for node in self.nodes)
        verified = self.verify is None or self.verify.ok
        return not self.interrupted and not self.error and nodes_ok and verified

    @property
    def exit_code(self) -> ExitCode:
        if self.interrupted:
            return ExitCode.INTERRUPTED
        return ExitCode.OK if self.ok else ExitCode.CHECK_FAILED

    @property
    def stopped_at(self) -> NodeMigration | None:
        return next((node for node in self.nodes if node.outcome in ("failed", "interrupted")), None)
