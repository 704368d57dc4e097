"""The ClusterPolicy status the simulated GPU Operator writes, with the real Operator's states,
condition reasons and messages (controllers/clusterpolicy_controller.go, internal/conditions)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.operator_operands import OPERANDS
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.cluster import Cluster

Obj = dict[str, Any]
CLUSTER_POLICIES = "clusterpolicies.nvidia.com"
DAEMONSETS = "daemonsets.apps"
READY_MESSAGE = "ClusterPolicy is ready as all resources have been successfully reconciled"


def _daemonset_ready(cluster: Cluster, ds: Obj) -> bool:
    """As the Operator judges a DaemonSet: nothing desired, or every desired pod available."""
    current = cluster.store.get(DAEMONSETS, ds["metadata"]["namespace"], ds["metadata"]["name"])
    status = (current or {}).get("status") or {}
    desired = int(status.get("desiredNumberScheduled", 0))
    return desired == 0 or (
        int(status.get("numberAvailable", 0)) >= desired and not status.get("numberUnavailable")
    )


def of(cluster: Cluster, has_nfd: bool, has_gpu_nodes: bool, desired: list[Obj]) -> Obj:
    if not has_nfd:
        return _conditions_ready("NFDLabelsMissing", "No NFD labels found")
    if not has_gpu_nodes:
        return _conditions_ready(
            "NoGPUNodes", "No GPU node found, watching for new nodes to join the cluster."
        )
    names = {op.name: op.state for op in OPERANDS}
    not_ready = [names[ds["metadata"]["name"]] for ds in desired if not _daemonset_ready(cluster, ds)]
    if not not_ready:
        return _conditions_ready("Reconciled", READY_MESSAGE)
    message = f"ClusterPolicy is not ready, states not ready: [{' '.join(not_ready)}]"
    return {
        "state": "notReady",
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "OperandNotReady", "message": message},
            {"type": "Error", "status": "True", "reason": "OperandNotReady", "message": message},
        ],
    }


def _conditions_ready(reason: str, message: str) -> Obj:
    return {
        "state": "ready",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": reason, "message": message},
            {"type": "Error", "status": "False", "reason": "Ready", "message": ""},
        ],
    }


def write(cluster: Cluster, policy: Obj, status: Obj) -> None:
    """Write status.state, .namespace and .conditions; a condition keeps its lastTransitionTime
    while its status stays the same (no write at all when nothing changed)."""
    old = policy.get("status") or {}
    previous = {c.get("type"): c for c in old.get("conditions") or []}
    for condition in status.get("conditions", []):
        before = previous.get(condition["type"]) or {}
        same = before.get("status") == condition["status"]
        condition["lastTransitionTime"] = before.get("lastTransitionTime") if same else rfc3339()
    if status["state"] != "ignored":
        status["namespace"] = cluster.operator.namespace
    if old == status:
        return
    cluster.store.put(CLUSTER_POLICIES, dict(policy, status=status))
