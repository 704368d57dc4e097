"""Failure signatures → cause → fix: match log lines, pod states and scheduler messages."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuctl.diagnose.signatures import SIGNATURES, Signature

__all__ = ["SIGNATURES", "Diagnosis", "Signature", "diagnose", "diagnose_scheduling"]


@dataclass(frozen=True)
class Diagnosis:
    """A matched signature: which one, the evidence line, and the cause and hint filled in."""

    signature_id: str
    evidence: str
    cause: str
    hint: str


class _Defaulting(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _fill(text: str, context: dict[str, str]) -> str:
    return text.format_map(_Defaulting(context))


def _evidence_line(text: str, match: re.Match[str]) -> str:
    start = text.rfind("\n", 0, match.start()) + 1
    end = text.find("\n", match.end())
    line = text[start : end if end >= 0 else len(text)].strip()
    return line[:300]


def _any_of(source: str) -> re.Pattern[str]:
    patterns = [f"(?:{s.pattern.pattern})" for s in SIGNATURES if s.source == source]
    return re.compile("|".join(patterns), re.IGNORECASE)


# One pass over a healthy log instead of one per signature: most logs match nothing.
_ANY_OF_SOURCE = {source: _any_of(source) for source in {s.source for s in SIGNATURES}}


def diagnose(text: str, source: str, **context: str) -> Diagnosis | None:
    """The first signature of `source` matching `text` (table order = priority), or None."""
    prefilter = _ANY_OF_SOURCE.get(source)
    if prefilter is None or not prefilter.search(text):
        return None
    for signature in SIGNATURES:
        if signature.source != source:
            continue
        match = signature.pattern.search(text)
        if match:
            return Diagnosis(
                signature.id,
                _evidence_line(text, match),
                _fill(signature.cause, context),
                _fill(signature.hint, context),
            )
    return None


_REASONS = re.compile(r"nodes are available: (?P<reasons>.*?)(?:\. preemption:|\.?$)", re.DOTALL)
_NOISE = re.compile(r"didn't match Pod's node affinity/selector|didn't match node selector")


def scheduling_reasons(message: str) -> list[str]:
    """Split a FailedScheduling message into its reasons, e.g. `1 Insufficient nvidia.com/gpu`."""
    match = _REASONS.search(message)
    body = match.group("reasons") if match else message
    return [part.strip() for part in re.split(r",\s(?=\d+ )", body) if part.strip()]


def diagnose_scheduling(message: str, **context: str) -> Diagnosis | None:
    """Diagnose why a pod pinned to one node did not schedule.

    The verification pod selects one node, so every other node reports "didn't match Pod's node
    affinity/selector": that reason is noise unless it is the only one.
    """
    reasons = scheduling_reasons(message)
    relevant = [reason for reason in reasons if not _NOISE.search(reason)] or reasons
    for signature in SIGNATURES:
        if signature.source != "scheduling":
            continue
        for reason in relevant:
            if signature.pattern.search(reason):
                return Diagnosis(
                    signature.id, reason, _fill(signature.cause, context), _fill(signature.hint, context)
                )
    return None
