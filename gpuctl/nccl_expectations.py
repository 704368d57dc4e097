"""The all-reduce bus bandwidth a node's GPUs should reach, by GPU model family and interconnect.

Each figure is nccl-tests' busbw (GB/s) at the largest message size of a single-node all-reduce
over all of a node's GPUs, as measured or stated in the cited public thread. A node passes at
PASS_FRACTION of its figure: runs vary by a few percent with NCCL version, clocks and message size,
while the faults this check exists for cost far more (an HGX node whose NVLinks are down falls to
its PCIe figure, a tenth or less). `--min-busbw` replaces the figure where none is known or the
fleet's own baseline is better.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gpuctl.pcie_link import link_gbytes

Interconnect = Literal["nvswitch", "nvlink", "pcie"]
INTERCONNECTS: tuple[Interconnect, ...] = ("nvswitch", "nvlink", "pcie")
# The node label that says how a node's GPUs are joined (nvswitch|nvlink|pcie), set by the admin
# (or the simulated cluster); GPU feature discovery publishes none (see core/verify/levels/nccl.py).
INTERCONNECT_LABEL = "gpuctl.io/interconnect"
PASS_FRACTION = 0.8


Algorithm = Literal["NVLS", "Ring", ""]  # "": NCCL's default, which the source does not name
# Hopper and Blackwell GPUs on NVSwitch run all-reduce with NVLink SHARP (multicast on the switch)
# by default; NCCL turns it off on 2 GPUs or fewer (src/transport/nvls.cc, ncclNvlsInit).
NVLS_FAMILIES = ("H100", "H200", "H800", "B200", "GB200")
_NVLS_SOURCE = (
    "https://github.com/NVIDIA/nccl/blob/178b6b759074597777ce13438efb0e0ba625e429/src/transport/nvls.cc"
)


def nvls_capable(family: str | None, interconnect: Interconnect, gpus: int) -> bool:
    """NCCL should run the node's all-reduce with NVLink SHARP (NVLS)."""
    return interconnect == "nvswitch" and family in NVLS_FAMILIES and gpus > 2


@dataclass(frozen=True)
class NodeHardware:
    """What a node's all-reduce figure depends on: its GPU family, how they are joined, how many."""

    family: str | None
    interconnect: Interconnect
    gpus: int

    @property
    def nvls(self) -> bool:
        return nvls_capable(self.family, self.interconnect, self.gpus)

    def describe(self) -> str:
        joined = {"nvswitch": "NVSwitch", "nvlink": "NVLink bridges", "pcie": "PCIe only"}[self.interconnect]
        nvls = " with NVLink SHARP (NVLS)" if self.nvls else ""
        return f"{self.gpus} x {self.family or 'unknown GPU'} on {joined}{nvls}"


@dataclass(frozen=True)
class Expectation:
    """One cited figure and the configuration it was measured on: `gpus` (the GPU counts of the
    all-reduce), `interconnect` and `algorithm`; `measured_on` says it as the source does."""

    family: str
    interconnect: Interconnect
    busbw_gbps: float
    source: str  # where the figure comes from
    note: str
    gpus: tuple[int, ...]
    algorithm: Algorithm
    measured_on: str
    # Where no measurement is cited: how the figure was derived (the PCIe rows: from the cited
    # PCIe Gen5 figure scaled by the link's bandwidth, see pcie_expectation); "" for a measured row.
    derivation: str = ""

    @property
    def minimum_gbps(self) -> float:
        return round(self.busbw_gbps * PASS_FRACTION, 1)

    def mismatch(self, node: NodeHardware) -> str:
        """Why this row cannot judge `node` ("" when it can): another family or interconnect,
        another GPU count, or an NVLS figure for a node that cannot run NVLS. A ring figure may
        judge a node that can run NVLS where no NVLS figure fits (NVLS only beats it)."""
        if node.family != self.family:
            return f"the figure is for {self.family}, the node has {node.family or 'an unknown GPU'}"
        if node.interconnect != self.interconnect:
            return f"the figure is over {self.interconnect}, the node's GPUs are on {node.interconnect}"
        if node.gpus not in self.gpus:
            counts = "/".join(map(str, self.gpus))
            return f"the figure was measured on {counts} GPUs, the node has {node.gpus}"
        if self.algorithm == "NVLS" and not node.nvls:
            return "the figure is NCCL's NVLS, which the node cannot run (NVSwitch, Hopper or later, 3+ GPUs)"
        return ""

    def reason(self, node: NodeHardware) -> str:
        """Why the node is held to this figure, for people and `nodes[].nccl.expected_reason`."""
        algorithm = f", {self.algorithm}" if self.algorithm else ""
        if self.derivation:
            return f"{node.describe()}: {self.busbw_gbps:g} GB/s busbw {self.derivation} ({self.source})"
        return (
            f"{node.describe()}: {self.busbw_gbps:g} GB/s busbw measured on {self.measured_on}{algorithm} "
            f"({self.source})"
        )


