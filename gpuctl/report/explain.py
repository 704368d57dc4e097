"""Render an ExplainResult: a rich listing for people, a `gpuctl.explain/v1` JSON envelope for tools."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

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
            {"id": m.id, "category": m.category, "cause": m.cause, "fix": m.fix, "line": m.line}
            for m in result.matches
        ],
        "nvidia_smi": asdict(result.nvidia_smi) if result.nvidia_smi else None,
        "subject": asdict(result.subject) if result.subject else None,
        "evidence": [asdict(evidence) for evidence in result.evidence],
        "note": result.note,
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
    if not result.matches:
        console.print("no known failure signature found")
        return
    for number, match in enumerate(result.matches, start=1):
        console.print(literal(f"{number}. {match.id} [{match.category}]", style="bold"))
        console.print(literal(f"   line:  {match.line}"))
        console.print(literal(f"   cause: {match.cause}"))
        console.print(literal(f"   fix:   {match.fix}"))


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
