"""GPU Operator operands and MIG manager: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="gpu-operator",
    title="GPU Operator operands and MIG manager",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
