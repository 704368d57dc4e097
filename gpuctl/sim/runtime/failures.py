"""Kubelet failure paths: image pulls (ErrImagePull → ImagePullBackOff) and activeDeadlineSeconds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.podstatus import (
    conditions,
    container_id,
    current_pod,
    put_status,
    release_gpus,
    status_entry,
)
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
IMAGE_BACKOFF_SECONDS = 1.0


def image_failure(cluster: ClusterState, pod: Obj, container: Obj, reason: str, message: str) -> None:
    image = container.get("image", "")
    host = pod["spec"]["nodeName"]
    field_path = f"spec.containers{{{container['name']}}}"
    statuses = [
        status_entry(pod, c, {"waiting": {"reason": reason, "message": message}}, False)
        if c is container
        else status_entry(pod, c, {"waiting": {"reason": "PodInitializing"}}, False)
        for c in pod["spec"].get("containers") or []
    ]
    pod = put_status(
        cluster, pod, conditions=conditions(False, "ContainersNotReady"), containerStatuses=statuses
    )
    if reason == "InvalidImageName":
        cluster.record_event(pod, "InspectFailed", message, warning=True, host=host, field_path=field_path)
        cluster.record_event(
            pod, "Failed", "Error: InvalidImageName", warning=True, host=host, field_path=field_path
        )
        return
    cluster.record_event(pod, "Pulling", f'Pulling image "{image}"', host=host, field_path=field_path)
    cluster.record_event(
        pod,
        "Failed",
        f'Failed to pull image "{image}": {message}',
        warning=True,
        host=host,
        field_path=field_path,
    )
    cluster.record_event(pod, "Failed", "Error: ErrImagePull", warning=True, host=host, field_path=field_path)
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"]["uid"])
    cluster.engine.at(IMAGE_BACKOFF_SECONDS, lambda: _image_backoff(cluster, key, container["name"], image))


def _image_backoff(cluster: ClusterState, key: tuple[str, str, str], name: str, image: str) -> None:
    pod = current_pod(cluster, *key)
    if pod is None:
        return
    back_off = f'Back-off pulling image "{image}"'
    statuses = [dict(s) for s in pod["status"].get("containerStatuses") or []]
    for status in statuses:
        if status["name"] == name:
            status["state"] = {"waiting": {"reason": "ImagePullBackOff", "message": back_off}}
    pod = put_status(cluster, pod, containerStatuses=statuses)
    common = {"host": pod["spec"]["nodeName"], "field_path": f"spec.containers{{{name}}}"}
    cluster.record_event(pod, "BackOff", back_off, **common)
    cluster.record_event(pod, "Failed", "Error: ImagePullBackOff", warning=True, **common)


def deadline_exceeded(cluster: ClusterState, namespace: str, name: str, uid: str) -> None:
    pod = current_pod(cluster, namespace, name, uid)
    if pod is None:
        return
    message = "Pod was active on the node longer than the specified deadline"
    finished = rfc3339()
    statuses = []
    for container in pod["spec"].get("containers") or []:
        state = {
            "terminated": {
                "exitCode": 137,
                "reason": "Error",
                "startedAt": finished,
                "finishedAt": finished,
                "containerID": container_id(pod, container["name"]),
            }
        }
        statuses.append(status_entry(pod, container, state, False))
    release_gpus(cluster, pod)
    pod = put_status(
        cluster,
        pod,
        phase="Failed",
        reason="DeadlineExceeded",
        message=message,
        conditions=conditions(False, "PodFailed"),
        containerStatuses=statuses,
    )
    cluster.record_event(pod, "DeadlineExceeded", message, warning=True, host=pod["spec"].get("nodeName", ""))
