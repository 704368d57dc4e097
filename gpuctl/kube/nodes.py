"""GPU node discovery: which nodes are GPU nodes, and what they advertise."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, call_json, dig, labels_of, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

GPU_RESOURCE = "nvidia.com/gpu"
NFD_PCI_LABEL = "feature.node.kubernetes.io/pci-10de.present"
GFD_PRESENT_LABEL = "nvidia.com/gpu.present"
GFD_COUNT_LABEL = "nvidia.com/gpu.count"
GFD_PRODUCT_LABEL = "nvidia.com/gpu.product"
GFD_MEMORY_LABEL = "nvidia.com/gpu.memory"
HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


@dataclass(frozen=True)
class NodeInfo:
    """The facts verify needs about one node, read from one list call."""

    name: str
    labels: dict[str, str]
    taints: tuple[Taint, ...]
    ready: bool
    ready_reason: str
    ready_message: str
    unschedulable: bool
    gpu_capacity: int
    gpu_allocatable: int

    @property
    def hostname(self) -> str:
        return self.labels.get(HOSTNAME_LABEL, self.name)

    @property
    def gpu_labelled(self) -> bool:
        """NFD/GFD/operator labels say this node has NVIDIA GPUs."""
        return (
            self.labels.get(NFD_PCI_LABEL) == "true"
            or self.labels.get(GFD_PRESENT_LABEL) == "true"
            or _as_int(self.labels.get(GFD_COUNT_LABEL)) > 0
        )

    @property
    def is_gpu_node(self) -> bool:
        return self.gpu_capacity > 0 or self.gpu_labelled

    @property
    def product_label(self) -> str:
        return self.labels.get(GFD_PRODUCT_LABEL, "")

    @property
    def memory_label_mib(self) -> int:
        return _as_int(self.labels.get(GFD_MEMORY_LABEL))


def _as_int(value: object) -> int:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return 0


def _ready_condition(node: JsonDict) -> tuple[bool, str, str]:
    for condition in dig(node, "status", "conditions", default=[]):
        if condition.get("type") == "Ready":
            ready = condition.get("status") == "True"
            return ready, condition.get("reason") or "", condition.get("message") or ""
    return False, "NoReadyCondition", "the node reports no Ready condition"


def node_from_json(node: JsonDict) -> NodeInfo:
    ready, reason, message = _ready_condition(node)
    taints = tuple(
        Taint(taint.get("key", ""), taint.get("value") or "", taint.get("effect", ""))
        for taint in dig(node, "spec", "taints", default=[])
    )
    return NodeInfo(
        name=name_of(node),
        labels=dict(labels_of(node)),
        taints=taints,
        ready=ready,
        ready_reason=reason,
        ready_message=message,
        unschedulable=bool(dig(node, "spec", "unschedulable", default=False)),
        gpu_capacity=_as_int(dig(node, "status", "capacity", default={}).get(GPU_RESOURCE)),
        gpu_allocatable=_as_int(dig(node, "status", "allocatable", default={}).get(GPU_RESOURCE)),
    )


def list_nodes(api_client: ApiClient) -> list[NodeInfo]:
    """Every node of the cluster (one request)."""
    from kubernetes.client import CoreV1Api

    with api_call("list", "nodes"):
        body = call_json(CoreV1Api(api_client).list_node)
    return [node_from_json(item) for item in body.get("items", [])]
