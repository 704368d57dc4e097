"""A small kube-scheduler: the default filter plugins that matter for GPU nodes, in their real
order (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit), and the real
FailedScheduling message shape."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import kubelet
from gpuctl.sim.runtime.dra import SLICES
from gpuctl.sim.runtime.dra_claims import Allocator, generate_claims
from gpuctl.sim.runtime.objects import GPU, UNSCHEDULABLE_TAINT
from gpuctl.sim.runtime.predicates import (
    affinity_node_names,
    allocatable_devices,
    matches_node_selection,
    pod_device_requests,
    pod_other_extended_requests,
    tolerates,
    untolerated_taint,
)
from gpuctl.sim.runtime.store import Change, rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
INSUFFICIENT_GPU = f"Insufficient {GPU}"


def watch(cluster: ClusterState) -> None:
    """What the scheduler reads: pods to place, the nodes to place them on, DRA's devices."""
    cluster.store.watch("pods", lambda change: _pod_changed(cluster, change))
    cluster.store.watch("nodes", lambda _: cluster.schedule_soon())
    cluster.store.watch(SLICES, lambda _: cluster.schedule_soon())


def _pod_changed(cluster: ClusterState, change: Change) -> None:
    meta = change.obj["metadata"]
    if change.kind == "DELETED":
        cluster.unscheduled.pop(meta["uid"], None)
        cluster.last_failed_scheduling.pop(meta["uid"], None)
    elif change.kind == "ADDED" and not change.obj.get("spec", {}).get("nodeName"):
        cluster.unscheduled[meta["uid"]] = (meta["namespace"], meta["name"])
        cluster.schedule_soon()


class _Capacity:
    """Devices in use (per node and resource) and pods per node, from the kubelet's allocations;
    each node's counts are read when the pass first looks at that node (a pod pinned to one node
    looks at one), the pods per node when a pod has several nodes to choose from."""

    def __init__(self, cluster: ClusterState) -> None:
        self.cluster = cluster
        self.claims = Allocator(cluster) if cluster.scenario.uses_dra else None
        self._gpus_used: Counter[str] = Counter()
        self._devices_used: Counter[tuple[str, str]] = Counter()
        self._loaded: set[str] = set()
        self._pods: Counter[str] | None = None

    def _load(self, node_name: str) -> None:
        if node_name in self._loaded:
            return
        self._loaded.add(node_name)
        for devices in self.cluster.gpu_holders.get(node_name, {}).values():
            self._gpus_used[node_name] += len(devices)
            for device in devices:
                self._devices_used[(node_name, device.resource)] += 1

    def gpus_used(self, node_name: str) -> int:
        self._load(node_name)
        return self._gpus_used[node_name]

    def devices_used(self, node_name: str, resource: str) -> int:
        self._load(node_name)
        return self._devices_used[(node_name, resource)]

    def pods(self, node_name: str) -> int:
        if self._pods is None:
            self._pods = Counter(runtime.node for runtime in self.cluster.runtime.values() if runtime.node)
        return self._pods[node_name]

    def take(self, node_name: str, pod: Obj) -> None:
        self._load(node_name)
        for name, count in pod_device_requests(pod).items():
            self._gpus_used[node_name] += count
            self._devices_used[(node_name, name)] += count
        if self._pods is not None:
            self._pods[node_name] += 1


def filter_reason(pod: Obj, node: Obj, capacity: _Capacity) -> str | None:
    """Why `pod` cannot go to `node` (the first failing filter), or None if it fits."""
    spec = pod.get("spec", {})
    tolerations = spec.get("tolerations") or []
    if node.get("spec", {}).get("unschedulable") and not any(
        tolerates(t, UNSCHEDULABLE_TAINT) for t in tolerations
    ):
        return "node(s) were unschedulable"
    taint = untolerated_taint(node, tolerations)
    if taint is not None:
        return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value') or ''}}}"
    if not matches_node_selection(spec, node):
        return "node(s) didn't match Pod's node affinity/selector"
    why, extended = _claims_reason(pod, node, capacity)
    if why:
        return why
    return _resources_reason(pod, node, capacity, extended)


def _resources_reason(pod: Obj, node: Obj, capacity: _Capacity, extended: dict[str, int]) -> str | None:
    """The first extended resource the node lacks for `pod` (those in `extended` are claims')."""
    for name, wanted in sorted(pod_device_requests(pod).items()):
        if name in extended:
            continue
        used = capacity.devices_used(node["metadata"]["name"], name)
        if allocatable_devices(node, name) - used < wanted:
            return f"Insufficient {name}"
    for name, wanted in sorted(pod_other_extended_requests(pod).items()):  # a NIC's rdma/ib, efa
        if allocatable_devices(node, name) < wanted:
            return f"Insufficient {name}"
    return None


def _claims_reason(pod: Obj, node: Obj, capacity: _Capacity) -> tuple[str | None, dict[str, int]]:
    """The DynamicResources filter: why the pod's claims do not fit on `node` (None: they do), and
    on Kubernetes 1.37 the extended resource requests a DeviceClass maps there (a special claim
    the scheduler creates at bind serves them, so NodeResourcesFit leaves them out)."""
    claims = capacity.claims
    if claims is None:
        return None, {}
    extended = claims.extended_requests(pod, node)
    why = claims.reason(pod, node["metadata"]["name"])
    if why is None and extended:
        why = claims.extended_reason(pod, node, extended)
    return why, extended


