"""The DaemonSet controller: one pod per eligible node (node selection, taints with the
controller's automatic tolerations), template updates, garbage collection, status counts."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import defaults, kubelet
from gpuctl.sim.runtime.objects import generated_name, short_hash
from gpuctl.sim.runtime.predicates import matches_node_selection, untolerated_taint
from gpuctl.sim.runtime.store import Change, clone

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]

# What the real controller adds to every DaemonSet pod (util.AddOrUpdateDaemonPodTolerations).
AUTO_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def watch(cluster: ClusterState) -> None:
    """What the controller reads: nodes, DaemonSets (not their status, which it writes) and the
    pods controllers own (their readiness makes the status counts)."""
    cluster.store.watch("nodes", lambda _: cluster.daemonsets_soon())
    cluster.store.watch("daemonsets.apps", lambda change: _daemonset_changed(cluster, change))
    cluster.store.watch("pods", lambda change: _pod_changed(cluster, change))


def _daemonset_changed(cluster: ClusterState, change: Change) -> None:
    previous = change.previous
    if change.kind != "MODIFIED" or previous is None or previous.get("spec") != change.obj.get("spec"):
        cluster.daemonsets_soon()


def _pod_changed(cluster: ClusterState, change: Change) -> None:
    if owned(change.obj) or (change.previous is not None and owned(change.previous)):
        cluster.daemonsets_soon()


def owned(obj: Obj) -> bool:
    """Whether a controller owns the object (a DaemonSet's pods, a GPU Operator operand's)."""
    return bool(obj["metadata"].get("ownerReferences"))


def pod_tolerations(template_spec: Obj) -> list[Obj]:
    tolerations = list(template_spec.get("tolerations") or [])
    for auto in AUTO_TOLERATIONS:
        if auto not in tolerations:
            tolerations.append(auto)
    return tolerations


def should_run(template_spec: Obj, node: Obj) -> bool:
    if not matches_node_selection(template_spec, node):
        return False
    return untolerated_taint(node, pod_tolerations(template_spec)) is None


def should_continue_running(template_spec: Obj, node: Obj) -> bool:
    """Like the real controller: an untolerated NoSchedule taint only keeps new pods away;
    an untolerated NoExecute taint evicts."""
    if not matches_node_selection(template_spec, node):
        return False
    taints = [t for t in node.get("spec", {}).get("taints") or [] if t.get("effect") == "NoExecute"]
    return untolerated_taint({"spec": {"taints": taints}}, pod_tolerations(template_spec)) is None


def template_hash(daemonset: Obj) -> str:
    return short_hash(json.dumps(daemonset["spec"].get("template", {}), sort_keys=True))


def _owned_pods(cluster: ClusterState) -> dict[str, list[Obj]]:
    owned: dict[str, list[Obj]] = {}
    for pod in cluster.store.items("pods"):
        for owner in pod["metadata"].get("ownerReferences") or []:
            if owner.get("kind") == "DaemonSet" and owner.get("controller"):
                owned.setdefault(owner.get("uid", ""), []).append(pod)
    return owned


def reconcile(cluster: ClusterState) -> None:
    store = cluster.store
    nodes = store.items("nodes")
    owned = _owned_pods(cluster)
    daemonsets = store.items("daemonsets.apps")
    live = {ds["metadata"]["uid"] for ds in daemonsets}
    for uid, pods in owned.items():
        if uid not in live:  # garbage collection of an deleted DaemonSet's pods
            for pod in pods:
                kubelet.delete_pod(cluster, pod, 0)
    for daemonset in daemonsets:
        _reconcile_one(cluster, daemonset, nodes, owned.get(daemonset["metadata"]["uid"], []))


def _reconcile_one(cluster: ClusterState, daemonset: Obj, nodes: list[Obj], pods: list[Obj]) -> None:
    template_spec = daemonset["spec"].get("template", {}).get("spec", {})
    current_hash = template_hash(daemonset)
    eligible = {node["metadata"]["name"] for node in nodes if should_run(template_spec, node)}
    keep = {node["metadata"]["name"] for node in nodes if should_continue_running(template_spec, node)}
    by_node: dict[str, Obj] = {}
    for pod in pods:
        node_name = _target_node(pod)
        stale = pod["metadata"].get("labels", {}).get("controller-revision-hash") != current_hash
        if node_name not in keep or node_name in by_node or stale:
            kubelet.delete_pod(cluster, pod, 0)
        else:
            by_node[node_name] = pod
    for node_name in sorted(eligible - set(by_node)):
        by_node[node_name] = _create_pod(cluster, daemonset, node_name, current_hash)
    _update_status(cluster, daemonset, eligible, by_node)


def _target_node(pod: Obj) -> str:
    if pod["spec"].get("nodeName"):
        return str(pod["spec"]["nodeName"])
    affinity = pod["spec"].get("affinity", {}).get("nodeAffinity", {})
    terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
    for term in terms:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""


def _pod_name(cluster: ClusterState, meta: Obj) -> str:
    def taken(name: str) -> bool:
        return cluster.store.get("pods", meta["namespace"], name) is not None

    # The controller retries a create that found every generated name taken; so does this.
    while (name := generated_name(f"{meta['name']}-", taken)) is None:
        pass
    return name


def _create_pod(cluster: ClusterState, daemonset: Obj, node_name: str, revision: str) -> Obj:
    meta = daemonset["metadata"]
    template = clone(daemonset["spec"].get("template", {}))
    labels = dict(template.get("metadata", {}).get("labels") or {})
    labels.update(
        {"controller-revision-hash": revision, "pod-template-generation": str(meta.get("generation", 1))}
    )
    spec = template.get("spec", {})
    spec["tolerations"] = pod_tolerations(spec)
    spec["affinity"] = dict(spec.get("affinity") or {})
    spec["affinity"]["nodeAffinity"] = {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
            ]
        }
    }
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": _pod_name(cluster, meta),
            "generateName": f"{meta['name']}-",
            "namespace": meta["namespace"],
            "labels": labels,
            "annotations": dict(template.get("metadata", {}).get("annotations") or {}),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "DaemonSet",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": spec,
    }
    defaults.apply_pod_defaults(pod)
    created = cluster.store.add("pods", pod, cluster.created_at if cluster.settling else None)
    cluster.record_event(
        daemonset,
        "SuccessfulCreate",
        f"Created pod: {pod['metadata']['name']}",
        component="daemonset-controller",
    )
    return created


def _update_status(
    cluster: ClusterState, daemonset: Obj, eligible: set[str], by_node: dict[str, Obj]
) -> None:
    """Counted like the real controller: a pod kept on a node the DaemonSet no longer wants (a
    NoSchedule taint added later) is misscheduled, not current."""
    scheduled = [pod for node_name, pod in by_node.items() if node_name in eligible]
    ready = sum(1 for pod in scheduled if _pod_ready(pod))
    status: Obj = {
        "currentNumberScheduled": len(scheduled),
        "desiredNumberScheduled": len(eligible),
        "numberMisscheduled": len(by_node) - len(scheduled),
        "numberReady": ready,
        "numberAvailable": ready,
        "updatedNumberScheduled": len(scheduled),
        "observedGeneration": daemonset["metadata"].get("generation", 1),
    }
    if len(eligible) - ready > 0:
        status["numberUnavailable"] = len(eligible) - ready
    if daemonset.get("status") == status:
        return
    updated = dict(daemonset)
    updated["status"] = status
    cluster.store.put("daemonsets.apps", updated)


def _pod_ready(pod: Obj) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
