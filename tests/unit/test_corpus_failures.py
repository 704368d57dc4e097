"""Real failure lines from public issue threads: gpuctl names the cause the thread settled on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.diagnose.scan import find_all
from gpuctl.diagnose.table import SIGNATURES

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
# failures.yaml: the table's rows; failures/<catalogue>.yaml: the catalogues' entry families.
FILES = [CORPUS / "failures.yaml", *sorted((CORPUS / "failures").glob("*.yaml"))]
ITEMS: list[dict[str, Any]] = [
    item for path in FILES for item in yaml.safe_load(path.read_text(encoding="utf-8")) or ()
]
FIELDS = ("id", "kind", "source", "component", "os", "driver", "gpu", "text", "cause", "fix", "expect")


def test_corpus_is_large_enough_and_complete() -> None:
    failures = [item for item in ITEMS if item["kind"] == "failure-line"]
    assert len(failures) >= 40
    assert len({item["id"] for item in ITEMS}) == len(ITEMS)
    for item in ITEMS:
        assert all(item.get(key) not in (None, "") for key in FIELDS if key != "expect"), item["id"]
        assert item["source"].startswith("https://"), item["id"]


@pytest.mark.parametrize("item", ITEMS, ids=[item["id"] for item in ITEMS])
def test_item_is_diagnosed_as_the_thread_settled(item: dict[str, Any]) -> None:
    found = find_all(item["text"])
    expected = item["expect"]["signature"]
    if expected is None:
        assert found == [], [d.signature_id for d in found]
        return
    assert found, f"nothing recognised in {item['text'][:120]!r}"
    assert found[0].signature_id == expected
    assert found[0].cause
    assert found[0].hint
    assert found[0].category
    if "cuda" in item["expect"]:
        assert f"CUDA {item['expect']['cuda']}" in found[0].cause


def test_every_specific_signature_added_with_the_corpus_has_a_real_example() -> None:
    proven = {item["expect"]["signature"] for item in ITEMS}
    untested = [s.id for s in SIGNATURES if s.id not in proven | _PREDATE_CORPUS and not s.generic]
    assert not untested, untested


# Rows older than the corpus, tested with gpuctl's own texts in test_diagnose.py.
_PREDATE_CORPUS = {
    "plugin.incompatible-strategy", "plugin.no-devices", "plugin.driver-mismatch",
    "plugin.driver-not-loaded", "smi.driver-not-loaded", "smi.nvml-missing", "smi.no-devices",
    "smi.not-found", "sched.unschedulable", "sched.selector-mismatch", "image.invalid-name",
    "node.not-ready", "node.unhealthy-gpus", "node.no-gpu-advertised",
}  # fmt: skip
