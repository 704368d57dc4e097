"""meta.k8s.io/v1 Table responses: the columns kubectl prints for `kubectl get`."""

from __future__ import annotations

import calendar
import time
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
Column = tuple[str, str, int]  # name, type, priority


def _column(name: str, kind: str = "string", priority: int = 0, fmt: str = "") -> Obj:
    return {"name": name, "type": kind, "format": fmt, "description": name, "priority": priority}


def age(timestamp: str | None) -> str:
    """kubectl's short human duration (duration.HumanDuration)."""
    if not timestamp:
        return "<unknown>"
    seconds = int(time.time() - calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ")))
    seconds = max(seconds, 0)
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 48:
        return f"{hours}h"
    return f"{hours // 24}d"


def _node_row(node: Obj) -> list[Any]:
    conditions = node.get("status", {}).get("conditions") or []
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    status = "Ready" if ready and ready.get("status") == "True" else "NotReady"
    if ready is None:
        status = "Unknown"
    if node.get("spec", {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = node["metadata"].get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
    info = node.get("status", {}).get("nodeInfo") or {}
    addresses = {a.get("type"): a.get("address") for a in node.get("status", {}).get("addresses") or []}
    return [
        node["metadata"]["name"],
        status,
        ",".join(roles) or "<none>",
        age(node["metadata"].get("creationTimestamp")),
        info.get("kubeletVersion", ""),
        addresses.get("InternalIP", "<none>"),
        addresses.get("ExternalIP", "<none>"),
        info.get("osImage", ""),
        info.get("kernelVersion", ""),
        info.get("containerRuntimeVersion", ""),
    ]


def _init_reason(pod: Obj) -> str:
    """kubectl's Init:N/M, Init:<reason> while an init container has not completed; "" after."""
    statuses = (pod.get("status") or {}).get("initContainerStatuses") or []
    total = len(pod.get("spec", {}).get("initContainers") or [])
    for index, container in enumerate(statuses):
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting") or {}
        if terminated and terminated.get("exitCode") == 0:
            continue
        if terminated:
            return "Init:" + (terminated.get("reason") or f"ExitCode:{terminated.get('exitCode')}")
        if waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return "Init:" + str(waiting["reason"])
        return f"Init:{index}/{total}"
    return ""


def _pod_status_reason(pod: Obj) -> str:
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    if (initializing := _init_reason(pod)) and not pod["metadata"].get("deletionTimestamp"):
        return initializing
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state:
            terminated = state["terminated"]
            reason = terminated.get("reason") or f"ExitCode:{terminated.get('exitCode')}"
    if pod["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return str(reason)


def _pod_row(pod: Obj) -> list[Any]:
    status = pod.get("status") or {}
    containers = pod.get("spec", {}).get("containers") or []
    statuses = status.get("containerStatuses") or []
    ready = sum(1 for s in statuses if s.get("ready"))
    restarts = sum(
        int(s.get("restartCount", 0)) for s in statuses + (status.get("initContainerStatuses") or [])
    )
    return [
        pod["metadata"]["name"],
        f"{ready}/{len(containers)}",
        _pod_status_reason(pod),
        restarts,
        age(pod["metadata"].get("creationTimestamp")),
        status.get("podIP") or "<none>",
        pod.get("spec", {}).get("nodeName") or "<none>",
        "<none>",
        "<none>",
    ]


def _daemonset_row(daemonset: Obj) -> list[Any]:
    status = daemonset.get("status") or {}
    template = daemonset.get("spec", {}).get("template", {}).get("spec", {})
    selector = template.get("nodeSelector") or {}
    containers = template.get("containers") or []
    return [
        daemonset["metadata"]["name"],
        status.get("desiredNumberScheduled", 0),
        status.get("currentNumberScheduled", 0),
        status.get("numberReady", 0),
        status.get("updatedNumberScheduled", 0),
        status.get("numberAvailable", 0),
        ",".join(f"{k}={v}" for k, v in selector.items()) or "<none>",
        age(daemonset["metadata"].get("creationTimestamp")),
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
    ]


def _event_row(event: Obj) -> list[Any]:
    involved = event.get("involvedObject") or {}
    return [
        age(event.get("lastTimestamp") or event["metadata"].get("creationTimestamp")),
        event.get("type", ""),
        event.get("reason", ""),
        f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
        event.get("message", ""),
    ]


def _resource_slice_row(item: Obj) -> list[Any]:
    spec = item.get("spec") or {}
    node = spec.get("nodeName") or ""
    return [
        item["metadata"]["name"],
        node,
        spec.get("driver", ""),
        (spec.get("pool") or {}).get("name", ""),
        age(item["metadata"].get("creationTimestamp")),
    ]


def _resource_claim_row(claim: Obj) -> list[Any]:
    """STATE as kubectl shows it: pending, allocated, allocated,reserved (deleted, when deleting)."""
    status = claim.get("status") or {}
    states = [
        state
        for state, on in (("allocated", status.get("allocation")), ("reserved", status.get("reservedFor")))
        if on
    ]
    if claim["metadata"].get("deletionTimestamp"):
        states.append("deleted")
    return [
        claim["metadata"]["name"],
        ",".join(states) or "pending",
        age(claim["metadata"].get("creationTimestamp")),
    ]


def _generic_row(obj: Obj) -> list[Any]:
    return [obj["metadata"]["name"], age(obj["metadata"].get("creationTimestamp"))]


_COLUMNS: dict[str, tuple[list[Obj], Callable[[Obj], list[Any]]]] = {
    "Node": (
        [
            _column("Name", fmt="name"),
            _column("Status"),
            _column("Roles"),
            _column("Age"),
            _column("Version"),
            _column("Internal-IP", priority=1),
            _column("External-IP", priority=1),
            _column("OS-Image", priority=1),
            _column("Kernel-Version", priority=1),
            _column("Container-Runtime", priority=1),
        ],
        _node_row,
    ),
    "Pod": (
        [
            _column("Name", fmt="name"),
            _column("Ready"),
            _column("Status"),
            _column("Restarts", "string"),
            _column("Age"),
            _column("IP", priority=1),
            _column("Node", priority=1),
            _column("Nominated Node", priority=1),
            _column("Readiness Gates", priority=1),
        ],
        _pod_row,
    ),
    "DaemonSet": (
        [
            _column("Name", fmt="name"),
            _column("Desired", "integer"),
            _column("Current", "integer"),
            _column("Ready", "integer"),
            _column("Up-to-date", "integer"),
            _column("Available", "integer"),
            _column("Node Selector"),
            _column("Age"),
            _column("Containers", priority=1),
            _column("Images", priority=1),
        ],
        _daemonset_row,
    ),
    "ResourceSlice": (
        [_column("Name", fmt="name"), _column("Node"), _column("Driver"), _column("Pool"), _column("Age")],
        _resource_slice_row,
    ),
    "ResourceClaim": ([_column("Name", fmt="name"), _column("State"), _column("Age")], _resource_claim_row),
    "CustomResourceDefinition": (
        [_column("Name", fmt="name"), _column("Created At", "date")],
        lambda crd: [crd["metadata"]["name"], crd["metadata"].get("creationTimestamp")],
    ),
    "Event": (
        [
            _column("Last Seen"),
            _column("Type"),
            _column("Reason"),
            _column("Object"),
            _column("Message"),
        ],
        _event_row,
    ),
}


def table(
    kind: str,
    items: list[Obj],
    resource_version: str,
    include_object: str,
    custom: tuple[list[Obj], Callable[[Obj], list[Any]]] | None = None,
) -> Obj:
    """`custom`: the columns and row builder of a CRD's additionalPrinterColumns."""
    generic = ([_column("Name", fmt="name"), _column("Age")], _generic_row)
    columns, row = custom or _COLUMNS.get(kind, generic)
    rows = []
    for item in items:
        entry: Obj = {"cells": row(item)}
        if include_object == "Object":
            entry["object"] = item
        elif include_object != "None":
            entry["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": item["metadata"],
            }
        rows.append(entry)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": columns,
        "rows": rows,
    }
