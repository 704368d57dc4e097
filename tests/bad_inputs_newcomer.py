"""Bad inputs of issue 40: the newcomer's classes (flags that do not apply, tolerations, -n)."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
