"""DRA kubelet plugins and CDI: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="dra",
    title="DRA kubelet plugins and CDI",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
