"""NVIDIA NVSwitch SXid errors: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="sxid",
    title="NVIDIA NVSwitch SXid errors",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
