"""The Deployment and ReplicaSet controllers, kept small but shaped like the real ones: a Deployment
owns one ReplicaSet per pod template (named after the template's pod-template-hash, older ones
scaled to 0), a ReplicaSet keeps `replicas` live pods (ownerReferences, the hash label), so a pod
evicted or deleted is recreated and the scheduler places it on a node that takes pods. Deleting
an owner deletes what it owned (the garbage collector's part)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import defaults, kubelet
from gpuctl.sim.runtime.disruption import controller_of, is_ready
from gpuctl.sim.runtime.objects import generated_name, short_hash
from gpuctl.sim.runtime.predicates import is_terminated
from gpuctl.sim.runtime.store import Change, clone, rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
DEPLOYMENTS = "deployments.apps"
REPLICA_SETS = "replicasets.apps"
PASS = "replicasets"
HASH_LABEL = "pod-template-hash"


def watch(cluster: ClusterState) -> None:
    """What the controllers read: Deployments and ReplicaSets (not the status they write), and the
    pods ReplicaSets own."""
    cluster.store.watch(DEPLOYMENTS, lambda change: _spec_changed(cluster, change))
    cluster.store.watch(REPLICA_SETS, lambda change: _spec_changed(cluster, change))
    cluster.store.watch("pods", lambda change: _pod_changed(cluster, change))


def _spec_changed(cluster: ClusterState, change: Change) -> None:
    previous = change.previous
    if change.kind != "MODIFIED" or previous is None or previous.get("spec") != change.obj.get("spec"):
        cluster.controller_soon(PASS)
    elif previous.get("status") != change.obj.get("status") and change.resource == REPLICA_SETS:
        cluster.controller_soon(PASS)  # a ReplicaSet's counts make its Deployment's status


def _pod_changed(cluster: ClusterState, change: Change) -> None:
    if _owner_kind(change.obj) == "ReplicaSet" or (
        change.previous is not None and _owner_kind(change.previous) == "ReplicaSet"
    ):
        cluster.controller_soon(PASS)


def _owner_kind(obj: Obj) -> str:
    owner = controller_of(obj)
    return str(owner.get("kind", "")) if owner is not None else ""


def reconcile(cluster: ClusterState) -> None:
    deployments = cluster.store.items(DEPLOYMENTS)
    for deployment in deployments:
        _reconcile_deployment(cluster, deployment)
    _collect_orphans(cluster, REPLICA_SETS, {d["metadata"]["uid"] for d in deployments}, "Deployment")
    replica_sets = cluster.store.items(REPLICA_SETS)
    owned = _owned_pods(cluster)
    for replica_set in replica_sets:
        _reconcile_replica_set(cluster, replica_set, owned.get(replica_set["metadata"]["uid"], []))
    _collect_orphans(cluster, "pods", {r["metadata"]["uid"] for r in replica_sets}, "ReplicaSet")
    for deployment in cluster.store.items(DEPLOYMENTS):
        _deployment_status(cluster, deployment)


def _collect_orphans(cluster: ClusterState, resource: str, live: set[str], owner_kind: str) -> None:
    """The garbage collector: what a deleted owner controlled goes too."""
    for obj in cluster.store.items(resource):
        owner = controller_of(obj)
        if owner is None or owner.get("kind") != owner_kind or owner.get("uid") in live:
            continue
        if resource == "pods":
            kubelet.delete_pod(cluster, obj, None)
        else:
            cluster.store.remove(resource, obj["metadata"]["namespace"], obj["metadata"]["name"])


def _owner_reference(owner: Obj, kind: str) -> Obj:
    meta = owner["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _replicas(obj: Obj) -> int:
    return int((obj.get("spec") or {}).get("replicas", 1))


# -- Deployments -------------------------------------------------------------------------------


def _replica_sets_of(cluster: ClusterState, deployment: Obj) -> list[Obj]:
    uid = deployment["metadata"]["uid"]
    namespace = deployment["metadata"]["namespace"]
    replica_sets = cluster.store.items(REPLICA_SETS, namespace)
    return [rs for rs in replica_sets if (controller_of(rs) or {}).get("uid") == uid]


def _reconcile_deployment(cluster: ClusterState, deployment: Obj) -> None:
    template = deployment.get("spec", {}).get("template") or {}
    template_hash = short_hash(json.dumps(template, sort_keys=True))
    current_name = f"{deployment['metadata']['name']}-{template_hash}"
    found = False
    for replica_set in _replica_sets_of(cluster, deployment):
        wanted = _replicas(deployment) if replica_set["metadata"]["name"] == current_name else 0
        found = found or replica_set["metadata"]["name"] == current_name
        if _replicas(replica_set) != wanted:
            _scale(cluster, deployment, replica_set, wanted)
    if not found:
        _create_replica_set(cluster, deployment, current_name, template_hash)


def _scale(cluster: ClusterState, deployment: Obj, replica_set: Obj, replicas: int) -> None:
    updated = dict(replica_set, spec=dict(replica_set["spec"], replicas=replicas))
    updated["metadata"] = dict(
        replica_set["metadata"], generation=int(replica_set["metadata"].get("generation", 1)) + 1
    )
    cluster.store.put(REPLICA_SETS, updated)
    direction = "up" if replicas > _replicas(replica_set) else "down"
    cluster.record_event(
        deployment,
        "ScalingReplicaSet",
        f"Scaled {direction} replica set {replica_set['metadata']['name']} from {_replicas(replica_set)} "
        f"to {replicas}",
        component="deployment-controller",
    )


def _create_replica_set(cluster: ClusterState, deployment: Obj, name: str, template_hash: str) -> None:
    spec = deployment.get("spec") or {}
    template = clone(spec.get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = template_hash
    selector = clone(spec.get("selector") or {})
    selector.setdefault("matchLabels", {})[HASH_LABEL] = template_hash
    labels = dict(template["metadata"]["labels"])
    revision = 1 + len(_replica_sets_of(cluster, deployment))
    replica_set = {
        "kind": "ReplicaSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": name,
            "namespace": deployment["metadata"]["namespace"],
            "labels": labels,
            "annotations": {
                "deployment.kubernetes.io/desired-replicas": str(_replicas(deployment)),
                "deployment.kubernetes.io/max-replicas": str(_replicas(deployment) + 1),
                "deployment.kubernetes.io/revision": str(revision),
            },
            "ownerReferences": [_owner_reference(deployment, "Deployment")],
            "generation": 1,
        },
        "spec": {"replicas": _replicas(deployment), "selector": selector, "template": template},
        "status": {"replicas": 0},
    }
    cluster.store.add(REPLICA_SETS, replica_set)
    cluster.record_event(
        deployment,
        "ScalingReplicaSet",
        f"Scaled up replica set {name} from 0 to {_replicas(deployment)}",
        component="deployment-controller",
    )


def _deployment_status(cluster: ClusterState, deployment: Obj) -> None:
    replica_sets = _replica_sets_of(cluster, deployment)
    template_hash = short_hash(json.dumps(deployment.get("spec", {}).get("template") or {}, sort_keys=True))
    newest = [rs for rs in replica_sets if rs["metadata"]["name"].endswith(f"-{template_hash}")]

    def total(key: str, sets: list[Obj]) -> int:
        return sum(int(rs.get("status", {}).get(key, 0)) for rs in sets)

    wanted, available = _replicas(deployment), total("availableReplicas", replica_sets)
    status: Obj = {
        "observedGeneration": deployment["metadata"].get("generation", 1),
        "replicas": total("replicas", replica_sets),
        "updatedReplicas": total("replicas", newest),
        "readyReplicas": total("readyReplicas", replica_sets),
        "availableReplicas": available,
    }
    status = {key: value for key, value in status.items() if value}  # all omitempty
    if wanted > available:
        status["unavailableReplicas"] = wanted - available
    previous = deployment.get("status") or {}
    status["conditions"] = [
        _deployment_condition(
            previous,
            "Available",
            available >= wanted,
            "MinimumReplicasAvailable" if available >= wanted else "MinimumReplicasUnavailable",
            "Deployment has minimum availability."
            if available >= wanted
            else "Deployment does not have minimum availability.",
        ),
        _progressing(previous, newest, wanted),
    ]
    if previous != status:
        cluster.store.put(DEPLOYMENTS, dict(deployment, status=status))


def _progressing(previous: Obj, newest: list[Obj], wanted: int) -> Obj:
    name = newest[0]["metadata"]["name"] if newest else ""
    done = bool(newest) and int(newest[0].get("status", {}).get("availableReplicas", 0)) >= wanted
    reason, words = (
        ("NewReplicaSetAvailable", "has successfully progressed.")
        if done
        else ("ReplicaSetUpdated", "is progressing.")
    )
    return _deployment_condition(previous, "Progressing", True, reason, f'ReplicaSet "{name}" {words}')


def _deployment_condition(previous: Obj, kind: str, status: bool, reason: str, message: str) -> Obj:
    """Times move only when the condition does (status for the transition, reason for the update)."""
    old: Obj = next((c for c in previous.get("conditions") or [] if c.get("type") == kind), {})
    words = "True" if status else "False"
    now = rfc3339()
    same_status = old.get("status") == words
    same_reason = same_status and old.get("reason") == reason and old.get("message") == message
    return {
        "type": kind,
        "status": words,
        "lastUpdateTime": old["lastUpdateTime"] if same_reason else now,
        "lastTransitionTime": old["lastTransitionTime"] if same_status else now,
        "reason": reason,
        "message": message,
    }


# -- ReplicaSets -------------------------------------------------------------------------------


def _owned_pods(cluster: ClusterState) -> dict[str, list[Obj]]:
    owned: dict[str, list[Obj]] = {}
    for pod in cluster.store.items("pods"):
        owner = controller_of(pod)
        if owner is not None and owner.get("kind") == "ReplicaSet":
            owned.setdefault(owner.get("uid", ""), []).append(pod)
    return owned


def _reconcile_replica_set(cluster: ClusterState, replica_set: Obj, pods: list[Obj]) -> None:
    """Keep `replicas` active pods: a deleting or finished pod is replaced at once."""
    active = [pod for pod in pods if not pod["metadata"].get("deletionTimestamp") and not is_terminated(pod)]
    missing = _replicas(replica_set) - len(active)
    for _ in range(missing):
        active.append(_create_pod(cluster, replica_set))
    if missing < 0:
        # The real controller deletes the least settled first: unscheduled, then not ready.
        settled = sorted(active, key=lambda pod: (bool(pod["spec"].get("nodeName")), is_ready(pod)))
        surplus = settled[:-missing]
        for pod in surplus:
            kubelet.delete_pod(cluster, pod, None)
            cluster.record_event(
                replica_set, "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}",
                component="replicaset-controller",
            )  # fmt: skip
        active = [pod for pod in active if pod not in surplus]
    ready = sum(1 for pod in active if is_ready(pod))
    status: Obj = {
        "replicas": len(active),
        "fullyLabeledReplicas": len(active),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": replica_set["metadata"].get("generation", 1),
    }
    status = {key: value for key, value in status.items() if value or key == "replicas"}
    if replica_set.get("status") != status:
        cluster.store.put(REPLICA_SETS, dict(replica_set, status=status))


def _create_pod(cluster: ClusterState, replica_set: Obj) -> Obj:
    meta = replica_set["metadata"]
    template = clone(replica_set["spec"].get("template") or {})
    prefix = f"{meta['name']}-"

    def taken(candidate: str) -> bool:
        return cluster.store.get("pods", meta["namespace"], candidate) is not None

    while (name := generated_name(prefix, taken)) is None:
        pass  # the controller retries a create whose generated name was taken
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": name,
            "generateName": prefix,
            "namespace": meta["namespace"],
            "labels": dict(template.get("metadata", {}).get("labels") or {}),
            "annotations": dict(template.get("metadata", {}).get("annotations") or {}),
            "ownerReferences": [_owner_reference(replica_set, "ReplicaSet")],
        },
        "spec": template.get("spec") or {},
    }
    defaults.apply_pod_defaults(pod)
    created = cluster.store.add("pods", pod)
    cluster.record_event(
        replica_set, "SuccessfulCreate", f"Created pod: {name}", component="replicaset-controller"
    )
    return created
