"""--debug and --no-color do not leak out of one in-process run into the next."""

from __future__ import annotations

import os

import pytest

from gpuctl.cli.main import run


def test_global_flags_leave_the_environment_as_they_found_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("GPUCTL_DEBUG", raising=False)
    monkeypatch.setenv("NO_COLOR", "")
    assert run(["--debug", "--no-color", "render"]) == 0
    capsys.readouterr()
    assert "GPUCTL_DEBUG" not in os.environ
    assert os.environ["NO_COLOR"] == ""
