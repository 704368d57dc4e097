"""`gpuctl explain`: every known failure signature in a pasted text, with cause and fix."""

from __future__ import annotations

from dataclasses import dataclass

from gpuctl.core.explain_subject.evidence import Evidence, Subject
from gpuctl.diagnose.scan import find_all
from gpuctl.errors import ExitCode
from gpuctl.nvidia_smi_parse import SmiReport, parse_nvidia_smi


@dataclass(frozen=True)
class ExplainMatch:
    id: str
    category: str
    cause: str
    fix: str
    line: str


@dataclass(frozen=True)
class ExplainResult:
    matches: tuple[ExplainMatch, ...]
    nvidia_smi: SmiReport | None = None  # when the text is nvidia-smi output
    subject: Subject | None = None  # the pod or node explained (None: a pasted text)
    evidence: tuple[Evidence, ...] = ()  # what was read about the subject, the deciding line first
    exit_code: ExitCode = ExitCode.OK
    note: str = ""  # why nothing was diagnosed (a node without GPUs), instead of a cause


def _nvidia_smi(text: str) -> SmiReport | None:
    try:
        report = parse_nvidia_smi(text)
    except ValueError:
        return None
    return report if report.gpus else None


def explain(*, text: str) -> ExplainResult:
    """Match `text` (logs, events, `kubectl describe`, nvidia-smi, journal lines) line by line."""
    matches = tuple(
        ExplainMatch(found.signature_id, found.category, found.cause, found.hint, found.evidence)
        for found in find_all(text)
    )
    return ExplainResult(matches, _nvidia_smi(text))
