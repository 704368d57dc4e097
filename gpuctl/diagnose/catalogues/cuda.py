"""CUDA runtime and driver errors: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="cuda",
    title="CUDA runtime and driver errors",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
