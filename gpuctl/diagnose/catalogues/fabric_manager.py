"""NVIDIA Fabric Manager: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="fabric-manager",
    title="NVIDIA Fabric Manager",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
