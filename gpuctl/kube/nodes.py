"""GPU node discovery: which nodes are GPU nodes, and what they advertise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuctl.defaults import GPU_RESOURCE
from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, dig, labels_of, latest_items, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

NFD_PCI_LABEL = "feature.node.kubernetes.io/pci-10de.present"
GFD_PRESENT_LABEL = "nvidia.com/gpu.present"
GFD_COUNT_LABEL = "nvidia.com/gpu.count"
GFD_PRODUCT_LABEL = "nvidia.com/gpu.product"
GFD_MEMORY_LABEL = "nvidia.com/gpu.memory"
HOSTNAME_LABEL = "kubernetes.io/hostname"
# GPU feature discovery labels for the driver version, newest naming first; an annotation is the
# last resort.
DRIVER_FULL_LABEL = "nvidia.com/cuda.driver-version.full"
DRIVER_PART_LABELS = (
    (
        "nvidia.com/cuda.driver-version.major",
        "nvidia.com/cuda.driver-version.minor",
        "nvidia.com/cuda.driver-version.revision",
    ),
    ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev"),
)
DRIVER_ANNOTATION = "nvidia.com/driver-version"
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
ENFORCED_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only steers the scheduler


@dataclass(frozen=True)
class Taint:
    """A node taint: key=value:effect (value may be empty)."""

    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    @classmethod
    def from_json(cls, taint: JsonDict) -> Taint:
        return cls(str(taint.get("key") or ""), str(taint.get("value") or ""), str(taint.get("effect") or ""))

    def as_json(self) -> dict[str, str]:
        body = {"key": self.key, "effect": self.effect}
        if self.value:
            body["value"] = self.value
        return body


def tolerates(toleration: JsonDict, taint: Taint) -> bool:
    """Kubernetes' Toleration.ToleratesTaint.

    An empty effect matches every effect and an empty key every key; operator Exists matches any
    value, operator Equal (also when empty) compares the value; any other operator matches nothing.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    if key and key != taint.key:
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    return operator == "Equal" and (toleration.get("value") or "") == taint.value


def driver_version(labels: dict[str, str], annotations: dict[str, str]) -> str:
    """The NVIDIA driver version a node advertises (GFD labels, then annotation), or ""."""
    if labels.get(DRIVER_FULL_LABEL):
        return labels[DRIVER_FULL_LABEL]
    for names in DRIVER_PART_LABELS:
        parts = [labels.get(name, "") for name in names]
        if parts[0]:
            return ".".join(part for part in parts if part)
    return annotations.get(DRIVER_ANNOTATION, "") or ""


@dataclass(frozen=True)
class NodeInfo:
    """The facts verify needs about one node, read from one list call."""

    name: str
    labels: dict[str, str]
    annotations: dict[str, str]
    taints: tuple[Taint, ...]
    ready: bool
    ready_reason: str
    ready_message: str
    unschedulable: bool
    gpu_capacity: int
    gpu_allocatable: int
    addresses: tuple[str, ...] = ()  # InternalIP first, then the other status.addresses
    # Every device-plugin resource (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*).
    device_capacity: tuple[tuple[str, int], ...] = ()
    device_allocatable: tuple[tuple[str, int], ...] = ()
    # status.nodeInfo: kubeletVersion, containerRuntimeVersion, kernelVersion, osImage ...
    system: dict[str, str] = field(default_factory=dict, hash=False, compare=False)

    @property
    def hostname(self) -> str:
        return self.labels.get(HOSTNAME_LABEL, self.name)

    @property
    def gpu_labelled(self) -> bool:
        """NFD/GFD/operator labels say this node has NVIDIA GPUs."""
        return (
            self.labels.get(NFD_PCI_LABEL) == "true"
            or self.labels.get(GFD_PRESENT_LABEL) == "true"
            or as_int(self.labels.get(GFD_COUNT_LABEL)) > 0
        )

    @property
    def is_gpu_node(self) -> bool:
        return self.gpu_capacity > 0 or self.gpu_labelled

    @property
    def product_label(self) -> str:
        return self.labels.get(GFD_PRODUCT_LABEL, "")

    @property
    def memory_label_mib(self) -> int:
        return as_int(self.labels.get(GFD_MEMORY_LABEL))

    @property
    def driver_version(self) -> str:
        """Driver version from GFD labels (or annotation), "" when the node advertises none."""
        return driver_version(self.labels, self.annotations)


def as_int(value: object) -> int:
    """An integer label or quantity ("4"), 0 when absent or not a plain integer."""
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
    taints = tuple(Taint.from_json(taint) for taint in dig(node, "spec", "taints", default=[]))
    return NodeInfo(
        name=name_of(node),
        labels=dict(labels_of(node)),
        annotations=dict(dig(node, "metadata", "annotations", default={})),
        taints=taints,
        ready=ready,
        ready_reason=reason,
        ready_message=message,
        unschedulable=bool(dig(node, "spec", "unschedulable", default=False)),
        gpu_capacity=as_int(dig(node, "status", "capacity", default={}).get(GPU_RESOURCE)),
        gpu_allocatable=as_int(dig(node, "status", "allocatable", default={}).get(GPU_RESOURCE)),
        addresses=_addresses(node),
        device_capacity=_devices(dig(node, "status", "capacity", default={})),
        device_allocatable=_devices(dig(node, "status", "allocatable", default={})),
        system={str(k): str(v) for k, v in dig(node, "status", "nodeInfo", default={}).items()},
    )


def _devices(resources: JsonDict) -> tuple[tuple[str, int], ...]:
    return tuple(
        sorted(
            (str(name), as_int(value))
            for name, value in resources.items()
            if str(name).startswith("nvidia.com/")
        )
    )


def _addresses(node: JsonDict) -> tuple[str, ...]:
    entries = dig(node, "status", "addresses", default=[]) or []
    ordered = sorted(entries, key=lambda entry: entry.get("type") != "InternalIP")
    return tuple(str(entry.get("address")) for entry in ordered if entry.get("address"))


def list_nodes(api_client: ApiClient) -> list[NodeInfo]:
    """Every node of the cluster (one request per 500 nodes)."""
    with api_call("list", "nodes"):
        return [node_from_json(item) for item in latest_items(api_client, "/api/v1/nodes")]