@dataclass(frozen=True)
class UnknownExpectation:
    """No cited figure for this model and interconnect: the caller needs `--min-busbw`."""

    family: str | None  # None: the product label names no family gpuctl knows
    interconnect: Interconnect
    reason: str


_NCCL_TESTS_212 = "https://github.com/NVIDIA/nccl-tests/issues/212"
_NCCL_1455 = "https://github.com/NVIDIA/nccl/issues/1455"
_NVLS_BY_COUNT = "8 x H100 SXM, NCCL_ALGO=NVLS, -b 2G -e 4G: busbw 370 GB/s on 2-4 GPUs, then 420/440/460/480"
_PCIE_GEN5 = "https://github.com/NVIDIA/nccl/issues/1639"
_PCIE_GEN5_NOTE = (
    "8 GPUs on PCIe Gen5 without NVLink reached 28 GB/s (35 GB/s on 4); NCCL's maintainer: on PCI "
    "systems the CPU and memory bandwidth bound it, not the GPU"
)
_RTX5090_GEN5 = "GeForce RTX 5090s on PCIe Gen5 (two Xeon 8480+), no NVLink"
_V100_DGX1 = (
    "https://github.com/konnase/konnase.github.io/blob/17cd9dfb8fa17e3f9523d06c829b397a63ae94e5/"
    "source/_posts/deep_learning/NCCL.md"
)
_GB200_AZURE = (
    "https://github.com/Azure/AI-benchmarking-guide/blob/2a370be6de9586d365feed77e014a73f25198f4d/"
    "Azure_Results/ND_GB200_v6_results.md"
)


# The PCIe derivation: the cited PCIe figures (8 and 4 GPUs on PCIe Gen5 x16 without NVLink, 28 and
# 35 GB/s, NVIDIA/nccl#1639) as a share of one x16 Gen5 link's bandwidth in one direction (63.0
# GB/s), applied to a node's own link. That source's GPUs (GeForce) had no P2P and crossed two CPU
# sockets, so a node whose GPUs reach each other over PCIe switches does better: a floor, never a
# ceiling. Counts up to 4 take the 4-GPU share, more the 8-GPU one.
PCIE_CITED_GEN, PCIE_CITED_WIDTH = 5, 16
PCIE_CITED = {8: 28.0, 4: 35.0}  # GPUs -> the cited busbw (GB/s)
PCIE_SHARE = {
    count: busbw / link_gbytes(PCIE_CITED_GEN, PCIE_CITED_WIDTH) for count, busbw in PCIE_CITED.items()
}
# The link each PCIe family's cards have (their product briefs: L40S, L4, A100 PCIe are PCIe Gen4 x16).
PCIE_LINK = {"L40S": (4, 16), "L4": (4, 16), "A100": (4, 16)}


def _cited_count(gpus: int) -> int:
    """The cited GPU count whose share a node of `gpus` GPUs takes."""
    return 4 if gpus <= 4 else 8


def pcie_share(gpus: int) -> float:
    return PCIE_SHARE[_cited_count(gpus)]


def pcie_derivation(gen: int, width: int, gpus: int) -> str:
    cited = _cited_count(gpus)
    return (
        f"derived from PCIe Gen{gen} x{width} ({link_gbytes(gen, width):.1f} GB/s per direction) x "
        f"{pcie_share(gpus):.3f}, the share of a Gen{PCIE_CITED_GEN} x{PCIE_CITED_WIDTH} link the cited "
        f"{cited} GPUs reached ({PCIE_CITED[cited]:g} GB/s)"
    )


