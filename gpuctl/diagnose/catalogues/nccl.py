"""NCCL results and warnings: placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="nccl",
    title="NCCL results and warnings",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
