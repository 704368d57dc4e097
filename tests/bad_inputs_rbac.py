"""Bad inputs of privilege that holds in the cluster (issue 40): render --rbac namespaces and subjects, the gate's denied writes."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