def pcie_expectation(
    family: str, gpus: int, gen: int, width: int, counts: tuple[int, ...] = ()
) -> Expectation:
    """The figure of `gpus` GPUs joined by PCIe only, each on a Gen `gen` x`width` link (the
    slowest GPU's: a ring runs at its slowest link), derived as PCIE_SHARE says."""
    busbw = round(link_gbytes(gen, width) * pcie_share(gpus), 1)
    return Expectation(
        family, "pcie", busbw, _PCIE_GEN5,
        "derived, not measured: no healthy node's all-reduce on these GPUs is cited; " + _PCIE_GEN5_NOTE,
        counts or (gpus,), "Ring",
        f"derived, not measured: {'/'.join(map(str, counts or (gpus,)))} x {family} "
        f"on PCIe Gen{gen} x{width}",
        pcie_derivation(gen, width, gpus),
    )  # fmt: skip


def _derived(family: str, gpus: tuple[int, ...]) -> Expectation:
    gen, width = PCIE_LINK[family]
    return pcie_expectation(family, gpus[0], gen, width, gpus)


def _row(  # noqa: PLR0917 - the table's rows read as one line each, field by field
    family: str, interconnect: Interconnect, gpus: tuple[int, ...], algorithm: Algorithm,
    busbw_gbps: float, measured_on: str, source: str, note: str,
) -> Expectation:  # fmt: skip
    return Expectation(family, interconnect, busbw_gbps, source, note, gpus, algorithm, measured_on)


