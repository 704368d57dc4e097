"""The catalogues (gpuctl/diagnose/catalogues/): complete entries, cited sources, one id each, and
each catalogue proven on real text from tests/corpus/failures/."""

from __future__ import annotations

import pytest

from gpuctl.diagnose import diagnose, root_first, signature_of
from gpuctl.diagnose.catalogue import LAYER_RANK, Catalogue, Entry
from gpuctl.diagnose.catalogues import CATALOGUES
from gpuctl.diagnose.scan import find_all
from gpuctl.diagnose.table import SIGNATURES
from tests.unit.test_corpus_failures import ITEMS


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=[c.id for c in CATALOGUES])
def test_a_catalogue_cites_its_source_and_version(catalogue: Catalogue) -> None:
    assert catalogue.source.startswith("https://"), catalogue.id
    assert catalogue.version
    assert catalogue.entries
    assert catalogue.readers or any(entry.texts for entry in catalogue.entries)


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=[c.id for c in CATALOGUES])
def test_every_entry_has_a_cause_a_fix_and_a_known_layer(catalogue: Catalogue) -> None:
    entries: list[Entry] = [*catalogue.entries, *([catalogue.unknown] if catalogue.unknown else [])]
    for entry in entries:
        assert entry.code, entry
        assert entry.name, entry
        assert len(entry.cause) > 15, f"{catalogue.id} {entry.code}: no cause"
        assert len(entry.fix) > 15, f"{catalogue.id} {entry.code}: no fix"
        assert entry.layer in LAYER_RANK, f"{catalogue.id} {entry.code}: layer {entry.layer!r}"
        assert not entry.source or entry.source.startswith("https://")


def test_every_id_is_one_entry_or_row() -> None:
    ids = [s.id for s in SIGNATURES]
    ids += [c.diagnosis_id(entry) for c in CATALOGUES for entry in c.entries]
    duplicates = {i for i in ids if ids.count(i) > 1}
    assert not duplicates
    for catalogue in CATALOGUES:
        for entry in catalogue.entries:
            found = signature_of(catalogue.diagnosis_id(entry))
            assert found is not None
            assert found.category == entry.layer


@pytest.mark.parametrize("catalogue", CATALOGUES, ids=[c.id for c in CATALOGUES])
def test_a_catalogue_is_proven_on_real_text(catalogue: Catalogue) -> None:
    expected = {item["expect"]["signature"] for item in ITEMS if item["expect"]["signature"]}
    assert any(signature.startswith(f"{catalogue.id}.") for signature in expected), (
        f"no item of tests/corpus/failures/ expects an entry of {catalogue.id}"
    )


def test_a_code_is_read_out_of_a_line_and_looked_up() -> None:
    catalogue = Catalogue(
        id="demo",
        title="demo",
        source="https://example.invalid/",
        version="1",
        readers=(r"demo error (?P<code>\d+) on (?P<gpu>GPU\d)",),
        entries=(Entry("7", "seven", "seven on {gpu} of {node}", "do seven things", "driver"),),
        unknown=Entry("?", "unknown", "code {code} is not documented", "read the vendor's notes", "driver"),
        applies_to=("kernel",),
    )
    hits = catalogue.find("x demo error 7 on GPU3, then demo error 12 on GPU1")
    assert [(hit.id, hit.groups["gpu"]) for hit in hits] == [("demo.7", "GPU3"), ("demo.unknown", "GPU1")]


def test_the_root_of_several_findings_comes_first() -> None:
    found = find_all(
        "NVRM: Xid (PCI:0000:3b:00): 13, pid=1, Graphics Exception\n"
        "NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n"
    )
    assert found[0].signature_id == "gpu.fallen-off-bus"
    assert root_first(found) == found
    assert diagnose("NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.", "kernel") is not None
