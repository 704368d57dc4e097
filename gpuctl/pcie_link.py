"""Each GPU's PCIe link: the generation and width it trained at, and the most it can run at.

The NCCL level samples `nvidia-smi --query-gpu=index,pci.bus_id,pcie.link.gen.current,...` while
its all-reduce runs (a GPU lowers its link when idle, so a reading taken before the run would show
Gen1 on a healthy GPU) and prints the samples after it; `pcie.link.gen.max` is what the GPU and
the slot together allow (nvidia-smi --help-query-gpu). A GPU whose link stayed below its maximum
through the run (a Gen4 x16 card at Gen3 or x8: a riser, a dirty connector, a BIOS setting) is
named; for GPUs without NVLink the node's expected all-reduce figure is derived from its links
(gpuctl.nccl_expectations.pcie_expectation). `nvidia-smi -q`'s "GPU Link Info" block says the
same (parse_query_links reads it with the -q parser of gpuctl.nvidia_smi_parse).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuctl.nvidia_smi_parse import query_gpu_fields

FIELDS = (
    "index",
    "pci.bus_id",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
)
SAMPLE_MS = 500
COMMAND = f"nvidia-smi --query-gpu={','.join(FIELDS)} --format=csv,noheader -lms {SAMPLE_MS}"
SHOWN = "`nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current,...`"  # in messages

# Transfer rate per lane (GT/s) and line encoding by generation: 8b/10b up to Gen2, 128b/130b for
# Gen3 to Gen5, FLIT (242/256) for Gen6 (PCI-SIG's specifications, as each generation's spec sheet
# and https://en.wikipedia.org/wiki/PCI_Express#Comparison_table list them).
GT_PER_LANE = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
_CSV = re.compile(
    r"^\s*(?P<index>\d+), (?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]), "
    r"(?P<gen>\d+), (?P<max_gen>\d+), (?P<width>\d+), (?P<max_width>\d+)\s*$"
)


def link_gbytes(gen: int, width: int) -> float:
    """One direction's bandwidth of a Gen `gen` x`width` link in GB/s (Gen4 x16: 31.5)."""
    encoding = 0.8 if gen <= 2 else 128 / 130 if gen <= 5 else 242 / 256
    return GT_PER_LANE.get(gen, 0.0) * width * encoding / 8


@dataclass(frozen=True)
class GpuLink:
    """One GPU's link: the best generation and width it reached while sampled, and its maximum."""

    index: int
    bus_id: str
    gen: int
    max_gen: int
    width: int
    max_width: int

    @property
    def below_max(self) -> bool:
        return self.gen < self.max_gen or self.width < self.max_width

    def describe(self) -> str:
        return (
            f"GPU {self.index} ({self.bus_id}) at PCIe Gen{self.gen} x{self.width}, "
            f"capable of Gen{self.max_gen} x{self.max_width}"
        )


def parse_pcie_links(text: str) -> tuple[GpuLink, ...]:
    """Every sample line of COMMAND in `text` (other lines skipped; `[N/A]` rows too), one GpuLink
    per GPU: the highest generation and width seen over its samples, in GPU order."""
    best: dict[int, GpuLink] = {}
    for line in text.splitlines():
        found = _CSV.match(line)
        if not found:
            continue
        index = int(found["index"])
        sample = GpuLink(
            index, found["bus"], int(found["gen"]), int(found["max_gen"]), int(found["width"]),
            int(found["max_width"]),
        )  # fmt: skip
        seen = best.get(index)
        if seen is not None:
            sample = GpuLink(
                index, sample.bus_id, max(sample.gen, seen.gen), max(sample.max_gen, seen.max_gen),
                max(sample.width, seen.width), max(sample.max_width, seen.max_width),
            )  # fmt: skip
        best[index] = sample
    return tuple(best[index] for index in sorted(best))


def parse_query_links(text: str) -> tuple[GpuLink, ...]:
    """`nvidia-smi -q`: each GPU block's "GPU Link Info" (PCIe Generation Max/Current, Link Width
    Max/Current: "16x"), indexed in the order the blocks come; GPUs without those fields skipped."""
    links: list[GpuLink] = []
    for bus, fields in query_gpu_fields(text):
        values = [
            fields.get(("PCI", "GPU Link Info", part, key), "").removesuffix("x") for part, key in _LINK_INFO
        ]
        if all(value.isdigit() for value in values):
            gen, max_gen, width, max_width = map(int, values)
            links.append(GpuLink(len(links), bus, gen, max_gen, width, max_width))
    return tuple(links)


_LINK_INFO = (
    ("PCIe Generation", "Current"),
    ("PCIe Generation", "Max"),
    ("Link Width", "Current"),
    ("Link Width", "Max"),
)


def slowest(links: tuple[GpuLink, ...]) -> GpuLink | None:
    """The GPU whose link can carry the least (by its maximum generation and width): a ring
    all-reduce runs at its slowest link."""
    return min(links, key=lambda link: link_gbytes(link.max_gen, link.max_width), default=None)


def below_max(links: tuple[GpuLink, ...]) -> str:
    """The GPUs whose link stayed below its maximum through the run ("" when none), the first
    three named with their figures."""
    short = [link for link in links if link.below_max]
    if not short:
        return ""
    named = "; ".join(link.describe() for link in short[:3])
    more = f" (and {len(short) - 3} more GPUs)" if len(short) > 3 else ""
    return f"{SHOWN}: PCIe link below its maximum: {named}{more}"


def links_summary(links: tuple[GpuLink, ...]) -> str:
    """`8 GPUs at PCIe Gen4 x16`, or each GPU's link when they differ ("" without samples)."""
    if not links:
        return ""
    seen = {(link.gen, link.width) for link in links}
    if len(seen) == 1:
        gen, width = seen.pop()
        return f"{SHOWN}: {len(links)} GPUs at PCIe Gen{gen} x{width}"
    each = ", ".join(f"GPU {link.index} Gen{link.gen} x{link.width}" for link in links)
    return f"{SHOWN}: {each}"