TABLE: tuple[Expectation, ...] = (
    _row("H100", "nvswitch", (8,), "NVLS", 480.0, "8 x H100 SXM on NVSwitch", _NCCL_TESTS_212,
         "NCCL's maintainer: all-reduce uses NVLink SHARP by default; on 8 GPUs a peak busbw of ~480 GB/s "
         "(algbw ~275 GB/s) at large sizes; measured 480 GB/s on 8 GPUs (" + _NCCL_1455 + ")"),
    _row("H100", "nvswitch", (7,), "NVLS", 460.0, "7 of 8 H100 SXM on NVSwitch", _NCCL_1455, _NVLS_BY_COUNT),
    _row("H100", "nvswitch", (6,), "NVLS", 440.0, "6 of 8 H100 SXM on NVSwitch", _NCCL_1455, _NVLS_BY_COUNT),
    _row("H100", "nvswitch", (5,), "NVLS", 420.0, "5 of 8 H100 SXM on NVSwitch", _NCCL_1455, _NVLS_BY_COUNT),
    _row("H100", "nvswitch", (3, 4), "NVLS", 365.0, "3-4 of 8 H100 SXM on NVSwitch", _NCCL_1455,
         _NVLS_BY_COUNT),
    _row("H100", "nvswitch", (2, 3, 4, 5, 6, 7, 8), "Ring", 370.0,
         "2-8 of 8 H100 SXM on NVSwitch, NCCL_ALGO=RING", _NCCL_TESTS_212,
         "NCCL's maintainer: effective NVLink4 bandwidth ~370 GB/s busbw with NCCL_ALGO=RING; 365-370 GB/s "
         "on 2 to 8 GPUs (" + _NCCL_1455 + "); NVLS is off on 2 GPUs (" + _NVLS_SOURCE + ")"),
    _row("H200", "nvswitch", (8,), "NVLS", 475.0, "8 x H200 on NVLink4 (NVSwitch)",
         "https://github.com/NVIDIA/nccl-tests/issues/272",
         "8x H200 on NVLink4 measured 475 GB/s peak busbw (NVLS: above the NVLink4 ring figure)"),
    _row("H800", "nvswitch", (8,), "NVLS", 215.0, "8 x H800 on NVSwitch (NVLink4 at 400 GB/s bidirectional)",
         "https://github.com/NVIDIA/nccl/issues/1374", "8x H800 measured 215 GB/s allreduce busbw (NVLS)"),
    _row("A100", "nvswitch", (8,), "Ring", 230.0, "8 x A100 SXM4 on NVSwitch (A100 has no NVLS)",
         "https://github.com/NVIDIA/nccl-tests/issues/175",
         "8x A100 single node, all_reduce_perf -b 8 -e 4G -f 2 -g 8: 232.54 GB/s; ~200 GB/s on "
         "an HPE Apollo 6500 (https://github.com/NVIDIA/nccl-tests/issues/149)"),
    _row("B200", "nvswitch", (8,), "", 830.0, "8 x B200 on NVSwitch in one machine, NCCL 2.27.1 defaults",
         "https://github.com/NVIDIA/nccl/issues/1807", "8x B200 single machine measured 830+ GB/s busbw"),
    _row("GB200", "nvswitch", (4,), "Ring", 680.0,
         "one GB200 host (4 GPUs on NVSwitch), in-place, NCCL 2.25.1",
         _GB200_AZURE,
         "Azure ND GB200 v6, all_reduce_perf on the host's 4 GPUs (Azure/AI-benchmarking-guide issue 7): "
         "679.61 GB/s in-place busbw at 8 GB; the source calls the algorithm Ring"),
    _row("GB200", "nvswitch", (72,), "", 834.0,
         "one GB200 NVL72 rack (72 GPUs on 18 hosts, NVSwitch), NCCL defaults",
         "https://github.com/coreweave/nccl-tests/blob/cb86553328f8c9ed6f9d682971f5f9b17a926ab4/README.md",
         "GB200 NVL72 single rack (72 GPUs), 8 GiB messages: 834.57 GB/s out-of-place busbw; an NVLink "
         "domain across hosts, never one node's figure"),
    _row("H100", "nvlink", (2,), "Ring", 115.0, "2 x H100 PCIe joined by an NVLink bridge",
         "https://github.com/NVIDIA/nccl/issues/1161",
         "2x H100 PCIe joined by an NVLink bridge: 115-116 GB/s busbw at 1-4 GiB (P2P/direct pointer); "
         "the H100 NVL's bridged pairs"),
    _row("V100", "nvlink", (8,), "", 129.0,
         "8 x Tesla V100-SXM2-16GB on NVLink2 (hybrid cube-mesh, NV1/NV2 per pair), NCCL defaults",
         _V100_DGX1,
         "all_reduce_perf -b 8 -e 128M -f 2 -g 8 on 8 x V100 SXM2 joined as in a DGX-1 (its "
         "nvidia-smi topo -m: each GPU on NV1/NV2 to four others, SYS to three): 129.14 GB/s "
         "out-of-place busbw at 128 MiB, the largest size run, still rising (118.30 at 64 MiB)"),
    _row("A100", "pcie", (3,), "Ring", 20.0,
         "3 x A100 whose traffic crosses PCIe and the CPU (SYS), NCCL defaults",
         "https://github.com/NVIDIA/nccl-tests/issues/178",
         "A100s whose traffic crosses PCIe and the CPU (SYS) instead of NVLink: ~20 GB/s busbw (-t 3)"),
    _row("H100", "pcie", (8,), "Ring", 28.0, f"8 {_RTX5090_GEN5}", _PCIE_GEN5, _PCIE_GEN5_NOTE),
    _row("H100", "pcie", (4,), "Ring", 35.0, f"4 {_RTX5090_GEN5}", _PCIE_GEN5, _PCIE_GEN5_NOTE),
    _row("H200", "pcie", (8,), "Ring", 28.0, f"8 {_RTX5090_GEN5}", _PCIE_GEN5, _PCIE_GEN5_NOTE),
    _row("B200", "pcie", (8,), "Ring", 28.0, f"8 {_RTX5090_GEN5}", _PCIE_GEN5, _PCIE_GEN5_NOTE),
    # No healthy node's figure is cited for these (docs/nccl-expectations.md says what was found):
    # derived from their PCIe Gen4 x16 links (pcie_expectation).
    *(_derived(family, gpus) for family in ("L40S", "L4") for gpus in ((2, 3, 4), (5, 6, 7, 8))),
    *(_derived("A100", gpus) for gpus in ((2, 4), (5, 6, 7, 8))),  # 3 x A100 PCIe: measured above
)  # fmt: skip

