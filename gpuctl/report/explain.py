"""Render an ExplainResult: a rich listing for people, a `gpuctl.explain/v1` JSON envelope for tools."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from gpuctl.core.explain import CAUSE
from gpuctl.report.safe_text import literal

if TYPE_CHECKING:
    from rich.console import Console

    from gpuctl.core.explain import ExplainResult

SCHEMA = "gpuctl.explain/v1"


def to_json(result: ExplainResult) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them."""
    return {
        "schema": SCHEMA,
        "matches": [
            {
                "id": match.id,
                "category": match.category,
                "cause": match.cause,
                "fix": match.fix,
                "line": match.line,
                "role": match.role,
            }
            for match in result.matches
        ],
        "cause": result.cause,
        "nvidia_smi": asdict(result.nvidia_smi) if result.nvidia_smi else None,
        "subject": asdict(result.subject) if result.subject else None,
        "evidence": [asdict(evidence) for evidence in result.evidence],
        "note": result.note,
        "since": result.since,
    }


def print_table(result: ExplainResult, console: Console) -> None:
    if result.subject is not None:
        _print_subject(result, console)
        return
    if result.nvidia_smi is not None:
        smi = result.nvidia_smi
        names = ", ".join(sorted({gpu.name for gpu in smi.gpus}))
        summary = (
            f"nvidia-smi ({smi.format}): {len(smi.gpus)} GPU(s) {names}; driver {smi.driver_version or '?'}"
            f", CUDA {smi.cuda_version or '?'}"
            + (f", {smi.mig_devices} MIG device(s)" if smi.mig_devices else "")
        )
        console.print(literal(summary))
    if result.note:
        console.print(literal(result.note))
    if not result.matches:
        console.print("no known failure signature found")
        return
    labels = _labels(result)
    if labels:
        console.print(literal(_summary(result)))
    for number, match in enumerate(result.matches, start=1):
        label = labels.get(number, "")
        console.print(literal(f"{number}. {match.id} [{match.category}]{label}", style="bold"))
        console.print(literal(f"   line:  {match.line}"))
        console.print(literal(f"   cause: {match.cause}"))
        console.print(literal(f"   fix:   {match.fix}"))


def _causes(result: ExplainResult) -> list[str]:
    return [match.id for match in result.matches if match.role == CAUSE]


def _labels(result: ExplainResult) -> dict[int, str]:
    """What each finding is, by its number, where there are several: a cause, or a consequence
    of the cause(s) above it."""
    if len(result.matches) < 2:
        return {}
    causes = _causes(result)
    of = causes[0] if len(causes) == 1 else "the causes above"
    return {
        number: " (cause)" if match.role == CAUSE else f" (consequence of {of})"
        for number, match in enumerate(result.matches, start=1)
    }


def _summary(result: ExplainResult) -> str:
    """One line saying which finding explains the others, in words."""
    causes = _causes(result)
    consequences = len(result.matches) - len(causes)
    if not consequences:
        return f"{len(causes)} independent causes (each of the same layer): fix each of them"
    named = causes[0] if len(causes) == 1 else f"{len(causes)} causes ({', '.join(causes)})"
    following = "it" if len(causes) == 1 else "them"
    return (
        f"root cause: {named}; the {consequences} other finding(s) are consequences of {following}: "
        f"fix the cause first, then run again"
    )


def _print_subject(result: ExplainResult, console: Console) -> None:
    """The one cause and fix of a pod or node, then the evidence read, the deciding line first."""
    console.print(literal(str(result.subject), style="bold"))
    if result.note:
        console.print(literal(result.note))
    elif result.matches:
        match = result.matches[0]
        console.print(literal(f"cause: {match.cause} [{match.id}]"))
        console.print(literal(f"fix:   {match.fix}"))
    else:
        console.print("cause: no known failure signature found in the evidence below")
    console.print("evidence:")
    for evidence in result.evidence:
        console.print(literal(f"  {evidence.source}: {evidence.text}"))
