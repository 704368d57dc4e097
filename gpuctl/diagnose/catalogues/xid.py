"""NVIDIA Xid errors: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="xid",
    title="NVIDIA Xid errors",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
