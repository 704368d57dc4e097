"""NVML return codes: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="nvml",
    title="NVML return codes",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
