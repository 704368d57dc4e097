"""Bad inputs of newcomer's remaining classes (issue 40): flags that do not apply, tolerations, certificate data, -n as context."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