# `nvidia.com/gpu.product` label values (GPU feature discovery: the NVML name with spaces as
# dashes, e.g. NVIDIA-H100-80GB-HBM3, NVIDIA-A100-SXM4-80GB, Tesla-T4, NVIDIA-GB200) → family.
# Longer names first: GB200 before B200, H100 NVL is still H100.
_FAMILIES = ("GB200", "B200", "H800", "H200", "H100", "A100", "A800", "L40S", "L40", "L4", "A40",
             "A30", "A10G", "A10", "T4", "V100")  # fmt: skip
_FAMILY = re.compile(
    r"(?:^|[-_ ])(?:NVIDIA|Tesla)?[-_ ]?(?P<family>" + "|".join(_FAMILIES) + r")(?=$|[-_ ])", re.I
)


def gpu_family(product: str) -> str | None:
    """'NVIDIA-H100-80GB-HBM3' → 'H100'; 'Tesla-T4' → 'T4'; a MIG suffix (…-MIG-1g.10gb) is kept
    out; None for a product gpuctl does not know."""
    match = _FAMILY.search(product.split("-MIG-", maxsplit=1)[0])
    return match["family"].upper() if match else None


def expected_for(node: NodeHardware) -> Expectation | UnknownExpectation:
    """The figure a node is held to: among the rows whose configuration matches the node's, the
    one of the algorithm NCCL should run (NVLS where the node can), else NCCL's default, else Ring."""
    matching = [row for row in TABLE if not row.mismatch(node)]
    order: tuple[Algorithm, ...] = ("NVLS", "", "Ring") if node.nvls else ("Ring", "")
    for algorithm in order:
        row = next((row for row in matching if row.algorithm == algorithm), None)
        if row is not None:
            return row
    if node.family is None:
        return UnknownExpectation(None, node.interconnect, "gpuctl knows no GPU family in the product")
    measured = sorted({"/".join(map(str, row.gpus)) for row in TABLE if row.family == node.family
                       and row.interconnect == node.interconnect})  # fmt: skip
    on = f" (cited figures measured on {', '.join(measured)} GPUs)" if measured else ""
    return UnknownExpectation(
        node.family,
        node.interconnect,
        f"no cited all-reduce figure for {node.gpus} x {node.family} over {node.interconnect}{on}",
    )


def ring_figure(node: NodeHardware) -> Expectation | None:
    """The node's ring figure, where one is cited: what it reaches without NVLS."""
    return next((row for row in TABLE if row.algorithm == "Ring" and not row.mismatch(node)), None)


def expected_busbw(
    product: str, interconnect: Interconnect, gpus: int = 8
) -> Expectation | UnknownExpectation:
    """The expected all-reduce figure for a node labelled `nvidia.com/gpu.product=product` whose
    all-reduce runs over `gpus` GPUs."""
    family = gpu_family(product)
    if family is None:
        return UnknownExpectation(
            None, interconnect, f"gpuctl knows no GPU family in the product {product!r}"
        )
    return expected_for(NodeHardware(family, interconnect, gpus))


def low_bandwidth_hint(interconnect: Interconnect) -> str:
    """What to check on a node whose all-reduce fell short, by what should carry the traffic."""
    pcie = (
        "`sudo lspci -vv -d 10de: | grep -e LnkCap -e LnkSta` on {node} (a link trained below its "
        "capability, e.g. x8 or 8GT/s, is degraded: reseat the card or check the riser); "
        "`nvidia-smi topo -m`; PCIe ACS on the switches or the IOMMU in translated mode forces P2P "
        "through the CPU (`sudo lspci -vvv | grep ACSCtl`, boot with `iommu=pt`, disable ACS in the BIOS)"
    )
    if interconnect == "pcie":
        return pcie
    nvlink = (
        "on {node}: `nvidia-smi nvlink -s` (inactive links: reset the GPUs with `nvidia-smi -r` or "
        "power-cycle the node; replace the baseboard if they stay down) and `nvidia-smi topo -m` "
        "(NV# between every pair of GPUs)"
    )
    if interconnect == "nvswitch":
        nvlink += "; `systemctl status nvidia-fabricmanager` (the NVSwitch fabric needs it running)"
    return f"{nvlink}; then {pcie}"
