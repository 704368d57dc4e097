"""`verify --gate`'s options: the taint key, the mode and the condition type, checked and folded
into gpuctl.core.proof.gate.GateOptions."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated

import typer

from gpuctl.defaults import GATE_CONDITION_TYPE, GATE_MODES, GATE_TAINT_EFFECT, GATE_TAINT_KEY
from gpuctl.errors import ConfigError

if TYPE_CHECKING:
    from gpuctl.core.proof.gate import GateOptions
    from gpuctl.core.verify import VerifyOptions

GateTaintOption = Annotated[
    str,
    typer.Option(
        "--gate-taint",
        metavar="KEY",
        help="The gate taint's key (e.g. readiness.k8s.io/gpu-proven for a Node Readiness Controller "
        "rule; see render --readiness-rule).",
    ),
]
GateModeOption = Annotated[
    str,
    typer.Option(
        "--gate-mode",
        metavar="taint|condition",
        help="taint: gpuctl writes the gate taint and the node condition; condition: only the "
        "condition, and a NodeReadinessRule's controller owns the taint.",
    ),
]
GateConditionOption = Annotated[
    str,
    typer.Option(
        "--gate-condition",
        metavar="TYPE",
        help="The node condition type --gate publishes on every GPU node it judges.",
    ),
]


def _key_problem(key: str) -> str:
    """What the API server would refuse in a taint key (a qualified name), "" when none."""
    from gpuctl.names import qualified_name_problem

    return qualified_name_problem(key) if key else "empty"


def gate_options(gate: bool, taint_key: str, mode: str, condition_type: str) -> GateOptions | None:
    """The gate's options (None without --gate); ConfigError (exit 2) for a value the API server
    would refuse."""
    from gpuctl.core.proof.gate import GateOptions

    if not gate:
        return None
    problem = _key_problem(taint_key)
    if problem:
        raise ConfigError(
            f"--gate-taint {taint_key!r}: {problem}",
            hint="give a taint key, e.g. --gate-taint readiness.k8s.io/gpu-proven "
            f"(default {GATE_TAINT_KEY})",
        )
    if mode not in GATE_MODES:
        raise ConfigError(
            f"--gate-mode {mode!r}: not one of {', '.join(GATE_MODES)}",
            hint="e.g. --gate-mode condition, with a NodeReadinessRule from `gpuctl render --readiness-rule`",
        )
    problem = _key_problem(condition_type)
    if problem:
        raise ConfigError(
            f"--gate-condition {condition_type!r}: {problem}",
            hint=f"give a condition type, e.g. --gate-condition {GATE_CONDITION_TYPE}",
        )
    return GateOptions(taint_key=taint_key, mode=mode, condition_type=condition_type)


def with_gate_toleration(options: VerifyOptions, gate: GateOptions | None) -> VerifyOptions:
    """The verification pods tolerate the gate's own taint, whatever its key, so that a gated node
    is proven again (gpuctl.io/unproven is tolerated already)."""
    from gpuctl.core.verify.model import Toleration

    if gate is None or gate.taint_key == GATE_TAINT_KEY:
        return options
    toleration = Toleration(gate.taint_key, "Exists", "", GATE_TAINT_EFFECT)
    return dataclasses.replace(options, tolerations=(*options.tolerations, toleration))
