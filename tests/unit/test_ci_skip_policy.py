"""Under CI=true a skip is a failure unless its reason is allowed, and every skip's reason is logged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ALLOWED_CI_SKIPS

ROOT = Path(__file__).resolve().parents[2]
TESTS = f"""
import pytest

def test_runs() -> None:
    assert True

def test_skips_for_no_good_reason() -> None:
    pytest.skip("no kubectl on PATH")

@pytest.mark.skipif(True, reason={ALLOWED_CI_SKIPS[0]!r})
def test_skips_as_allowed() -> None:
    assert False
"""


def run_pytest(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n", encoding="utf-8")
    (tmp_path / "test_sample.py").write_text(TESTS, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_an_unexplained_skip_fails_ci_and_the_allowed_one_is_logged(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "true")
    assert result.returncode == 1, result.stdout
    assert "1 failed, 1 passed, 1 skipped" in result.stdout
    assert "skipped in CI (CI=true), which only allows" in result.stdout
    assert "no kubectl on PATH" in result.stdout
    assert f"test_skips_as_allowed: {ALLOWED_CI_SKIPS[0]} (allowed in CI)" in result.stdout


@pytest.mark.parametrize("ci", [None, "false"])
def test_outside_ci_a_skip_is_a_skip_with_its_reason(tmp_path: Path, ci: str | None) -> None:
    result = run_pytest(tmp_path, ci)
    assert result.returncode == 0, result.stdout
    assert "1 passed, 2 skipped" in result.stdout
    assert "test_skips_for_no_good_reason: no kubectl on PATH" in result.stdout
