"""`nvidia-smi topo -m`: how each pair of a node's GPUs is joined (`NV18`: a bonded set of 18
NVLinks; `PIX`, `PXB`, `PHB`, `NODE`, `SYS`: PCIe paths of growing length), and what that says
the node's interconnect is. The NCCL level prints it before its all-reduce, so a node labelled with
a slower interconnect than its GPUs have is held to the faster one's figure. Standard library only."""

from __future__ import annotations

import re

from gpuctl.nccl_expectations import INTERCONNECTS, Interconnect

COMMAND = "nvidia-smi topo -m"
_GPU = re.compile(r"^GPU(?P<index>\d+)$")
_NVLINKS = re.compile(r"^NV(?P<count>\d+)$")
# Slowest first: a node held to a later one's figure is held to more.
_RANK = {name: rank for rank, name in enumerate(reversed(INTERCONNECTS))}


def parse_topology(text: str) -> dict[tuple[int, int], str]:
    """(GPU i, GPU j) → the matrix's cell (`NV18`, `SYS` ...), i < j; columns that are not GPUs
    (NICs, CPU and NUMA affinity) are left out; lines outside the matrix are skipped."""
    columns: list[int] = []
    pairs: dict[tuple[int, int], str] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) > 1 and fields[0] == "GPU0" and fields[1] != "X":
            # the header: GPU0 GPU1 ... NIC0 ... CPU Affinity NUMA Affinity ...
            columns = [int(found["index"]) for field in fields if (found := _GPU.match(field))]
            continue
        row = _GPU.match(fields[0]) if fields else None
        if columns and row and len(fields) > len(columns):
            index = int(row["index"])
            for column, cell in zip(columns, fields[1 : 1 + len(columns)], strict=True):
                if column != index:
                    pairs[(min(index, column), max(index, column))] = cell
    return pairs


def nvlinks(cell: str) -> int:
    """`NV18` → 18; any PCIe path → 0."""
    found = _NVLINKS.match(cell)
    return int(found["count"]) if found else 0


def joined_by(pairs: dict[tuple[int, int], str], links_per_gpu: int) -> Interconnect | None:
    """What the matrix says joins the GPUs: every pair over all of a GPU's `links_per_gpu` NVLinks
    is NVSwitch (each GPU reaches every other through the switches), some pairs over NVLink is
    NVLink (bridges, a mesh), none is PCIe; None for fewer than two GPUs."""
    if not pairs:
        return None
    counts = [nvlinks(cell) for cell in pairs.values()]
    if links_per_gpu and all(count == links_per_gpu for count in counts):
        return "nvswitch"
    return "nvlink" if any(counts) else "pcie"


def faster(first: Interconnect, second: Interconnect) -> bool:
    """`first` carries more than `second` (nvswitch > nvlink > pcie)."""
    return _RANK[first] > _RANK[second]


def describe(pairs: dict[tuple[int, int], str]) -> str:
    """The matrix in a phrase: `NV18 between every GPU pair`, or the pairs by connection."""
    cells = sorted(set(pairs.values()))
    if len(cells) == 1:
        return f"`{COMMAND}`: {cells[0]} between every GPU pair"
    named = "; ".join(
        f"{cell}: "
        + ", ".join(f"GPU{i}-GPU{j}" for (i, j), value in sorted(pairs.items()) if value == cell)[:120]
        for cell in cells
    )
    return f"`{COMMAND}`: {named}"
