"""Bad inputs of issue 40: output paths that resolve to a file the command reads."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