def failed_scheduling_message(reasons: Counter[str], total: int) -> str:
    if total == 0:
        return "no nodes available to schedule pods"
    parts = sorted(f"{count} {reason}" for reason, count in reasons.items())
    victims = sum(count for reason, count in reasons.items() if reason.startswith("Insufficient "))
    preemption = []
    if victims:
        preemption.append(f"{victims} No preemption victims found for incoming pod")
    if total - victims:
        preemption.append(f"{total - victims} Preemption is not helpful for scheduling")
    return (
        f"0/{total} nodes are available: {', '.join(parts)}. "
        f"preemption: 0/{total} nodes are available: {', '.join(sorted(preemption))}."
    )


def _candidates(pod: Obj, nodes: dict[str, Obj], by_hostname: dict[str, list[Obj]]) -> list[Obj]:
    spec = pod.get("spec", {})
    pinned = affinity_node_names(spec)
    if pinned is not None:
        return [nodes[name] for name in sorted(pinned) if name in nodes]
    hostname = (spec.get("nodeSelector") or {}).get("kubernetes.io/hostname")
    if hostname is not None:
        return by_hostname.get(hostname, [])
    return list(nodes.values())


def run_pass(cluster: ClusterState) -> None:
    """Try to place every unscheduled pod; called debounced after pods/nodes change."""
    if not cluster.unscheduled:
        return
    store = cluster.store
    nodes, by_hostname = _node_index(cluster)
    capacity = _Capacity(cluster)
    for uid, (namespace, name) in list(cluster.unscheduled.items()):
        pod = store.get("pods", namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid or pod["spec"].get("nodeName"):
            cluster.unscheduled.pop(uid, None)
            continue
        if pod["metadata"].get("deletionTimestamp"):
            continue
        if capacity.claims is not None and pod["spec"].get("resourceClaims"):
            complaint = generate_claims(cluster, pod)
            pod = store.get("pods", namespace, name) or pod
            if complaint:
                cluster.record_event(
                    pod, "FailedResourceClaimCreation", complaint, warning=True, component="resource_claim"
                )
        chosen = _pick(pod, _candidates(pod, nodes, by_hostname), capacity)
        if chosen is None:
            _mark_unschedulable(cluster, pod, nodes, capacity)
            continue
        cluster.unscheduled.pop(uid, None)
        capacity.take(chosen["metadata"]["name"], pod)
        if capacity.claims is not None:
            capacity.claims.reserve(pod, chosen["metadata"]["name"])
            pod = capacity.claims.reserve_extended(pod, chosen)
        _bind(cluster, pod, chosen["metadata"]["name"])


# The scheduler's view of the nodes (by name, by hostname label), rebuilt only when a node changed:
# thousands of pods are placed in passes a few milliseconds apart while the nodes stay the same.
_NodeIndex = tuple[dict[str, Obj], dict[str, list[Obj]]]


def _node_index(cluster: ClusterState) -> _NodeIndex:
    generation = cluster.store.generation("nodes")
    cached = cluster.scheduler_nodes
    if cached is not None and cached[0] == generation:
        index: _NodeIndex = cached[1]
        return index
    nodes = {node["metadata"]["name"]: node for node in cluster.store.items("nodes")}
    by_hostname: dict[str, list[Obj]] = {}
    for node in nodes.values():
        hostname = (node["metadata"].get("labels") or {}).get("kubernetes.io/hostname")
        by_hostname.setdefault(hostname or "", []).append(node)
    cluster.scheduler_nodes = (generation, (nodes, by_hostname))
    return nodes, by_hostname


def _pick(pod: Obj, candidates: list[Obj], capacity: _Capacity) -> Obj | None:
    feasible = [node for node in candidates if filter_reason(pod, node, capacity) is None]
    if len(feasible) <= 1:
        return feasible[0] if feasible else None
    # Spread like the default LeastAllocated score: fewest GPUs in use, then fewest pods.
    return min(
        feasible,
        key=lambda n: (capacity.gpus_used(n["metadata"]["name"]), capacity.pods(n["metadata"]["name"])),
    )


def _mark_unschedulable(cluster: ClusterState, pod: Obj, nodes: dict[str, Obj], capacity: _Capacity) -> None:
    reasons: Counter[str] = Counter()
    for node in nodes.values():
        reason = filter_reason(pod, node, capacity)
        if reason is not None:
            reasons[reason] += 1
    message = failed_scheduling_message(reasons, len(nodes))
    uid = pod["metadata"]["uid"]
    if cluster.last_failed_scheduling.get(uid) == message:
        return
    cluster.last_failed_scheduling[uid] = message
    updated = dict(pod)
    updated["status"] = dict(
        pod.get("status") or {},
        phase="Pending",
        conditions=[
            {
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": None,
                "lastTransitionTime": rfc3339(),
                "reason": "Unschedulable",
                "message": message,
            }
        ],
    )
    updated["status"].setdefault("qosClass", "BestEffort")
    cluster.store.put("pods", updated)
    cluster.record_event(updated, "FailedScheduling", message, warning=True, component="default-scheduler")


def _bind(cluster: ClusterState, pod: Obj, node_name: str) -> None:
    """Bind and hand over to the kubelet, which writes the bound pod once (one watch event)."""
    updated = dict(pod)
    updated["spec"] = dict(pod["spec"], nodeName=node_name)
    updated["status"] = dict(
        pod.get("status") or {},
        phase="Pending",
        conditions=[
            {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": rfc3339()}
        ],
    )
    cluster.last_failed_scheduling.pop(pod["metadata"]["uid"], None)
    meta = pod["metadata"]
    cluster.record_event(
        updated,
        "Scheduled",
        f"Successfully assigned {meta['namespace']}/{meta['name']} to {node_name}",
        component="default-scheduler",
    )
    kubelet.admit(cluster, updated)
