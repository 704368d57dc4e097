"""`status`: the GPU inventory of the cluster, from two list requests (nodes, pods), plus up to
four for GPUs published through DRA (resource.k8s.io discovery, DeviceClasses, ResourceSlices,
ResourceClaims), and two for the GPU Operator's mode (its ClusterPolicies and GPUClusters)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.gate import gate_level
from gpuctl.core.stacks.device_plugin.sharing import SharingPlan, plan_for
from gpuctl.defaults import GPU_RESOURCE
from gpuctl.errors import ExitCode
from gpuctl.kube.claims import devices_in_use
from gpuctl.kube.dra import DraInventory, DraNode, read_inventory
from gpuctl.kube.gpu_operator import operator_mode
from gpuctl.kube.gpu_use import read_use
from gpuctl.kube.nodes import NodeInfo, list_nodes

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient


@dataclass(frozen=True)
class GpuNodeSummary:
    """One row of the GPU inventory."""

    name: str
    product: str  # GFD product label, "-" when unknown
    gpu_capacity: int
    gpu_allocatable: int
    gpu_in_use: int  # nvidia.com/gpu requested by the node's non-terminated pods
    driver: str  # driver version from GFD labels, "-" when unknown
    taints: tuple[str, ...]
    ready: bool
    schedulable: bool
    sharing: SharingPlan | None = None  # time-slicing / MPS replicas, MIG devices (from GFD labels)
    # -o wide: the node's software and the GPU memory GFD reports ("" / 0 when unknown)
    kubelet_version: str = ""
    container_runtime: str = ""
    kernel_version: str = ""
    os_image: str = ""
    gpu_memory_mib: int = 0
    gpu_allocation: str = "device-plugin"  # device-plugin | dra | both (the same GPUs, counted once)
    dra: DraSummary | None = None
    gate: str | None = None  # the level the node is gated at (gpuctl.io/unproven), None: not gated


@dataclass(frozen=True)
class DraSummary:
    """The node's GPUs as its ResourceSlices publish them."""

    published: int  # full GPUs (MIG devices where the node publishes only those)
    claimable: int  # without a NoSchedule/NoExecute device taint
    allocated: int  # held by allocated ResourceClaims
    tainted: int
    # (device, taint with its source: the slice or a DeviceTaintRule): the GPUs counted unhealthy
    unhealthy: tuple[tuple[str, str], ...] = ()
    # (device, DeviceTaintRule, taint key): the GPUs `verify --gate` keeps out until proven again
    gated: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class StatusResult:
    nodes: tuple[GpuNodeSummary, ...]
    cluster_nodes: int
    exit_code: ExitCode = ExitCode.OK  # read-only: it ran
    # The GPU Operator's mode: ClusterPolicy (device plugin), GPUCluster (DRA), `both` (a conflict
    # it refuses), "" (no Operator resource, or not readable).
    operator_mode: str = ""

    @property
    def totals(self) -> dict[str, int]:
        return {
            "gpu_nodes": len(self.nodes),
            "capacity": sum(node.gpu_capacity for node in self.nodes),
            "allocatable": sum(node.gpu_allocatable for node in self.nodes),
            "in_use": sum(node.gpu_in_use for node in self.nodes),
        }


def _dra_summary(published: DraNode | None, allocated: int) -> DraSummary | None:
    if published is None:
        return None
    claimable = sum(1 for device in published.devices if not device.taints and not device.gated)
    count = published.gpus or published.mig_devices
    gated = tuple((d.name, d.gated, d.gate_key) for d in published.devices if d.gated)
    tainted = len(published.tainted)
    return DraSummary(count, min(claimable, count), allocated, tainted, published.unhealthy, gated)


def _node_summary(
    info: NodeInfo, in_use: dict[str, int], inventory: DraInventory, claimed: dict[str, int]
) -> GpuNodeSummary:
    """Device-plugin and DRA figures of one node; GPUs exposed both ways are counted once."""
    published = inventory.nodes.get(info.name)
    dra = _dra_summary(published, claimed.get(info.name, 0))
    allocation = "device-plugin" if dra is None else ("both" if info.gpu_capacity else "dra")
    return GpuNodeSummary(
        name=info.name,
        product=info.product_label or (published.product if published else "") or "-",
        gpu_capacity=max(info.gpu_capacity, dra.published if dra else 0),
        gpu_allocatable=max(info.gpu_allocatable, dra.claimable if dra else 0),
        gpu_in_use=in_use.get(info.name, 0) + (dra.allocated if dra else 0),
        driver=info.driver_version or (published.driver_version if published else "") or "-",
        taints=tuple(str(taint) for taint in info.taints),
        ready=info.ready,
        schedulable=not info.unschedulable,
        sharing=plan_for(info),
        kubelet_version=info.system.get("kubeletVersion", ""),
        container_runtime=info.system.get("containerRuntimeVersion", ""),
        kernel_version=info.system.get("kernelVersion", ""),
        os_image=info.system.get("osImage", ""),
        gpu_memory_mib=info.memory_label_mib,
        gpu_allocation=allocation,
        dra=dra,
        gate=gate_level(info.taints),
    )


def gpu_status(api_client: ApiClient) -> StatusResult:
    """Every GPU node (capacity, NFD/GFD labels) with its GPUs, driver, taints and readiness."""
    nodes = list_nodes(api_client)
    in_use = {node: use.of(GPU_RESOURCE) for node, use in read_use(api_client).items()}
    # A denied DRA list ends status (exit 3) rather than hide the GPUs it publishes (docs/rbac.md).
    inventory = read_inventory(api_client, denied_is_error=True)
    claimed = devices_in_use(api_client, inventory.version) if inventory.nodes else {}
    summaries = [
        _node_summary(node, in_use, inventory, claimed)
        for node in nodes
        if node.is_gpu_node or node.name in inventory.nodes
    ]
    return StatusResult(
        nodes=tuple(sorted(summaries, key=lambda summary: summary.name)),
        cluster_nodes=len(nodes),
        operator_mode=operator_mode(api_client),
    )
