"""`verify --gate`: what one run's verdict does to the cluster, in one place for verify and its
--watch rounds.

1. On DRA nodes, GPUs whose failure is confined to them get a DeviceTaintRule, and GPUs proven
   again lose theirs (gpuctl.core.device_gate); such a node counts as passed for the node gate.
2. `--gate-mode taint` (the default): the node gate taint (`--gate-taint`, default
   gpuctl.io/unproven) on the nodes that failed, off those that passed (gpuctl.core.gate).
   `--gate-mode condition`: no taint is written; a Node Readiness Controller rule owns it.
3. The node condition (`GPUProven`) on every GPU node judged (gpuctl.core.node_condition).

A busy node (its workloads hold every GPU) is not judged: its gate stays as it is and its
condition keeps its status with a reason that says so.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.core.device_gate import DeviceGateResult, apply_device_gate
from gpuctl.core.gate import GateResult, apply_gate
from gpuctl.core.node_condition import publish_conditions, verdict_of
from gpuctl.defaults import GATE_CONDITION_TYPE, GATE_TAINT_KEY
from gpuctl.errors import UnreachableError

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyResult


@dataclass(frozen=True)
class GateOptions:
    """`--gate-taint`, `--gate-mode`, `--gate-condition`."""

    taint_key: str = GATE_TAINT_KEY
    mode: str = "taint"  # taint | condition
    condition_type: str = GATE_CONDITION_TYPE


def gate_verified(api_client: Any, result: VerifyResult, options: GateOptions, level: str) -> VerifyResult:
    """The run's result with what the gate did (`result.gate`, each DRA node's `gpu_devices`).
    A refused write is kept in the gate's result (GateResult.refusal) for the caller to raise
    once the report is out."""
    try:
        devices = apply_device_gate(api_client, nodes=result.nodes, level=level, taint_key=options.taint_key)
        device_refusal: UnreachableError | None = None
    except UnreachableError as error:  # kept, as the node gate's: raised once the report is out
        devices, device_refusal = DeviceGateResult(), error
    judged = [node for node in result.nodes if not node.busy]
    verdicts = {node.name: node.ok or node.name in devices.confined for node in judged}
    if options.mode == "taint":
        applied = apply_gate(
            api_client, verdicts=verdicts, level=level, keep_refusal=True, taint_key=options.taint_key
        )
    else:
        applied = GateResult(
            level=level, dry_run=False, gated=(), ungated=(), unchanged=tuple(sorted(verdicts))
        )
    conditions = publish_conditions(
        api_client,
        verdicts={node.name: verdict_of(node) for node in result.nodes},  # a missing node: left out
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
    nodes = tuple(dataclasses.replace(node, gpu_devices=devices.of(node.name)) for node in result.nodes)
    return dataclasses.replace(result, nodes=nodes, gate=gate)
