"""The thermal catalogue reads only the slowdown reasons nvidia-smi reports Active: a healthy
`nvidia-smi -q` (every reason Not Active, the slowdown and shutdown temperatures listed) matches
nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuctl.diagnose.catalogues.thermal import CATALOGUE
from gpuctl.diagnose.scan import find_all

QUERIES = sorted((Path(__file__).resolve().parents[1] / "corpus" / "nvidia-smi").glob("*.q.txt"))


@pytest.mark.parametrize("path", QUERIES, ids=[path.name for path in QUERIES])
def test_a_healthy_query_output_matches_no_slowdown(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert "Slowdown" in text
    assert CATALOGUE.find(text) == []
    assert not [d.signature_id for d in find_all(text) if d.signature_id.startswith("thermal.")]


def test_each_active_reason_is_its_own_entry() -> None:
    lines = {
        "        HW Slowdown                       : Active": "thermal.hw-slowdown",
        "            HW Thermal Slowdown           : Active": "thermal.hw-thermal-slowdown",
        "            HW Power Brake Slowdown       : Active": "thermal.hw-power-brake",
        "        SW Thermal Slowdown               : Active": "thermal.sw-thermal-slowdown",
    }
    for line, expected in lines.items():
        assert [d.signature_id for d in find_all(line)] == [expected], line
        assert find_all(line.replace(": Active", ": Not Active")) == []
