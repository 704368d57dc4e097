"""What a multi-node all-reduce over a node's network should reach: NIC count x per-NIC figure.

The per-NIC figure is nccl-tests' bus bandwidth (GB/s) one NIC carries in a multi-node
all-reduce at large sizes, as NCCL's maintainers state it in the cited threads. A group of nodes
is held to the smallest figure of its nodes and passes at PASS_FRACTION of it, like the node-level
all-reduce (gpuctl.nccl_expectations).

What a node has comes from node labels an admin (or the simulated cluster) sets, as for
`gpuctl.io/interconnect`: no operator publishes NIC count and speed as labels, and the network
resources a cluster exposes (`rdma/...`, `vpc.amazonaws.com/efa`) count devices, not links.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from gpuctl.nccl_expectations import PASS_FRACTION

Fabric = Literal["ib", "roce", "efa", "none"]
FABRICS: tuple[Fabric, ...] = ("ib", "roce", "efa", "none")
FABRIC_LABEL = "gpuctl.io/fabric"  # ib | roce | efa | none
NICS_LABEL = "gpuctl.io/fabric-nics"  # NICs per node that carry GPU traffic
LINK_GBPS_LABEL = "gpuctl.io/fabric-link-gbps"  # each NIC's link speed, Gb/s
# Topology labels nodes of one group must share where present: nodes in different zones do not
# perform alike over the network even with the same hardware (Kubernetes' well-known labels).
TOPOLOGY_LABELS = ("topology.kubernetes.io/region", "topology.kubernetes.io/zone")
# What NCCL names each fabric's transport in `NCCL INFO Using network ...` (IB covers RoCE:
# NCCL's IB transport runs over both; EFA is the aws-ofi-nccl plugin, "Libfabric" / "AWS Libfabric").
RDMA_NETWORKS: dict[Fabric, tuple[str, ...]] = {
    "ib": ("IB", "IBext"),
    "roce": ("IB", "IBext"),
    "efa": ("Libfabric", "AWS Libfabric", "OFI"),
    "none": (),
}

_NCCL_TESTS_290 = "https://github.com/NVIDIA/nccl-tests/issues/290"
_NCCL_TESTS_267 = "https://github.com/NVIDIA/nccl-tests/issues/267"
_NCCL_412 = "https://github.com/NVIDIA/nccl/issues/412"


@dataclass(frozen=True)
class NicFigure:
    link_gbps: int
    busbw_gbps: float  # per NIC
    source: str
    note: str


NIC_TABLE: tuple[NicFigure, ...] = (
    NicFigure(400, 48.0, _NCCL_TESTS_290,
              "NCCL's maintainer: for NDR @ 400Gbps you should see 46-48GB/s per NIC; CX-7 at NDR "
              "up to 48-49GB/s per NIC (" + _NCCL_TESTS_267 + ")"),
    NicFigure(200, 24.0, _NCCL_412,
              "NCCL's maintainer: one HDR 200G NIC, BusBW at 8G ~24GB/s inter-node; a DGX-A100 with "
              "8x200Gbit/s IB measures 192GB/s (https://github.com/NVIDIA/nccl/issues/1576)"),
)  # fmt: skip
# Links without a row are held to the 400G and 200G rows' share of the line rate (48/50, 24/25).
LINE_RATE_SHARE = 0.96


@dataclass(frozen=True)
class NodeFabric:
    """What a node's labels say of its network: fabric, NICs, each NIC's link speed."""

    fabric: Fabric | None  # None: no gpuctl.io/fabric label
    nics: int
    link_gbps: int

    @property
    def known(self) -> bool:
        return self.fabric is not None and self.nics > 0 and self.link_gbps > 0


@dataclass(frozen=True)
class FabricExpectation:
    busbw_gbps: float  # what the NICs together should carry
    source: str

    @property
    def minimum_gbps(self) -> float:
        return round(self.busbw_gbps * PASS_FRACTION, 1)


def _integer(text: str | None) -> int:
    return int(text) if text is not None and text.isdigit() else 0


def node_fabric(labels: Mapping[str, str]) -> NodeFabric:
    value = labels.get(FABRIC_LABEL, "")
    fabric = next((known for known in FABRICS if known == value), None)
    return NodeFabric(fabric, _integer(labels.get(NICS_LABEL)), _integer(labels.get(LINK_GBPS_LABEL)))


def per_nic(link_gbps: int) -> tuple[float, str]:
    """One NIC's bus bandwidth at `link_gbps` and where the figure comes from."""
    for row in NIC_TABLE:
        if row.link_gbps == link_gbps:
            return row.busbw_gbps, row.source
    derived = (
        f"{LINE_RATE_SHARE:.0%} of line rate, as the 400G and 200G rows ({_NCCL_TESTS_290}, {_NCCL_412})"
    )
    return round(link_gbps / 8 * LINE_RATE_SHARE, 1), derived


def expected_fabric_busbw(fabric: NodeFabric) -> FabricExpectation | None:
    """NIC count x per-NIC figure, None where the labels do not say enough."""
    if not fabric.known or fabric.fabric == "none":
        return None
    figure, source = per_nic(fabric.link_gbps)
    return FabricExpectation(
        round(fabric.nics * figure, 1),
        f"{fabric.nics} x {fabric.link_gbps}G at {figure:g} GB/s each: {source}",
    )


def fabric_labels(fabric: str, nics: int, link_gbps: int) -> dict[str, str]:
    """The labels that say a node's network (what an admin sets, as gpuctl.io/interconnect)."""
    return {FABRIC_LABEL: fabric, NICS_LABEL: str(nics), LINK_GBPS_LABEL: str(link_gbps)}


def group_key(labels: Mapping[str, str], product: str) -> tuple[str, ...]:
    """Nodes that should perform alike share this key: GPU model, fabric, NICs and link speed, and
    the topology labels they carry."""
    fabric = node_fabric(labels)
    topology = tuple(f"{key}={labels[key]}" for key in TOPOLOGY_LABELS if key in labels)
    return (product, fabric.fabric or "", str(fabric.nics), str(fabric.link_gbps), *topology)
