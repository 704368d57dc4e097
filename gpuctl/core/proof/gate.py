"""The gate: what one run's verdicts (gpuctl.core.proof.verdict) do to the cluster, in one place
for every caller of gpuctl.core.proof.prove (verify and its --watch rounds, bootstrap's verify
phase, the upgrade's verify step).

1. Where a node's way of handing out GPUs can keep one GPU from pods, GPUs whose failure is
   confined to them are gated one by one and GPUs proven again let back (its allocation's
   apply_device_gate); such a node counts as passed for the node gate.
2. `--gate-mode taint` (the default): the node gate taint (`--gate-taint`, default
   gpuctl.io/unproven) on the nodes that failed, off those that passed (gpuctl.core.gate).
   `--gate-mode condition`: no taint is written; a Node Readiness Controller rule owns it.
3. The node condition (`GPUProven`) on every GPU node judged (gpuctl.core.node_condition).

A busy node (its workloads hold every GPU) is not judged: its gate stays as it is and its
condition keeps its status with a reason that says so. Only the nodes given a verdict are touched.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.core.gate import GateResult, apply_gate
from gpuctl.core.node_condition import condition_verdict, publish_conditions
from gpuctl.core.proof.verdict import PROVEN
from gpuctl.core.stacks.base import DeviceGateResult
from gpuctl.core.stacks.registry import ALLOCATIONS
from gpuctl.defaults import GATE_CONDITION_TYPE, GATE_TAINT_KEY
from gpuctl.errors import UnreachableError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gpuctl.core.proof.verdict import NodeVerdict
    from gpuctl.core.verify.model import VerifyResult


@dataclass(frozen=True)
class GateOptions:
    """`--gate-taint`, `--gate-mode`, `--gate-condition` (bootstrap and the upgrade: the defaults)."""

    taint_key: str = GATE_TAINT_KEY
    mode: str = "taint"  # taint | condition
    condition_type: str = GATE_CONDITION_TYPE


def gate_verified(
    api_client: Any,
    result: VerifyResult,
    options: GateOptions,
    level: str,
    verdicts: Mapping[str, NodeVerdict],
) -> VerifyResult:
    """The run's result with what the gate did (`result.gate`, each gated GPU's node's `gpu_devices`) to
    the nodes in `verdicts` (node → its verdict). A refused write is kept in the gate's result
    (GateResult.refusal) for the caller to raise once the report is out."""
    gated_nodes = [node for node in result.nodes if node.name in verdicts]
    try:
        devices = DeviceGateResult()
        for allocation in ALLOCATIONS.values():
            own = [node for node in gated_nodes if node.gpu_allocation is allocation.stack]
            if own:
                devices = devices.plus(
                    allocation.apply_device_gate(api_client, own, level, options.taint_key)
                )
        device_refusal: UnreachableError | None = None
    except UnreachableError as error:  # kept, as the node gate's: raised once the report is out
        devices, device_refusal = DeviceGateResult(), error
    passed = {
        name: verdict.verdict == PROVEN or name in devices.confined
        for name, verdict in verdicts.items()
        if verdict.judged
    }
    if options.mode == "taint":
        applied = apply_gate(
            api_client, verdicts=passed, level=level, keep_refusal=True, taint_key=options.taint_key
        )
    else:
        applied = GateResult(
            level=level, dry_run=False, gated=(), ungated=(), unchanged=tuple(sorted(passed))
        )
    conditions = publish_conditions(
        api_client,
        # a missing node: left out
        verdicts={node.name: condition_verdict(node, verdicts[node.name]) for node in gated_nodes},
        condition_type=options.condition_type,
        keep_refusal=True,
    )
    refusals = [
        (error.message, error.hint)
        for error in (device_refusal, applied.refusal(), conditions.refusal())
        if error is not None
    ]
    gate = dataclasses.replace(
        applied,
        taint_key=options.taint_key,
        mode=options.mode,
        condition_type=options.condition_type,
        conditions=conditions.published,
        devices_gated=devices.gated,
        devices_lifted=devices.lifted,
        refused=refusals[0][0] if refusals else "",
        refused_hint=refusals[0][1] if refusals else "",
    )
    nodes = tuple(
        dataclasses.replace(node, gpu_devices=devices.of(node.name)) if node.name in verdicts else node
        for node in result.nodes
    )
    return dataclasses.replace(result, nodes=nodes, gate=gate)
