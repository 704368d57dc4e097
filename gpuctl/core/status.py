"""`status`: the GPU inventory of the cluster, from two list requests (nodes, pods), plus what
each stack reads for it: the GPUs a way of handing them out publishes through its own API
(GpuAllocation.published_gpus) and how each stack runs (ClusterStack.installed_mode)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.gate import gate_level
from gpuctl.core.stacks import DEFAULT_STACK, Stack
from gpuctl.core.stacks.base import PublishedGpus
from gpuctl.core.stacks.device_plugin.sharing import SharingPlan, plan_for
from gpuctl.core.stacks.registry import ALLOCATIONS, STACKS
from gpuctl.defaults import GPU_RESOURCE
from gpuctl.errors import ExitCode
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
    # the stack whose way it hands out its GPUs (its --stack value), or `both`: published by a stack
    # and advertised as nvidia.com/gpu too (the same GPUs, counted once)
    gpu_allocation: str = DEFAULT_STACK.value
    published: PublishedGpus | None = None  # its GPUs as a stack publishes them
    gate: str | None = None  # the level the node is gated at (gpuctl.io/unproven), None: not gated


@dataclass(frozen=True)
class StatusResult:
    nodes: tuple[GpuNodeSummary, ...]
    cluster_nodes: int
    exit_code: ExitCode = ExitCode.OK  # read-only: it ran
    # How each stack runs in the cluster (ClusterStack.installed_mode; "": not installed, or it
    # does not say), in the registry's order.
    modes: tuple[tuple[Stack, str], ...] = ()

    @property
    def totals(self) -> dict[str, int]:
        return {
            "gpu_nodes": len(self.nodes),
            "capacity": sum(node.gpu_capacity for node in self.nodes),
            "allocatable": sum(node.gpu_allocatable for node in self.nodes),
            "in_use": sum(node.gpu_in_use for node in self.nodes),
        }


def _node_summary(info: NodeInfo, in_use: dict[str, int], published: PublishedGpus | None) -> GpuNodeSummary:
    """The node's figures, its advertised and its published GPUs; GPUs exposed both ways are
    counted once."""
    if published is None:
        allocation = DEFAULT_STACK.value
    else:
        allocation = "both" if info.gpu_capacity else published.stack.value
    return GpuNodeSummary(
        name=info.name,
        product=info.product_label or (published.product if published else "") or "-",
        gpu_capacity=max(info.gpu_capacity, published.published if published else 0),
        gpu_allocatable=max(info.gpu_allocatable, published.claimable if published else 0),
        gpu_in_use=in_use.get(info.name, 0) + (published.allocated if published else 0),
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
        published=published,
        gate=gate_level(info.taints),
    )


def gpu_status(api_client: ApiClient) -> StatusResult:
    """Every GPU node (capacity, NFD/GFD labels, published GPUs) with its GPUs, driver, taints and
    readiness."""
    nodes = list_nodes(api_client)
    in_use = {node: use.of(GPU_RESOURCE) for node, use in read_use(api_client).items()}
    published: dict[str, PublishedGpus] = {}
    for allocation in ALLOCATIONS.values():
        published |= allocation.published_gpus(api_client)
    summaries = [
        _node_summary(node, in_use, published.get(node.name))
        for node in nodes
        if node.is_gpu_node or node.name in published
    ]
    return StatusResult(
        nodes=tuple(sorted(summaries, key=lambda summary: summary.name)),
        cluster_nodes=len(nodes),
        modes=tuple((stack, found.installed_mode(api_client)) for stack, found in STACKS.items()),
    )
