"""Bad inputs of issue 40: least privilege (render --rbac namespaces, the gate's denied writes)."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
