"""Bad inputs of paths that resolve to a file the command reads (issue 40): refused with exit 2 naming both."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
