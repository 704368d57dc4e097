"""Find every known signature in any pasted text: logs, events, `kubectl describe`, nvidia-smi."""

from __future__ import annotations

import re

from gpuctl.diagnose import Diagnosis, any_of, make_diagnosis, relevant_reasons
from gpuctl.diagnose.signatures import SIGNATURES, Signature

# Placeholders of the hints, for text that names no node, namespace or image.
PLACEHOLDERS = {"node": "NODE", "namespace": "NAMESPACE", "image": "IMAGE"}
_SCHEDULER = re.compile(r"nodes are available:")
# Image-pull rows use words ("not found", "unauthorized") that other tools print too: a line counts
# only when it is about pulling an image.
_PULL_CONTEXT = re.compile(r"pull|image|registry|manifest|/v2/", re.IGNORECASE)

_ORDERED = tuple(s for s in SIGNATURES if not s.generic) + tuple(s for s in SIGNATURES if s.generic)
_ANY = any_of(_ORDERED)
_SCHEDULING = tuple(s for s in _ORDERED if s.source == "scheduling")


def _applies(signature: Signature, line: str) -> bool:
    return signature.source != "image-pull" or bool(_PULL_CONTEXT.search(line))


def _line_matches(line: str) -> list[Diagnosis]:
    if _SCHEDULER.search(line):
        found = []
        for reason in relevant_reasons(line):
            for signature in _SCHEDULING:
                match = signature.pattern.search(reason)
                if match:
                    found.append(make_diagnosis(signature, match, line, PLACEHOLDERS))
                    break
        return found
    for signature in _ORDERED:
        if signature.source == "scheduling" or not _applies(signature, line):
            continue
        match = signature.pattern.search(line)
        if match:
            return [make_diagnosis(signature, match, line, PLACEHOLDERS)]
    return []


def find_all(text: str) -> list[Diagnosis]:
    """Every signature found, one per distinct (signature, line), in text order.

    Generic fallbacks ("the start hook failed") are dropped when anything specific was found.
    """
    found: list[Diagnosis] = []
    seen: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        line = raw.strip()
        if not line or not _ANY.search(line):
            continue
        for diagnosis in _line_matches(line[:2000]):
            key = (diagnosis.signature_id, diagnosis.evidence)
            if key not in seen:
                seen.add(key)
                found.append(diagnosis)
    generic = {s.id for s in SIGNATURES if s.generic}
    if any(d.signature_id not in generic for d in found):
        found = [d for d in found if d.signature_id not in generic]
    return found
