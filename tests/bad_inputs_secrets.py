"""Bad inputs of issue 40: secrets in Pushgateway URLs, TLS flags and kept artefacts."""

from __future__ import annotations

from tests.bad_inputs_cases import Case


def cases() -> list[Case]:
    return []
