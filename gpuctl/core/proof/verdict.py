"""The one rule that turns a node's checks into its verdict: proven, busy or failed.

Every caller of proof (verify, bootstrap's verify phase, the upgrade's and migration's verify
step) reads the verdict here, through gpuctl.core.proof.prove; the gate, the GPUProven condition
and the step that halts an upgrade all follow it.

A busy node (its workloads hold every GPU) is not judged: its gate and condition stay as an earlier
proof left them. A node its caller cordoned and drained itself (`cordoned`: the upgrade's verify
step) is judged differently in two ways only: its own cordon is not a failure, and GPUs still held
after the drain (a DaemonSet's pod) are one: it cannot be proven.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.verify.model import IN_USE_CHECK

if TYPE_CHECKING:
    from gpuctl.core.verify.model import Check, NodeResult

PROVEN = "proven"
BUSY = "busy"
FAILED = "failed"
# The check a cordoned node fails by design while it is upgraded: not a verdict on the upgrade.
CORDON_CHECK = "node.schedulable"


@dataclass(frozen=True)
class NodeVerdict:
    """One node's verdict and the checks that decided it (empty unless it failed)."""

    node: str
    verdict: str  # proven | busy | failed
    failures: tuple[Check, ...] = ()  # a busy node's too: they fail the run, not its gate

    @property
    def judged(self) -> bool:
        """Proven or failed: the gate and the condition follow it (a busy node is left as it was)."""
        return self.verdict != BUSY

    @property
    def passed_unproven(self) -> bool:
        """Busy, and no check failed: the run passes, yet this run proved nothing on it."""
        return self.verdict == BUSY and not self.failures


def fails_node(check: Check, *, busy: bool, cordoned: bool) -> bool:
    """Whether this check fails its node (see the module's rule)."""
    if cordoned:
        return (check.failed and check.id != CORDON_CHECK) or (busy and check.id == IN_USE_CHECK)
    return check.failed


def judge(node: NodeResult, *, cordoned: bool = False) -> NodeVerdict:
    """The node's verdict under the one rule."""
    failures = tuple(check for check in node.checks if fails_node(check, busy=node.busy, cordoned=cordoned))
    if node.busy and not cordoned:
        return NodeVerdict(node.name, BUSY, failures)
    return NodeVerdict(node.name, FAILED if failures else PROVEN, failures)


def passed_unproven(node: NodeResult) -> bool:
    """Busy and passing (verify's report and metrics count these apart)."""
    return judge(node).passed_unproven


def is_proven(node: NodeResult) -> bool:
    """Passed with its GPUs proven by this run's pods (verify's report and metrics)."""
    return judge(node).verdict == PROVEN
