"""`status`: the GPU inventory of the cluster, from two list requests (nodes, pods)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.verify.sharing import SharingPlan, plan_for
from gpuctl.defaults import GPU_RESOURCE
from gpuctl.errors import ExitCode
from gpuctl.kube.nodes import NodeInfo, as_int, list_nodes
from gpuctl.kube.pods import list_all_pods
from gpuctl.kube.raw import JsonDict

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

TERMINATED_PHASES = ("Succeeded", "Failed")


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


@dataclass(frozen=True)
class StatusResult:
    nodes: tuple[GpuNodeSummary, ...]
    cluster_nodes: int
    exit_code: ExitCode = ExitCode.OK  # read-only: it ran

    @property
    def totals(self) -> dict[str, int]:
        return {
            "gpu_nodes": len(self.nodes),
            "capacity": sum(node.gpu_capacity for node in self.nodes),
            "allocatable": sum(node.gpu_allocatable for node in self.nodes),
            "in_use": sum(node.gpu_in_use for node in self.nodes),
        }


def _container_gpus(container: JsonDict) -> int:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    # For extended resources a limit alone implies an equal request.
    return as_int(requests.get(GPU_RESOURCE, limits.get(GPU_RESOURCE, 0)))


def pod_gpu_request(pod: JsonDict) -> int:
    """Effective nvidia.com/gpu request: max(sum over containers, largest init container)."""
    spec = pod.get("spec") or {}
    regular = sum(_container_gpus(container) for container in spec.get("containers") or [])
    init = max((_container_gpus(container) for container in spec.get("initContainers") or []), default=0)
    return max(regular, init)


def gpus_in_use(pods: Iterable[JsonDict]) -> dict[str, int]:
    """nvidia.com/gpu held per node by pods that are bound and not terminated."""
    used: dict[str, int] = defaultdict(int)
    for pod in pods:
        node = (pod.get("spec") or {}).get("nodeName")
        phase = (pod.get("status") or {}).get("phase")
        if node and phase not in TERMINATED_PHASES:
            used[node] += pod_gpu_request(pod)
    return dict(used)


def _node_summary(info: NodeInfo, in_use: dict[str, int]) -> GpuNodeSummary:
    return GpuNodeSummary(
        name=info.name,
        product=info.product_label or "-",
        gpu_capacity=info.gpu_capacity,
        gpu_allocatable=info.gpu_allocatable,
        gpu_in_use=in_use.get(info.name, 0),
        driver=info.driver_version or "-",
        taints=tuple(str(taint) for taint in info.taints),
        ready=info.ready,
        schedulable=not info.unschedulable,
        sharing=plan_for(info),
        kubelet_version=info.system.get("kubeletVersion", ""),
        container_runtime=info.system.get("containerRuntimeVersion", ""),
        kernel_version=info.system.get("kernelVersion", ""),
        os_image=info.system.get("osImage", ""),
        gpu_memory_mib=info.memory_label_mib,
    )


def gpu_status(api_client: ApiClient) -> StatusResult:
    """Every GPU node (capacity, NFD/GFD labels) with its GPUs, driver, taints and readiness."""
    nodes = list_nodes(api_client)
    in_use = gpus_in_use(list_all_pods(api_client))
    summaries = [_node_summary(node, in_use) for node in nodes if node.is_gpu_node]
    return StatusResult(
        nodes=tuple(sorted(summaries, key=lambda summary: summary.name)),
        cluster_nodes=len(nodes),
    )
