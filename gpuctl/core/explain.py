"""`gpuctl explain`: every known failure signature in a pasted text, with cause and fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuctl.core.explain_subject.evidence import Evidence, Subject
from gpuctl.core.since import FORMATS, Since, cut
from gpuctl.core.since import note as since_note
from gpuctl.diagnose import Diagnosis
from gpuctl.diagnose.scan import find_all
from gpuctl.errors import ConfigError, ExitCode
from gpuctl.nvidia_smi_parse import SmiReport, parse_nvidia_smi


@dataclass(frozen=True)
class ExplainMatch:
    id: str
    category: str
    cause: str
    fix: str
    line: str
    # "cause": what went wrong first (a finding of the root's layer rank, diagnose.root_first);
    # "consequence": a finding on a layer above it, which follows from the cause
    role: str = "cause"


CAUSE = "cause"
CONSEQUENCE = "consequence"


@dataclass(frozen=True)
class ExplainResult:
    matches: tuple[ExplainMatch, ...]
    nvidia_smi: SmiReport | None = None  # when the text is nvidia-smi output
    subject: Subject | None = None  # the pod or node explained (None: a pasted text)
    evidence: tuple[Evidence, ...] = ()  # what was read about the subject, the deciding line first
    exit_code: ExitCode = ExitCode.OK
    note: str = ""  # why nothing was diagnosed (a node without GPUs), instead of a cause; what --since kept
    # --since: {"from": ISO 8601, "lines": read, "kept": N, "undated_before": left out unplaced}
    since: dict[str, Any] | None = None

    @property
    def cause(self) -> str | None:
        """The id of the finding reported first, the root cause; None when nothing was found."""
        return self.matches[0].id if self.matches else None


def _nvidia_smi(text: str) -> SmiReport | None:
    try:
        report = parse_nvidia_smi(text)
    except ValueError:
        return None
    return report if report.gpus else None


def roles(found: list[Diagnosis]) -> list[str]:
    """The role of each of `found` (root first, as find_all orders them): the findings of the
    first one's rank are causes, each independent of the others; those of a higher rank (a layer
    nearer the application) are consequences of them."""
    root = found[0].rank if found else 0
    return [CAUSE if diagnosis.rank <= root else CONSEQUENCE for diagnosis in found]


def explain(*, text: str, since: Since | None = None) -> ExplainResult:
    """Match `text` (logs, events, `kubectl describe`, nvidia-smi, journal lines) line by line,
    the root cause first and the findings it explains after it as its consequences; with `since`,
    only its lines stamped from then on (ConfigError where no line carries a stamp)."""
    if since is None:
        return _explained(text)
    kept = cut(text, since)
    if not kept.dated:
        raise ConfigError(
            f"--since {since.word}: no line of the text starts with a time stamp ({FORMATS})",
            hint="drop --since, or capture with time stamps: `journalctl -o short-iso`, `dmesg -T`, "
            "`kubectl logs POD --timestamps`",
        )
    window = {
        "from": since.moment.isoformat(),
        "lines": kept.lines,
        "kept": kept.kept,
        "undated_before": kept.undated_before,
    }
    result = _explained(kept.text)
    return ExplainResult(result.matches, result.nvidia_smi, note=since_note(since, kept), since=window)


def _explained(text: str) -> ExplainResult:
    found = find_all(text)
    matches = tuple(
        ExplainMatch(each.signature_id, each.category, each.cause, each.hint, each.evidence, role)
        for each, role in zip(found, roles(found), strict=True)
    )
    return ExplainResult(matches, _nvidia_smi(text))
