"""Every bad input of the catalogue (tests/bad_inputs_cases.py): the expected exit code, one
`error:` line naming the offending file, field, flag or variable, one `hint:` line, no traceback;
and docs/bad-inputs.md is what the same run prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bad_inputs import Outcome, Places, document, environment, problems, run_all
from tests.bad_inputs_cases import CASES, Case

DOCUMENT = Path(__file__).resolve().parents[2] / "docs" / "bad-inputs.md"


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Outcome], Places]:
    """One simulated cluster, every case run once against it."""

    root = tmp_path_factory.mktemp("bad-inputs")
    home = root / "home"
    home.mkdir()
    with environment({"HOME": str(home), "KUBECONFIG": None}):
        results, places = run_all(root)
    return {case.name: outcome for case, outcome in results}, places


def test_the_catalogue_is_large_and_names_are_unique() -> None:
    names = [case.name for case in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 110


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_is_one_line_with_a_hint(case: Case, answers: tuple[dict[str, Outcome], Places]) -> None:
    outcomes, places = answers
    outcome = outcomes[case.name]
    assert problems(case, outcome, places) == [], (
        f"stderr:\n{outcome.stderr}\nstdout:\n{outcome.stdout[:500]}"
    )


def test_the_document_is_generated_from_this_run(answers: tuple[dict[str, Outcome], Places]) -> None:
    outcomes, places = answers
    generated = document([(case, outcomes[case.name]) for case in CASES], places)
    assert DOCUMENT.read_text(encoding="utf-8") == generated, (
        "docs/bad-inputs.md is stale: regenerate it with `python -m tests.bad_inputs > docs/bad-inputs.md`"
    )
