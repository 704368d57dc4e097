"""NVIDIA Container Toolkit, CDI and container runtimes: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="container-toolkit",
    title="NVIDIA Container Toolkit, CDI and container runtimes",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
