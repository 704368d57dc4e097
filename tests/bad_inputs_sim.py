"""Bad inputs of issue 40: the simulated cluster (host-backed nodes, lifetimes)."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
