"""`prove`: run verify at a level, judge each node by the one rule (gpuctl.core.proof.verdict) and,
when asked, apply the gate to those verdicts (gpuctl.core.proof.gate). `gpuctl verify`, bootstrap's
verify phase and the upgrade's verify step all prove through here."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.core.proof.gate import GateOptions, gate_verified
from gpuctl.core.proof.verdict import NodeVerdict, judge
from gpuctl.core.verify.run import verify

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyOptions, VerifyResult
    from gpuctl.core.verify.progress import PodProgress
    from gpuctl.errors import ExitCode, UnreachableError


@dataclass(frozen=True)
class Proof:
    """Verify's result (with what the gate did, `result.gate`) and each judged node's verdict."""

    result: VerifyResult
    verdicts: tuple[NodeVerdict, ...]

    def of(self, node: str) -> NodeVerdict | None:
        """The node's verdict, None when verify found no such GPU node."""
        return next((verdict for verdict in self.verdicts if verdict.node == node), None)

    @property
    def ok(self) -> bool:
        return self.result.ok

    @property
    def exit_code(self) -> ExitCode:
        return self.result.exit_code

    def gate_refusal(self) -> UnreachableError | None:
        """The gate's write the API server refused (exit 3), for the caller to raise once it reported."""
        return self.result.gate.refusal() if self.result.gate is not None else None


def prove(
    api_client: Any,
    *,
    options: VerifyOptions,
    gate: GateOptions | None = None,
    nodes: Iterable[str] | None = None,
    cordoned: bool = False,
    progress: PodProgress | None = None,
) -> Proof:
    """Verify at `options.proof.level`, judge `nodes` (None: every node verify found) and, with
    `gate`, gate them at that level. `cordoned`: the caller cordoned and drained these nodes
    itself (the upgrade's verify step; see gpuctl.core.proof.verdict)."""
    result = verify(api_client, options, progress)
    wanted = None if nodes is None else set(nodes)
    verdicts = tuple(
        judge(node, cordoned=cordoned) for node in result.nodes if wanted is None or node.name in wanted
    )
    if gate is not None:
        by_node = {verdict.node: verdict for verdict in verdicts}
        result = gate_verified(api_client, result, gate, options.proof.level, by_node)
    return Proof(result, verdicts)
