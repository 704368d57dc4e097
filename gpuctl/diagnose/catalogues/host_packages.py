"""host package tasks (apt): placeholder, being written."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue

CATALOGUE = Catalogue(
    id="apt",
    title="host package tasks (apt)",
    source="",
    version="",
    entries=(),
    applies_to=(),
)
