"""Kubelet failure paths: image pulls (ErrImagePull → ImagePullBackOff), containers that cannot be
created or started (`nodes[].containerFailure`) and activeDeadlineSeconds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.containers import Outcome
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
    from gpuctl.sim.scenario import ContainerFailure

Obj = dict[str, Any]
IMAGE_BACKOFF_SECONDS = 1.0
# The kubelet's back-off between two tries of a pod's sync (10 s, doubling, at most 5 minutes).
RETRY_FIRST_SECONDS = 10.0
RETRY_MAX_SECONDS = 300.0
START_ERROR_EXIT_CODE = 128  # containerd's exit code for a container whose task never started


def injected_failure(cluster: ClusterState, pod: Obj) -> ContainerFailure | None:
    """The node's `containerFailure`, for a workload's pod: a DaemonSet's pods (the device plugin,
    the GPU Operator's operands) still run there, so the node keeps its GPUs and only the pods sent
    to it fail, as where a container needs something the node lacks."""
    failure = cluster.node_spec(pod["spec"]["nodeName"]).container_failure
    owners = pod["metadata"].get("ownerReferences") or []
    if failure is None or any(owner.get("kind") == "DaemonSet" for owner in owners):
        return None
    return failure


def start_error(failure: ContainerFailure) -> Outcome:
    """RunContainerError: containerd created the container, its task failed to start (exit 128)."""
    return Outcome(exit_code=START_ERROR_EXIT_CODE, start_error=failure.message)


def create_failure(cluster: ClusterState, pod: Obj, failure: ContainerFailure, attempt: int = 0) -> None:
    """CreateContainerConfigError / CreateContainerError: no container exists, the pod stays
    Pending with each container waiting on the reason, and the kubelet tries again with back-off
    (a Warning `Failed` event each time)."""
    waiting = {"waiting": {"reason": failure.reason, "message": failure.message}}
    statuses = [status_entry(pod, c, waiting, False) for c in pod["spec"].get("containers") or []]
    if attempt == 0:
        pod = put_status(
            cluster, pod, conditions=conditions(False, "ContainersNotReady"), containerStatuses=statuses
        )
    for container in pod["spec"].get("containers") or []:
        cluster.record_event(
            pod,
            "Failed",
            f"Error: {failure.message}",
            warning=True,
            host=pod["spec"]["nodeName"],
            field_path=f"spec.containers{{{container['name']}}}",
        )
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"]["uid"])
    delay = min(RETRY_FIRST_SECONDS * 2**attempt, RETRY_MAX_SECONDS)
    cluster.engine.at(delay, lambda: _retry_create(cluster, key, failure, attempt + 1))


def _retry_create(
    cluster: ClusterState, key: tuple[str, str, str], failure: ContainerFailure, attempt: int
) -> None:
    pod = current_pod(cluster, *key)
    if pod is not None and not pod["metadata"].get("deletionTimestamp"):
        create_failure(cluster, pod, failure, attempt)


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
    runtime = cluster.runtime.get(uid)
    if runtime is not None:  # the kubelet kills the pod's containers, as for a deletion
        runtime.stop_running(float(pod["spec"].get("terminationGracePeriodSeconds", 30)))
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
