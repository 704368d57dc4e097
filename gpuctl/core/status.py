"""`status`: the GPU inventory of the cluster, from two list requests (nodes, pods)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.nodes import GPU_RESOURCE, NodeInfo, as_int, list_nodes
from gpuctl.kube.raw import JsonDict, call_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

SCHEMA = "gpuctl.status/v1"
TERMINATED_PHASES = ("Succeeded", "Failed")


@dataclass(frozen=True)
class GpuNodeStatus:
    name: str
    product: str  # GFD product label, "-" when unknown
    gpu_capacity: int
    gpu_allocatable: int
    gpu_in_use: int  # nvidia.com/gpu requested by the node's non-terminated pods
    driver: str  # driver version from GFD labels, "-" when unknown
    taints: tuple[str, ...]
    ready: bool
    schedulable: bool


@dataclass(frozen=True)
class StatusResult:
    nodes: tuple[GpuNodeStatus, ...]
    cluster_nodes: int

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


def _node_status(info: NodeInfo, in_use: dict[str, int]) -> GpuNodeStatus:
    return GpuNodeStatus(
        name=info.name,
        product=info.product_label or "-",
        gpu_capacity=info.gpu_capacity,
        gpu_allocatable=info.gpu_allocatable,
        gpu_in_use=in_use.get(info.name, 0),
        driver=info.driver_version or "-",
        taints=tuple(str(taint) for taint in info.taints),
        ready=info.ready,
        schedulable=not info.unschedulable,
    )


def gpu_status(api_client: ApiClient) -> StatusResult:
    """Every GPU node (capacity, NFD/GFD labels) with its GPUs, driver, taints and readiness."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(api_client)
    nodes = list_nodes(api_client)
    with api_call("list", "pods"):
        pods: list[JsonDict] = call_json(core.list_pod_for_all_namespaces).get("items") or []
    in_use = gpus_in_use(pods)
    statuses = [_node_status(node, in_use) for node in nodes if node.is_gpu_node]
    return StatusResult(
        nodes=tuple(sorted(statuses, key=lambda status: status.name)),
        cluster_nodes=len(nodes),
    )
