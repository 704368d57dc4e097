"""Pod status as the kubelet writes it: conditions, container statuses, GPU release."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import containers, dra_claims
from gpuctl.sim.runtime.predicates import is_terminated
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]


def is_device_plugin(pod: Obj) -> bool:
    return any(containers.is_device_plugin_container(c) for c in pod["spec"].get("containers") or [])


def node_ready(node: Obj | None) -> bool:
    if node is None:
        return False
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def put_status(cluster: ClusterState, pod: Obj, **status: Any) -> Obj:
    updated = dict(pod)
    updated["status"] = dict(pod.get("status") or {}, **status)
    return cluster.store.put("pods", updated)


def condition(kind: str, status: bool, reason: str = "") -> Obj:
    condition = {
        "type": kind,
        "status": "True" if status else "False",
        "lastProbeTime": None,
        "lastTransitionTime": rfc3339(),
    }
    if reason:
        condition["reason"] = reason
    return condition


def conditions(ready: bool, reason: str = "", initialized: bool = True) -> list[Obj]:
    return [
        condition("PodReadyToStartContainers", initialized),
        condition("Initialized", True),
        condition("Ready", ready, reason),
        condition("ContainersReady", ready, reason),
        condition("PodScheduled", True),
    ]


def container_id(pod: Obj, name: str, restarts: int = 0) -> str:
    digest = hashlib.sha256(f"{pod['metadata']['uid']}/{name}/{restarts}".encode()).hexdigest()
    return f"containerd://{digest}"


def status_entry(pod: Obj, container: Obj, state: Obj, ready: bool, restarts: int = 0) -> Obj:
    image = container.get("image", "")
    entry = {
        "name": container.get("name", ""),
        "state": state,
        "lastState": {},
        "ready": ready,
        "restartCount": restarts,
        "image": image,
        "imageID": "",
        "started": "running" in state,
    }
    if "waiting" not in state:
        full = containers.normalized_image(image)
        entry["imageID"] = f"{full.split(':')[0]}@sha256:{hashlib.sha256(full.encode()).hexdigest()}"
        entry["containerID"] = container_id(pod, container.get("name", ""), restarts)
    return entry


def current_pod(cluster: ClusterState, namespace: str, name: str, uid: str) -> Obj | None:
    pod = cluster.store.get("pods", namespace, name)
    if pod is None or pod["metadata"]["uid"] != uid or is_terminated(pod):
        return None
    return pod


def release_gpus(cluster: ClusterState, pod: Obj) -> None:
    """The pod ended: its devices are free, and (as kube-controller-manager does at once, not when
    the pod is deleted) the claims generated for it are deleted."""
    cluster.set_gpus(pod["metadata"]["uid"], pod["spec"].get("nodeName", ""), [])
    if cluster.scenario.uses_dra:
        dra_claims.pod_removed(cluster, pod)
