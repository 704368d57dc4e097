"""The literal screen before the signature regexes changes no diagnosis: on every corpus text and
on texts built from each signature's own examples, the table's screened diagnosis answers as a
scan of every signature in table order does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from gpuctl.diagnose import _BY_SOURCE, Diagnosis, evidence_line, make_diagnosis, table_diagnosis
from gpuctl.diagnose.catalogue import Catalogue, Hit, normal
from gpuctl.diagnose.catalogues import CATALOGUES
from gpuctl.diagnose.literals import may_match, required_literals
from gpuctl.diagnose.table import SIGNATURES

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


def _scan_all(text: str, source: str) -> Diagnosis | None:
    for signature in _BY_SOURCE.get(source, ()):
        match = signature.pattern.search(text)
        if match:
            return make_diagnosis(signature, match, evidence_line(text, match), {"node": "n"})
    return None


def _items(path: Path) -> list[dict[str, object]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8")) or ())


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
            assert table_diagnosis(variant, source, {"node": "n"}) == _scan_all(variant, source)


def test_literals_of_branches_and_optional_characters() -> None:
    assert required_literals(re.compile("could not load NVML|ERROR_X", re.I)) == (
        "could not load nvml",
        "error_x",
    )
    assert required_literals(re.compile(r"Xid \(PCI:[^)]*\)", re.I)) == ("xid ",)
    assert required_literals(re.compile("GPUs? lost", re.I)) == ("gpu",)
    assert required_literals(re.compile("colou{0,1}r", re.I)) == ("colo",)
    assert required_literals(re.compile(r"(?:a|b)c", re.I)) == ("a", "b")
    assert required_literals(re.compile(r"(?P<code>NVML_ERROR_\w+)|(?<!\w)Xid", re.I)) == (
        "nvml_error_",
        "xid",
    )
    assert required_literals(re.compile(r"(?:a|b)?c", re.I)) is None
    assert required_literals(re.compile(r"(?m:^)->", re.I)) is None
    assert required_literals(re.compile(r"a b", re.I | re.VERBOSE)) is None
    assert required_literals(re.compile("x|[ab]", re.I)) is None


def test_every_signature_matching_its_own_literal_is_not_screened_out() -> None:
    for signature in SIGNATURES:
        literals = required_literals(signature.pattern)
        if literals is None:
            continue
        for literal in literals:
            assert may_match(literals, f"prefix {literal} suffix".lower())


def _catalogue_scan_all(catalogue: Catalogue, text: str) -> list[tuple[str, int]]:
    """Every reader and fixed text of `catalogue` run on the whole of `text`, no screen."""
    found = []
    for reader in catalogue._compiled:
        for match in reader.finditer(text):
            entry = catalogue.by_key.get(normal(match.group("code")), catalogue.unknown)
            if entry is not None:
                found.append((Hit(catalogue, entry, match.start(), {}).id, match.start()))
    pattern, entries = catalogue._texts
    if pattern is not None:
        found += [
            (catalogue.diagnosis_id(entries[normal(m.group())]), m.start()) for m in pattern.finditer(text)
        ]
    return sorted(found, key=lambda pair: pair[1])


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=[c.id for c in CATALOGUES])
def test_a_catalogues_screens_change_nothing_it_finds(catalogue: Catalogue) -> None:
    """The literal screens of the readers and the word screen of the fixed texts skip only texts
    where nothing could be found: on every corpus text, in three cases, the same hits."""
    texts = _texts()
    texts += [
        str(item["text"]) for path in sorted((CORPUS / "failures").glob("*.yaml")) for item in _items(path)
    ]
    for text in texts:
        for variant in (text, text.upper(), text.lower()):
            screened = [(hit.id, hit.at) for hit in catalogue.find(variant)]
            assert sorted(screened, key=lambda pair: pair[1]) == _catalogue_scan_all(catalogue, variant), (
                variant
            )
