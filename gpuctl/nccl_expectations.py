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

Interconnect = Literal["nvswitch", "nvlink", "pcie"]
INTERCONNECTS: tuple[Interconnect, ...] = ("nvswitch", "nvlink", "pcie")
# The node label that says how a node's GPUs are joined (nvswitch|nvlink|pcie), set by the admin
# (or the simulated cluster); GPU feature discovery publishes none (see core/verify/levels/nccl.py).
INTERCONNECT_LABEL = "gpuctl.io/interconnect"
PASS_FRACTION = 0.8


@dataclass(frozen=True)
class Expectation:
    family: str
    interconnect: Interconnect
    busbw_gbps: float
    source: str  # where the figure comes from
    note: str

    @property
    def minimum_gbps(self) -> float:
        return round(self.busbw_gbps * PASS_FRACTION, 1)


@dataclass(frozen=True)
class UnknownExpectation:
    """No cited figure for this model and interconnect: the caller needs `--min-busbw`."""

    family: str | None  # None: the product label names no family gpuctl knows
    interconnect: Interconnect
    reason: str


_NCCL_TESTS_212 = "https://github.com/NVIDIA/nccl-tests/issues/212"
_PCIE_GEN5 = "https://github.com/NVIDIA/nccl/issues/1639"
_PCIE_GEN5_NOTE = (
    "8 GPUs on PCIe Gen5 without NVLink reached 28 GB/s; NCCL's maintainer: on PCI systems the CPU "
    "and memory bandwidth bound it, not the GPU"
)

TABLE: tuple[Expectation, ...] = (
    Expectation("H100", "nvswitch", 370.0, _NCCL_TESTS_212,
                "NCCL's maintainer: effective NVLink4 bandwidth ~370 GB/s busbw (ring); ~480 GB/s peak "
                "on 8 GPUs with NVLink SHARP at large sizes"),
    Expectation("H200", "nvswitch", 370.0, "https://github.com/NVIDIA/nccl-tests/issues/272",
                "8x H200 on NVLink4 measured 475 GB/s peak busbw (NVLS); same NVLink4 ring figure as "
                "H100 (" + _NCCL_TESTS_212 + ")"),
    Expectation("H800", "nvswitch", 215.0, "https://github.com/NVIDIA/nccl/issues/1374",
                "8x H800 (NVLink4 at 400 GB/s bidirectional) measured 215 GB/s busbw"),
    Expectation("A100", "nvswitch", 230.0, "https://github.com/NVIDIA/nccl-tests/issues/175",
                "8x A100 single node, all_reduce_perf -b 8 -e 4G -f 2 -g 8: 232.54 GB/s; ~200 GB/s on "
                "an HPE Apollo 6500 (https://github.com/NVIDIA/nccl-tests/issues/149)"),
    Expectation("B200", "nvswitch", 830.0, "https://github.com/NVIDIA/nccl/issues/1807",
                "8x B200 single machine measured 830+ GB/s busbw"),
    Expectation("GB200", "nvswitch", 834.0, "https://github.com/coreweave/nccl-tests/blob/cb86553328f8c9ed6f9d682971f5f9b17a926ab4/README.md",
                "GB200 NVL72 single rack (72 GPUs), 8 GiB messages: 834.57 GB/s out-of-place busbw"),
    Expectation("H100", "nvlink", 115.0, "https://github.com/NVIDIA/nccl/issues/1161",
                "2x H100 PCIe joined by an NVLink bridge: 115-116 GB/s busbw at 1-4 GiB"),
    Expectation("A100", "pcie", 20.0, "https://github.com/NVIDIA/nccl-tests/issues/178",
                "A100s whose traffic crosses PCIe and the CPU (SYS) instead of NVLink: ~20 GB/s busbw"),
    Expectation("H100", "pcie", 28.0, _PCIE_GEN5, _PCIE_GEN5_NOTE),
    Expectation("H200", "pcie", 28.0, _PCIE_GEN5, _PCIE_GEN5_NOTE),
    Expectation("B200", "pcie", 28.0, _PCIE_GEN5, _PCIE_GEN5_NOTE),
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


def expected_busbw(product: str, interconnect: Interconnect) -> Expectation | UnknownExpectation:
    """The expected all-reduce figure for a node labelled `nvidia.com/gpu.product=product`."""
    family = gpu_family(product)
    if family is None:
        return UnknownExpectation(
            None, interconnect, f"gpuctl knows no GPU family in the product {product!r}"
        )
    for row in TABLE:
        if row.family == family and row.interconnect == interconnect:
            return row
    return UnknownExpectation(
        family, interconnect, f"no cited all-reduce figure for {family} over {interconnect}"
    )


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
