"""Find every known signature in any pasted text: logs, events, `kubectl describe`, nvidia-smi."""

from __future__ import annotations

import re
from itertools import islice

from gpuctl.diagnose import (
    SCHEDULING_LINE,
    SCHEDULING_SOURCES,
    Diagnosis,
    catalogue_diagnoses,
    make_diagnosis,
    root_first,
    scheduling_diagnosis,
)
from gpuctl.diagnose.container_context import read_in_container
from gpuctl.diagnose.literals import required_literals
from gpuctl.diagnose.signatures import Signature
from gpuctl.diagnose.table import SIGNATURES

# A pasted text names no node, namespace or image: the hints read NODE, NAMESPACE and IMAGE there.
_NO_CONTEXT: dict[str, str] = {}
# Image-pull rows use words ("not found", "unauthorized") that other tools print too: a line counts
# only when it is about pulling an image.
_PULL_CONTEXT = re.compile(r"pull|image|registry|manifest|/v2/", re.IGNORECASE)

_ORDERED = tuple(s for s in SIGNATURES if not s.generic) + tuple(s for s in SIGNATURES if s.generic)
# The lowercased literals a match of each signature starts with (diagnose/literals.py); None: no
# such screen, its regex is run on every line. Screening with str.lower() is IGNORECASE's own
# matching but for a few non-ASCII letters it folds onto ASCII ones (the long s, the Kelvin sign),
# which no tool spells its messages with.
_LITERALS = {signature.id: required_literals(signature.pattern) for signature in _ORDERED}

# A line is matched WINDOW characters at a time, so the work per line is bounded: a longer line
# (a JSON log record, a journal line carrying a stack trace) is matched in windows centred on each
# place a signature may start, at most WINDOWS of them per line. A signature whose own match is
# shorter than WINDOW // 2 is found wherever it is in the line.
WINDOW = 2000
WINDOWS = 200


def _applies(signature: Signature, line: str) -> bool:
    return signature.source != "image-pull" or bool(_PULL_CONTEXT.search(line))


def _candidates(lowered: str) -> tuple[Signature, ...]:
    """The signatures that may match the line whose lowercase is `lowered`, in table order."""
    return tuple(
        signature
        for signature in _ORDERED
        if (literals := _LITERALS[signature.id]) is None or any(literal in lowered for literal in literals)
    )


def _line_matches(line: str, candidates: tuple[Signature, ...]) -> list[Diagnosis]:
    # A scheduling message is one message: the cause among its reasons, and the rest. A line
    # holding no literal of a scheduling row is none (and is spared the regex).
    scheduling = any(signature.source in SCHEDULING_SOURCES for signature in candidates)
    if scheduling and SCHEDULING_LINE.search(line):
        found = scheduling_diagnosis(line, _NO_CONTEXT, evidence=line)
        return [found] if found else []
    for signature in candidates:
        if signature.source in SCHEDULING_SOURCES or not _applies(signature, line):
            continue
        match = signature.pattern.search(line)
        if match:
            return [make_diagnosis(signature, match, line, _NO_CONTEXT)]
    return []


def _starts(line: str, lowered: str, candidates: tuple[Signature, ...]) -> list[int]:
    """Where in `line` a match of one of `candidates` may start, in order (each literal's places
    when `lowered` lines up with `line`; else, and for a signature without literals, its regex's)."""
    places: set[int] = {0} if SCHEDULING_LINE.search(line) else set()
    for signature in candidates:
        literals = _LITERALS[signature.id]
        if literals is None or len(lowered) != len(line):
            places.update(match.start() for match in islice(signature.pattern.finditer(line), WINDOWS))
            continue
        for literal in literals:
            at = lowered.find(literal)
            for _ in range(WINDOWS):
                if at < 0:
                    break
                places.add(at)
                at = lowered.find(literal, at + 1)
    return sorted(places)


