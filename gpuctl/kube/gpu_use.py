"""What the cluster's pods hold of each node's GPUs, as the scheduler counts it: the NVIDIA
resources (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-*) requested by the pods bound to
the node that have not terminated. `status` reports it; `verify` asks only for what is free, so
that proving a node never waits on (or takes from) the workloads running there."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuctl.defaults import GPU_RESOURCE
from gpuctl.kube.client import api_call
from gpuctl.kube.nodes import as_int
from gpuctl.kube.raw import JsonDict, dig, list_items, name_of

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

NVIDIA_PREFIX = "nvidia.com/"
TERMINATED_PHASES = ("Succeeded", "Failed")
# The pods that can hold devices: what the API server filters, so a cluster's finished Jobs are
# not read (kube-scheduler counts the same pods: bound, not terminated).
HOLDING = {"fieldSelector": "status.phase!=Succeeded,status.phase!=Failed"}


@dataclass(frozen=True)
class NodeUse:
    """What the pods bound to one node hold: resource name → count, and who holds it."""

    held: dict[str, int] = field(default_factory=dict)
    pods: tuple[str, ...] = ()  # namespace/name, in the order listed

    def of(self, resource: str) -> int:
        return self.held.get(resource, 0)


def _container_requests(container: JsonDict) -> dict[str, int]:
    resources = container.get("resources") or {}
    # For extended resources a limit alone implies an equal request.
    asked = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
    return {name: as_int(value) for name, value in asked.items() if name.startswith(NVIDIA_PREFIX)}


def pod_requests(pod: JsonDict) -> dict[str, int]:
    """The pod's effective NVIDIA requests, as the scheduler sums them: per resource, the larger of
    the containers' sum and the largest init container. A resource the scheduler served through a
    DRA claim (Kubernetes 1.37 extended resources) is left out: the claim holds those devices."""
    spec = pod.get("spec") or {}
    mapped = dig(pod, "status", "extendedResourceClaimStatus", "requestMappings", default=[]) or []
    served_by_claims = {mapping.get("resourceName") for mapping in mapped}
    total: dict[str, int] = defaultdict(int)
    for container in spec.get("containers") or []:
        for name, count in _container_requests(container).items():
            total[name] += count
    for container in spec.get("initContainers") or []:
        for name, count in _container_requests(container).items():
            total[name] = max(total[name], count)
    return {name: count for name, count in total.items() if count > 0 and name not in served_by_claims}


def pod_gpu_request(pod: JsonDict) -> int:
    """The pod's effective nvidia.com/gpu request (0 where a DRA claim serves it)."""
    return pod_requests(pod).get(GPU_RESOURCE, 0)


def use_by_node(pods: Iterable[JsonDict]) -> dict[str, NodeUse]:
    """Node → what its bound, non-terminated pods hold (nodes whose pods hold nothing left out)."""
    held: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    holders: dict[str, list[str]] = defaultdict(list)
    for pod in pods:
        node = dig(pod, "spec", "nodeName", default="")
        if not node or dig(pod, "status", "phase", default="") in TERMINATED_PHASES:
            continue
        requests = pod_requests(pod)
        if not requests:
            continue
        for name, count in requests.items():
            held[node][name] += count
        holders[node].append(f"{dig(pod, 'metadata', 'namespace', default='')}/{name_of(pod)}")
    return {node: NodeUse(dict(held[node]), tuple(holders[node])) for node in held}


def read_use(api_client: ApiClient) -> dict[str, NodeUse]:
    """What every node's pods hold (one paged list of the pods that can hold devices)."""
    with api_call("list", "pods"):
        return use_by_node(list_items(api_client, "/api/v1/pods", query=HOLDING))
