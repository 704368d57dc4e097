"""docs/diagnosis.md from the catalogues: the coverage table, the ordering rule, a section per
catalogue with every entry. (tests/unit/test_diagnose.py checks the file is the generated one.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from gpuctl.diagnose.catalogue import LAYER_RANK
from gpuctl.diagnose.catalogues import CATALOGUES
from gpuctl.diagnose.doc import corpus_counts, markdown, shown

FAILURES = Path(__file__).resolve().parents[1] / "corpus" / "failures"


def _proving(catalogue_id: str) -> int:
    """The corpus items whose expected signature is one of the catalogue's ids, counted here
    apart from the generator."""
    count = 0
    for path in FAILURES.glob("*.yaml"):
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            count += str(item["expect"]["signature"]).startswith(f"{catalogue_id}.")
    return count


def _coverage_rows(text: str) -> dict[str, list[str]]:
    section = text.split("\n## Catalogues\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        found = re.fullmatch(r"`([\w-]+)`", cells[1]) if len(cells) > 1 else None
        if found:
            rows[found.group(1)] = cells
    return rows


def test_coverage_table_counts_entries_fixes_and_corpus_items() -> None:
    counts = corpus_counts(FAILURES)
    assert counts is not None
    rows = _coverage_rows(markdown(counts))
    assert list(rows) == [catalogue.id for catalogue in CATALOGUES]
    for catalogue in CATALOGUES:
        with_fix = sum(1 for entry in catalogue.entries if entry.cause.strip() and entry.fix.strip())
        _, _, entries, fixed, proving, _ = rows[catalogue.id]
        assert (int(entries), int(fixed), int(proving)) == (
            len(catalogue.entries),
            with_fix,
            _proving(catalogue.id),
        ), catalogue.id


def test_without_a_corpus_the_column_is_left_out(tmp_path: Path) -> None:
    assert corpus_counts(tmp_path / "absent") is None
    rows = _coverage_rows(markdown(None))
    assert all(len(cells) == 5 for cells in rows.values())


def test_every_catalogue_has_a_section_listing_every_entry() -> None:
    text = markdown({})
    for catalogue in CATALOGUES:
        heading = f"\n## Catalogue {catalogue.id}: {catalogue.title}\n"
        assert heading in text
        section = text.split(heading, 1)[1].split("\n## ", 1)[0]
        if catalogue.source:
            assert catalogue.source in section
        for reader in catalogue.readers:
            assert reader in section
        for entry in catalogue.entries:
            assert f"| `{catalogue.diagnosis_id(entry)}` | " in section
            assert f" | {entry.layer}" in section


def test_the_ordering_rule_lists_every_layer_by_rank() -> None:
    text = markdown({})
    section = text.split("\n## Several lines, one cause\n", 1)[1].split("\n## ", 1)[0]
    assert "https://docs.nvidia.com/deploy/xid-errors/" in section
    for layer, rank in LAYER_RANK.items():
        assert re.search(rf"^\| {rank} \|.*`{layer}`", section, re.MULTILINE), layer
    # the existing table sections are still there, after the rule
    assert text.index("## Several lines, one cause") < text.index("## How `gpuctl verify` works")
    assert "## Kernel driver messages (dmesg, journal: NVRM, Xid)" in text


def test_the_document_is_the_same_whatever_the_hash_seed() -> None:
    """Readers built from sets of messages list them in one order, so the generated page (and the
    test that keeps it current) does not change from one interpreter to the next."""
    pages = {
        subprocess.run(
            [sys.executable, "-m", "gpuctl.diagnose.doc"],
            capture_output=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(pages) == 1


def test_fixes_are_shown_as_the_user_reads_them() -> None:
    """A fix's literal braces are written doubled for str.format_map (a jsonpath's `{{.spec}}`);
    the page shows them single, as `gpuctl explain` prints them, and keeps placeholders to fill."""
    text = markdown({})
    assert "{{" not in text
    assert "}}" not in text
    assert "jsonpath='{.spec.schedulerName}'" in text
    assert shown("`-o jsonpath='{{.a}}'` on {node}; {plugin_restart}") == (
        "`-o jsonpath='{.a}'` on {node}; kubectl -n kube-system delete pod -l "
        "name=nvidia-device-plugin-ds --field-selector spec.nodeName={node}"
    )
