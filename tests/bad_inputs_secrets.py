"""Bad inputs of in URLs and artefacts (issue 40): Pushgateway URLs and TLS flags."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
