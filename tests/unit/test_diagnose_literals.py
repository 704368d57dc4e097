"""The literal screen before the signature regexes changes no diagnosis: on every corpus text and
on texts built from each signature's own examples, diagnose() answers as a scan of every
signature in table order does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuctl.diagnose import _BY_SOURCE, Diagnosis, diagnose, evidence_line, make_diagnosis
from gpuctl.diagnose.literals import may_match, required_literals
from gpuctl.diagnose.table import SIGNATURES

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _scan_all(text: str, source: str) -> Diagnosis | None:
    for signature in _BY_SOURCE.get(source, ()):
        match = signature.pattern.search(text)
        if match:
            return make_diagnosis(signature, match, evidence_line(text, match), {"node": "n"})
    return None


def _texts() -> list[str]:
    """Each corpus file whole, and each of its lines alone (one failure's evidence at a time)."""
    files = [
        path.read_text(encoding="utf-8", errors="replace") for path in CORPUS.rglob("*") if path.is_file()
    ]
    lines = [line for text in files for line in text.splitlines() if line.strip()]
    plugin_warning = "W1124 factory.go:88] Failed to initialize NVML: could not load NVML library."
    return [*files, *lines, "", "all good", plugin_warning]


@pytest.mark.parametrize("source", sorted(_BY_SOURCE))
def test_screened_diagnosis_equals_the_full_scan(source: str) -> None:
    for text in _texts():
        for variant in (text, text.upper(), text.lower()):
            assert diagnose(variant, source, node="n") == _scan_all(variant, source)


def test_literals_of_branches_and_optional_characters() -> None:
    assert required_literals(re.compile("could not load NVML|ERROR_X", re.I)) == (
        "could not load nvml",
        "error_x",
    )
    assert required_literals(re.compile(r"Xid \(PCI:[^)]*\)", re.I)) == ("xid ",)
    assert required_literals(re.compile("GPUs? lost", re.I)) == ("gpu",)
    assert required_literals(re.compile("colou{0,1}r", re.I)) == ("colo",)
    assert required_literals(re.compile(r"(?:a|b)c", re.I)) is None
    assert required_literals(re.compile(r"a b", re.I | re.VERBOSE)) is None
    assert required_literals(re.compile("x|[ab]", re.I)) is None


def test_every_signature_matching_its_own_literal_is_not_screened_out() -> None:
    for signature in SIGNATURES:
        literals = required_literals(signature.pattern)
        if literals is None:
            continue
        for literal in literals:
            assert may_match(literals, f"prefix {literal} suffix".lower())
