"""kubelet device manager and device plugins: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="kubelet",
    title="kubelet device manager and device plugins",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
