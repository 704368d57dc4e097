"""What explaining a pod or node collects: evidence lines, each with the diagnosis it gave (if any),
gathered in order of precedence, so the first line with a diagnosis names the cause."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from gpuctl.diagnose import Diagnosis, diagnose
from gpuctl.diagnose.scan import find_all

LOG_TAIL_LINES = 200  # what a person reads of a log: its end, where a crash says why
LINE_CHARS = 300  # of one evidence line
QUIET_LOG_LINES = 3  # of a log that matched nothing, the last lines shown as evidence


@dataclass(frozen=True)
class Subject:
    """What is explained: kind pod | node, its name and (pods only) namespace."""

    kind: str
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}" + (f" in namespace {self.namespace}" if self.namespace else "")


@dataclass(frozen=True)
class Evidence:
    """One line a person would read: where it came from (`event FailedScheduling`, `container
    nvidia-smi terminated`, `pod kube-system/nvidia-device-plugin-x log`) and the text."""

    source: str
    text: str


@dataclass(frozen=True)
class Clue:
    """An evidence line and the diagnosis it gave (None: it explains nothing by itself)."""

    evidence: Evidence
    diagnosis: Diagnosis | None = None


def clue(source: str, text: str, diagnosis: Diagnosis | None = None) -> Clue:
    """An evidence line: a multi-line text (a runtime error quoting the hook's output) as its first
    line, and the line the diagnosis matched when that is another."""
    lines = [line.strip() for line in text.splitlines() if line.strip()] or [""]
    line = lines[0][:LINE_CHARS]
    if diagnosis is not None and diagnosis.evidence not in line:
        line = f"{line[: LINE_CHARS // 2]} ... {diagnosis.evidence}" if len(lines) > 1 else diagnosis.evidence
    return Clue(Evidence(source, line), diagnosis)


def first_cause(clues: Iterable[Clue]) -> Clue | None:
    """The first clue with a diagnosis, in the order they were gathered (their precedence); a
    generic row ("the start hook failed") only when no specific one was found."""
    found = [c for c in clues if c.diagnosis is not None]
    specific = [c for c in found if not _generic(c)]
    return next(iter(specific or found), None)


def _generic(found: Clue) -> bool:
    from gpuctl.diagnose import signature_of

    signature = signature_of(found.diagnosis.signature_id) if found.diagnosis else None
    return signature is not None and signature.generic


def diagnose_text(text: str, sources: tuple[str, ...], **context: str) -> Diagnosis | None:
    """The first row of the first of `sources` matching `text`; else the first signature of any
    source found in it (a log line the table files under another source)."""
    for source in sources:
        found = diagnose(text, source, **context)
        if found is not None:
            return found
    return next(iter(find_all(text)), None)


def log_clues(source: str, log: str, sources: tuple[str, ...], **context: str) -> Iterator[Clue]:
    """A log's evidence: the line that gave its diagnosis, or its last lines when none did."""
    found = diagnose_text(log, sources, **context)
    if found is not None:
        yield clue(source, found.evidence, found)
        return
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in lines[-QUIET_LOG_LINES:]:
        yield clue(source, line)
