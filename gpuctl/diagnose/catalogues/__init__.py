"""The registry of catalogues: one module each, in the order `docs/diagnosis.md` lists them."""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry, Hit, words_of
from gpuctl.diagnose.catalogues import (
    container_runtime,
    container_toolkit,
    cuda,
    cuda_libraries,
    dcgm,
    dra,
    fabric_manager,
    gpu_arch,
    gpu_operator,
    gpu_sharing,
    helm,
    host_packages,
    host_packages_rpm,
    kernel_module,
    kubelet_device_manager,
    nccl,
    nvml,
    nvrm,
    pcie,
    sxid,
    thermal,
    vgpu,
    xid,
)

CATALOGUES: tuple[Catalogue, ...] = (
    xid.CATALOGUE,
    nvrm.CATALOGUE,
    kernel_module.CATALOGUE,
    pcie.CATALOGUE,
    thermal.CATALOGUE,
    sxid.CATALOGUE,
    fabric_manager.CATALOGUE,
    nvml.CATALOGUE,
    cuda.CATALOGUE,
    cuda_libraries.CATALOGUE,
    nccl.CATALOGUE,
    gpu_arch.CATALOGUE,
    dcgm.CATALOGUE,
    kubelet_device_manager.CATALOGUE,
    dra.CATALOGUE,
    container_toolkit.CATALOGUE,
    container_runtime.CATALOGUE,
    gpu_operator.CATALOGUE,
    gpu_sharing.CATALOGUE,
    vgpu.CATALOGUE,
    host_packages.CATALOGUE,
    host_packages_rpm.CATALOGUE,
    helm.CATALOGUE,
)

_BY_SOURCE: dict[str, tuple[Catalogue, ...]] = {}
for _catalogue in CATALOGUES:
    for _source in _catalogue.applies_to:
        _BY_SOURCE[_source] = (*_BY_SOURCE.get(_source, ()), _catalogue)


def find_hits(text: str, source: str | None = None) -> list[Hit]:
    """Every catalogue entry found in `text`, in the order they appear in it: of every catalogue,
    or of those that apply to `source`."""
    catalogues = CATALOGUES if source is None else _BY_SOURCE.get(source, ())
    words = words_of(text.lower())
    hits = [hit for catalogue in catalogues for hit in catalogue.find(text, words)]
    hits.sort(key=lambda hit: hit.at)
    return hits


def entry_of(diagnosis_id: str) -> tuple[Catalogue, Entry] | None:
    """The catalogue and entry a diagnosis id names (`xid.79`), or None."""
    return _BY_ID.get(diagnosis_id)


_BY_ID: dict[str, tuple[Catalogue, Entry]] = {
    catalogue.diagnosis_id(entry): (catalogue, entry)
    for catalogue in CATALOGUES
    for entry in catalogue.entries
}
_BY_ID.update({f"{c.id}.unknown": (c, c.unknown) for c in CATALOGUES if c.unknown is not None})
