"""Bad inputs of simulated cluster's inputs (issue 40): host-backed nodes, scenario fields of its API and lifetimes."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