def _windows(line: str, lowered: str, candidates: tuple[Signature, ...]) -> list[str]:
    """The WINDOW-long parts of `line` centred on each place a candidate may start (places one
    part covers share it), at most WINDOWS of them."""
    parts: list[str] = []
    covered = 0  # where the last part ends
    for start in _starts(line, lowered, candidates):
        if start + WINDOW // 2 <= covered and parts:
            continue
        begin = max(0, start - WINDOW // 2)
        parts.append(line[begin : begin + WINDOW])
        covered = begin + WINDOW
        if len(parts) == WINDOWS:
            break
    return parts


def _matches(line: str) -> list[Diagnosis]:
    """The signatures found in one line: the first in table order, or, in a line longer than
    WINDOW, that of each window (each signature once, with its first window as the evidence)."""
    lowered = line.lower()
    candidates = _candidates(lowered)
    if not candidates:
        return []
    if len(line) <= WINDOW:
        return _line_matches(line, candidates)
    found: dict[str, Diagnosis] = {}
    for part in _windows(line, lowered, candidates):
        for diagnosis in _line_matches(part, _candidates(part.lower())):
            found.setdefault(diagnosis.signature_id, diagnosis)
    return list(found.values())


_GENERIC = frozenset(s.id for s in SIGNATURES if s.generic)


def _line_diagnoses(line: str) -> list[Diagnosis]:
    """What one line says: the table's specific rows; where none matches, the catalogues' entries
    (each code or message the line carries); else the table's generic rows."""
    rows = _matches(line)
    specific = [row for row in rows if row.signature_id not in _GENERIC]
    return specific or catalogue_diagnoses(line, None, _NO_CONTEXT) or rows


# `kubectl get -o yaml` folds a long message over several lines: a folded block scalar
# (`message: >-` and the message on the more indented lines after it) or a quoted scalar broken
# at spaces (`message: '0/10 nodes are available: ... 4` and `Insufficient cpu.'` on the next
# line). Both are read as the one line they stand for, so that a message is matched whole.
_FOLDED_KEY = re.compile(r"^(?P<indent>\s*(?:- )?)[\w.-]+:\s*>[-+]?\s*$")
_QUOTED_KEY = re.compile(r"^(?P<indent>\s*(?:- )?)[\w.-]+:\s*(?P<quote>['\"])(?P<rest>.*)$")
_FOLD_LINES = 50  # the most continuation lines joined into one


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _closes(value: str, quote: str) -> bool:
    """Whether a quoted YAML value that `value` ends ends there (a `'` doubled inside single
    quotes, an escaped `\"` inside double quotes, do not end it)."""
    stripped = value.rstrip()
    if not stripped.endswith(quote):
        return False
    if quote == "'":
        return (len(stripped) - len(stripped.rstrip("'"))) % 2 == 1
    return not stripped.endswith('\\"')


def _continued(lines: list[str], at: int, indent: int) -> int:
    """Where the lines after `at` that are indented deeper than `indent` end (at most
    _FOLD_LINES of them)."""
    end = at + 1
    while (
        end < len(lines) and end - at <= _FOLD_LINES and lines[end].strip() and _indent(lines[end]) > indent
    ):
        end += 1
    return end


def unfold(lines: list[str]) -> list[str]:
    """`lines` with each YAML-folded message joined into one line (see _FOLDED_KEY)."""
    out: list[str] = []
    at = 0
    while at < len(lines):
        line = lines[at]
        folded = _FOLDED_KEY.match(line) if line.rstrip().endswith(("-", ">", "+")) else None
        if folded is not None:
            end = _continued(lines, at, len(folded["indent"]))
            if end > at + 1:
                out += [line, " ".join(part.strip() for part in lines[at + 1 : end])]
                at = end
                continue
        quoted = _QUOTED_KEY.match(line) if folded is None and ":" in line else None
        if quoted is not None and quoted["rest"] and not _closes(quoted["rest"], quoted["quote"]):
            end = _continued(lines, at, len(quoted["indent"]))
            close = next((k for k in range(at + 1, end) if _closes(lines[k], quoted["quote"])), None)
            if close is not None:
                out.append(" ".join(part.strip() for part in lines[at : close + 1]))
                at = close + 1
                continue
        out.append(line)
        at += 1
    return out


def find_all(text: str) -> list[Diagnosis]:
    """Every signature found, one per distinct (signature, line), the one that explains the others
    first (diagnose.root_first: an NVLink Xid before the application Xid it causes), else in text
    order.

    Generic fallbacks ("the start hook failed") are dropped when anything specific was found.
    """
    found: list[Diagnosis] = []
    seen: set[tuple[str, str]] = set()
    for raw in unfold(text.splitlines()):
        line = raw.strip()
        if not line:
            continue
        for diagnosis in _line_diagnoses(line):
            key = (diagnosis.signature_id, diagnosis.evidence)
            if key not in seen:
                seen.add(key)
                found.append(diagnosis)
    if any(d.signature_id not in _GENERIC for d in found):
        found = [d for d in found if d.signature_id not in _GENERIC]
    return root_first(read_in_container(found, text))
