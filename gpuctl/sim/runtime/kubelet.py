"""A small kubelet: admits bound pods (GPU allocation), starts containers after podStartSeconds,
reports container states, events and logs, runs the device plugin, deletes pods."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import containers, dra, dra_claims, plugin_runtime, sandbox, termination
from gpuctl.sim.runtime.containers import FOREVER, Outcome
from gpuctl.sim.runtime.failures import (
    create_failure,
    deadline_exceeded,
    image_failure,
    injected_failure,
    start_error,
)
from gpuctl.sim.runtime.objects import node_address
from gpuctl.sim.runtime.podstatus import (
    conditions,
    container_id,
    current_pod,
    is_device_plugin,
    node_ready,
    put_status,
    release_gpus,
    status_entry,
)
from gpuctl.sim.runtime.store import Change, rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState
    from gpuctl.sim.scenario import ContainerFailure

Obj = dict[str, Any]
GRACE_CAP_SECONDS = 1.0


# -- what the kubelet watches -----------------------------------------------------------------


def watch(cluster: ClusterState) -> None:
    """Pods bound to a node (by the API or the scheduler) are admitted; removed ones cleaned up;
    a node cordoned or uncordoned gets the kubelet's Event saying so."""
    cluster.store.watch("pods", lambda change: _pod_changed(cluster, change))
    cluster.store.watch("nodes", lambda change: _node_changed(cluster, change))


def _node_changed(cluster: ClusterState, change: Change) -> None:
    """The kubelet's NodeNotSchedulable / NodeSchedulable Event when spec.unschedulable flips
    (pkg/kubelet/kubelet_node_status.go, recordNodeSchedulableEvent: "Node %s status is now: %s")."""
    if change.kind != "MODIFIED" or change.previous is None:
        return
    before = bool((change.previous.get("spec") or {}).get("unschedulable"))
    now = bool((change.obj.get("spec") or {}).get("unschedulable"))
    if before == now:
        return
    name = change.obj["metadata"]["name"]
    reason = "NodeNotSchedulable" if now else "NodeSchedulable"
    cluster.record_event(change.obj, reason, f"Node {name} status is now: {reason}", host=name)


def _pod_changed(cluster: ClusterState, change: Change) -> None:
    pod, previous = change.obj, change.previous
    if change.kind == "DELETED":
        _cleanup(cluster, previous or pod)
        return
    node_name = pod.get("spec", {}).get("nodeName")
    newly_bound = previous is None or not previous.get("spec", {}).get("nodeName")
    # The scheduler hands a pod over before writing it: one it admits is in `runtime` already.
    if node_name and newly_bound and pod["metadata"]["uid"] not in cluster.runtime:
        admit(cluster, pod)


def _cleanup(cluster: ClusterState, pod: Obj) -> None:
    uid = pod["metadata"]["uid"]
    runtime = cluster.runtime.pop(uid, None)
    if runtime is not None:
        runtime.stop_running(_grace_seconds(pod))
    node_name = pod.get("spec", {}).get("nodeName")
    cluster.set_gpus(uid, node_name or "", [])
    if node_name and is_device_plugin(pod):
        cluster.running_plugins.get(node_name, set()).discard(uid)
        refresh_node_gpus(cluster, node_name)
    elif node_name and plugin_runtime.is_mps_daemon_pod(pod):
        refresh_node_gpus(cluster, node_name)
    if cluster.scenario.uses_dra:
        dra.pod_stopped(cluster, pod)


# -- admission ---------------------------------------------------------------------------------


def admit(cluster: ClusterState, pod: Obj) -> None:
    """A pod bound to a node: allocate its GPU devices and schedule container start."""
    node_name = pod["spec"]["nodeName"]
    node = cluster.store.get("nodes", "", node_name)
    runtime = cluster.pod_runtime(pod)
    runtime.node = node_name
    devices = plugin_runtime.allocate(cluster, pod, node_name)
    if isinstance(devices, tuple):
        _reject(cluster, pod, *devices)
        return
    devices = devices or dra_claims.claimed_devices(cluster, pod, node_name)
    if devices:
        cluster.set_gpus(pod["metadata"]["uid"], node_name, devices)
    if not node_ready(node):
        if cluster.store.get("pods", pod["metadata"]["namespace"], pod["metadata"]["name"]) != pod:
            cluster.store.put("pods", pod)  # bound, but a NotReady kubelet starts nothing: Pending
        return
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"]["uid"])
    status = {
        "phase": "Pending",
        "conditions": conditions(False, "ContainersNotReady", initialized=False),
        "hostIP": node_address(_node_index(cluster, node_name)),
        "startTime": rfc3339(),
        "qosClass": "BestEffort",
        "containerStatuses": [
            status_entry(pod, c, {"waiting": {"reason": "ContainerCreating"}}, False)
            for c in pod["spec"].get("containers") or []
        ],
    }
    if cluster.settling:
        cluster.store.put("pods", pod)
        start(cluster, *key)
        return
    put_status(cluster, pod, **status)
    cluster.engine.at(cluster.scenario.pod_start_seconds, lambda: start(cluster, *key))
    deadline = pod["spec"].get("activeDeadlineSeconds")
    if deadline is not None:
        cluster.engine.at(float(deadline), lambda: deadline_exceeded(cluster, *key))


def _node_index(cluster: ClusterState, node_name: str) -> int:
    return cluster.node_index.get(node_name, len(cluster.node_index))


def _reject(cluster: ClusterState, pod: Obj, reason: str, message: str) -> None:
    """Admission failed (OutOfnvidia.com/gpu, or the plugin's Allocate refused the request)."""
    cluster.set_gpus(pod["metadata"]["uid"], pod["spec"]["nodeName"], [])
    put_status(cluster, pod, phase="Failed", reason=reason, message=message, startTime=rfc3339())
    cluster.record_event(pod, reason, message, warning=True, host=pod["spec"]["nodeName"])


# -- start / run / finish ----------------------------------------------------------------------


def start(cluster: ClusterState, namespace: str, name: str, uid: str) -> None:
    pod = current_pod(cluster, namespace, name, uid)
    if pod is None or pod["metadata"].get("deletionTimestamp"):
        return
    node_name = pod["spec"]["nodeName"]
    spec = cluster.node_spec(node_name)
    if sandbox.refused(cluster, pod, spec, lambda: start(cluster, namespace, name, uid)):
        return
    if any(blocked(cluster, pod) for blocked in cluster.init_gates):  # e.g. an Operator operand's
        return
    pod = cluster.store.get("pods", namespace, name) or pod  # with its init containers' statuses
    for container in pod["spec"].get("containers") or []:
        problem = containers.image_problem(container.get("image", ""), cluster.scenario.image_pull_failures)
        if problem is not None:
            image_failure(cluster, pod, container, *problem)
            return
    failure = injected_failure(cluster, pod)
    if failure is not None and failure.reason != "RunContainerError":
        create_failure(cluster, pod, failure)
        return
    runtime = cluster.pod_runtime(pod)
    outcomes = _start_containers(cluster, pod, failure)
    runtime.started = time.time()
    _announce_start(cluster, pod, outcomes)
    if any(outcome.start_error for outcome in outcomes.values()):
        runtime.stop_running(0)
        _finish(cluster, pod, outcomes)
        return
    _set_running(cluster, pod)
    _plugin_started(cluster, pod, node_name)
    _follow_running(cluster, pod, outcomes)
    run_for = max(outcome.run_seconds for outcome in outcomes.values())
    if run_for != FOREVER:
        key = (namespace, name, uid)
        cluster.engine.at(0.0 if cluster.settling else run_for, lambda: _finish_later(cluster, key, outcomes))


def _start_containers(
    cluster: ClusterState, pod: Obj, failure: ContainerFailure | None
) -> dict[str, Outcome]:
    """Each main container's outcome; its log (a callable while its command runs on a host)."""
    node_name = pod["spec"]["nodeName"]
    runtime = cluster.pod_runtime(pod)
    outcomes: dict[str, Outcome] = {}
    runtime.previous_logs.update(runtime.logs)
    runtime.logs = _init_logs(pod, runtime.logs)
    for container in pod["spec"].get("containers") or []:
        container_name = container["name"]
        if containers.is_device_plugin_container(container):
            outcome, log = plugin_runtime.start_plugin(cluster, pod, container, node_name)
            outcomes[container_name], runtime.logs[container_name] = outcome, log
        elif dra.is_plugin_container(container):
            outcome, dra_log = dra.start_plugin(cluster, node_name, container)
            outcomes[container_name], runtime.logs[container_name] = outcome, dra_log
        else:
            outcome = _run_workload(cluster, pod, container) if failure is None else start_error(failure)
            outcomes[container_name], runtime.logs[container_name] = outcome, outcome.log
            if outcome.running is not None:
                runtime.running[container_name] = outcome.running
                runtime.logs[container_name] = outcome.running.output
    return outcomes


def _init_logs(pod: Obj, logs: dict[str, Any]) -> dict[str, Any]:
    """The logs a pod keeps when its main containers (re)start: its init containers'."""
    names = {container["name"] for container in pod["spec"].get("initContainers") or []}
    return {name: log for name, log in logs.items() if name in names}


def _run_workload(cluster: ClusterState, pod: Obj, container: Obj) -> Outcome:
    """A container that is no plugin: a program another controller gives it (a GPU Operator
    operand's scripted run), else its command."""
    runtime = cluster.pod_runtime(pod)

    def run(argv: list[str]) -> Outcome:
        return cluster.run_container(pod["spec"]["nodeName"], argv, runtime.gpu_indices, runtime.devices)

    for program in cluster.container_programs:
        outcome = program(cluster, pod, container)
        if outcome is not None:
            return outcome
    return termination.run_redirected(run, containers.argv_of(container))


def _plugin_started(cluster: ClusterState, pod: Obj, node_name: str) -> None:
    """A device plugin, MPS daemon or DRA kubelet plugin now running changes what the node offers."""
    if is_device_plugin(pod):
        cluster.running_plugins.setdefault(node_name, set()).add(pod["metadata"]["uid"])
        refresh_node_gpus(cluster, node_name)
    elif plugin_runtime.is_mps_daemon_pod(pod):
        refresh_node_gpus(cluster, node_name)
    elif dra.is_plugin_pod(pod):
        dra.publish(cluster, node_name)


def _announce_start(cluster: ClusterState, pod: Obj, outcomes: dict[str, Outcome]) -> None:
    host = pod["spec"]["nodeName"]
    for container in pod["spec"].get("containers") or []:
        field_path = f"spec.containers{{{container['name']}}}"
        common = {"host": host, "field_path": field_path}
        cluster.record_event(
            pod, "Pulled", f'Container image "{container.get("image")}" already present on machine', **common
        )
        cluster.record_event(pod, "Created", f"Created container {container['name']}", **common)
        error = outcomes[container["name"]].start_error
        if error:
            cluster.record_event(pod, "Failed", f"Error: {error}", warning=True, **common)
        else:
            cluster.record_event(pod, "Started", f"Started container {container['name']}", **common)


def _set_running(cluster: ClusterState, pod: Obj) -> None:
    started = rfc3339()
    restarts = cluster.pod_runtime(pod).restarts
    put_status(
        cluster,
        pod,
        phase="Running",
        conditions=conditions(True),
        podIP=_pod_ip(cluster, pod),
        containerStatuses=[
            status_entry(pod, c, {"running": {"startedAt": started}}, True, restarts)
            for c in pod["spec"].get("containers") or []
        ],
    )


def _pod_ip(cluster: ClusterState, pod: Obj) -> str:
    node_octet = _node_index(cluster, pod["spec"]["nodeName"]) % 256
    return f"10.244.{node_octet}.{int(pod['metadata']['uid'][:4], 16) % 250 + 2}"


def _follow_running(cluster: ClusterState, pod: Obj, outcomes: dict[str, Outcome]) -> None:
    """Containers whose command runs on a host end when the host says so: the thread that saw the
    end hands its outcome to the engine, which owns the store."""
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"]["uid"])
    for container in pod["spec"].get("containers") or []:
        command = outcomes[container["name"]].running
        if command is None:
            continue
        path = termination.split_output_file(containers.argv_of(container))[1]

        def ended(outcome: Outcome, name: str = container["name"], path: str = path) -> None:
            final = termination.redirected(outcome, path)
            cluster.engine.at(0.0, lambda: _command_ended(cluster, key, outcomes, name, final))

        command.when_done(ended)


def _command_ended(
    cluster: ClusterState, key: tuple[str, str, str], outcomes: dict[str, Outcome], name: str, final: Outcome
) -> None:
    """One container's command ended on its host; the pod finishes once nothing of it runs."""
    pod = current_pod(cluster, *key)
    runtime = cluster.runtime.get(key[2])
    if pod is None or pod["metadata"].get("deletionTimestamp") or runtime is None:
        return
    if runtime.running.get(name) is not outcomes[name].running:
        return  # a run of an earlier start of the container
    del runtime.running[name]
    outcomes[name] = final
    runtime.logs[name] = final.log
    if not runtime.running and all(outcome.run_seconds != FOREVER for outcome in outcomes.values()):
        _finish(cluster, pod, outcomes)


def _grace_seconds(pod: Obj) -> float:
    grace = pod["metadata"].get("deletionGracePeriodSeconds")
    return float(pod["spec"].get("terminationGracePeriodSeconds", 30) if grace is None else grace)


def _finish_later(cluster: ClusterState, key: tuple[str, str, str], outcomes: dict[str, Outcome]) -> None:
    pod = current_pod(cluster, *key)
    if pod is not None and not pod["metadata"].get("deletionTimestamp"):
        _finish(cluster, pod, outcomes)


def _finish(cluster: ClusterState, pod: Obj, outcomes: dict[str, Outcome]) -> None:
    finished = rfc3339()
    runtime = cluster.pod_runtime(pod)
    statuses = []
    for container in pod["spec"].get("containers") or []:
        outcome = outcomes[container["name"]]
        terminated: Obj = {
            "exitCode": outcome.exit_code,
            "reason": "StartError"
            if outcome.start_error
            else ("Completed" if outcome.exit_code == 0 else "Error"),
            "startedAt": "1970-01-01T00:00:00Z" if outcome.start_error else rfc3339(runtime.started),
            "finishedAt": finished,
            "containerID": container_id(pod, container["name"], runtime.restarts),
        }
        log = runtime.logs.get(container["name"], "")
        message = termination.message(container, outcome, log() if callable(log) else log)
        if message:
            terminated["message"] = message
        statuses.append(status_entry(pod, container, {"terminated": terminated}, False, runtime.restarts))
    succeeded = all(outcome.exit_code == 0 for outcome in outcomes.values())
    policy = pod["spec"].get("restartPolicy", "Always")
    if policy == "Always" or (policy == "OnFailure" and not succeeded):
        _crash_loop(cluster, pod, statuses)
        return
    release_gpus(cluster, pod)
    put_status(
        cluster,
        pod,
        phase="Succeeded" if succeeded else "Failed",
        conditions=conditions(False, "PodCompleted" if succeeded else "PodFailed"),
        containerStatuses=statuses,
    )


def _crash_loop(cluster: ClusterState, pod: Obj, statuses: list[Obj]) -> None:
    """restartPolicy Always/OnFailure: CrashLoopBackOff with the kubelet's doubling back-off."""
    runtime = cluster.pod_runtime(pod)
    runtime.restarts += 1
    backoff = min(10.0 * 2 ** (runtime.restarts - 1), 300.0)
    meta = pod["metadata"]
    pod_ref = f"{meta['name']}_{meta['namespace']}({meta['uid']})"
    for status in statuses:
        status["lastState"] = status["state"]
        status["restartCount"] = runtime.restarts
        terminated = status["state"]["terminated"]
        # A task that never started is waiting on the runtime's error (RunContainerError).
        status["state"] = {
            "waiting": {"reason": "RunContainerError", "message": terminated.get("message", "")}
            if terminated["reason"] == "StartError"
            else {
                "reason": "CrashLoopBackOff",
                "message": f"back-off {int(backoff)}s restarting failed "
                f"container={status['name']} pod={pod_ref}",
            }
        }
    put_status(
        cluster,
        pod,
        phase="Running",
        conditions=conditions(False, "ContainersNotReady"),
        containerStatuses=statuses,
    )
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"]["uid"])
    cluster.engine.at(backoff, lambda: _restart(cluster, key))


def _restart(cluster: ClusterState, key: tuple[str, str, str]) -> None:
    pod = current_pod(cluster, *key)
    if pod is not None and not pod["metadata"].get("deletionTimestamp"):
        start(cluster, *key)


# -- device plugin → node capacity -------------------------------------------------------------


def _driver_labels(driver_version: str) -> dict[str, str]:
    """The driver labels GPU feature discovery sets next to the product labels."""
    major, minor, revision = ([*driver_version.split("."), "", ""])[:3]
    return {
        "nvidia.com/cuda.driver-version.full": driver_version,
        "nvidia.com/cuda.driver-version.major": major,
        "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": revision,
    }


def refresh_node_gpus(cluster: ClusterState, node_name: str) -> None:
    """Advertise nvidia.com/gpu while a running plugin pod can talk to the node's driver."""
    node = cluster.store.get("nodes", "", node_name)
    if node is None:
        return
    spec = cluster.node_spec(node_name)
    plugin_running = bool(cluster.running_plugins.get(node_name))
    status = node["status"]
    capacity, allocatable = dict(status["capacity"]), dict(status["allocatable"])
    labels = dict(node["metadata"].get("labels") or {})
    if plugin_running and spec.host_can_advertise:
        capacity, allocatable, gfd = plugin_runtime.node_resources(cluster, node_name, status)
        labels.update({"nvidia.com/gpu.present": "true", **gfd, **_driver_labels(spec.driver_version)})
    else:
        # A resource a device plugin had registered stays in capacity at 0 once the plugin has gone,
        # as the kubelet reports it (pkg/kubelet/nodestatus/setters.go, MachineInfo: "Set capacity
        # for removed resource to 0 on device removal"), so a node the plugin left is told apart
        # from one that never had it.
        capacity = {k: ("0" if k.startswith("nvidia.com/") else v) for k, v in capacity.items()}
        allocatable = {k: ("0" if k.startswith("nvidia.com/") else v) for k, v in allocatable.items()}
    if (
        capacity == status["capacity"]
        and allocatable == status["allocatable"]
        and labels == node["metadata"].get("labels")
    ):
        return
    updated = dict(node)
    updated["metadata"] = dict(node["metadata"], labels=labels)
    updated["status"] = dict(status, capacity=capacity, allocatable=allocatable)
    cluster.store.put("nodes", updated)  # the scheduler and DaemonSets (GFD labels) watch nodes


# -- deletion ----------------------------------------------------------------------------------


def delete_pod(cluster: ClusterState, pod: Obj, grace_seconds: int | None) -> Obj:
    if grace_seconds is None:
        grace_seconds = int(pod["spec"].get("terminationGracePeriodSeconds", 30))
    running = pod.get("status", {}).get("phase") == "Running"
    if grace_seconds <= 0 or not running or not pod["spec"].get("nodeName"):
        return _remove(cluster, pod)
    if pod["metadata"].get("deletionTimestamp"):
        return pod
    updated = dict(pod)
    updated["metadata"] = dict(
        pod["metadata"],
        deletionTimestamp=rfc3339(time.time() + grace_seconds),
        deletionGracePeriodSeconds=grace_seconds,
    )
    cluster.store.put("pods", updated)
    runtime = cluster.runtime.get(pod["metadata"]["uid"])
    if runtime is not None:
        runtime.stop_running(grace_seconds)  # the kubelet's SIGTERM now, SIGKILL after the grace
    if is_device_plugin(pod):
        cluster.running_plugins.get(pod["spec"]["nodeName"], set()).discard(pod["metadata"]["uid"])
        refresh_node_gpus(cluster, pod["spec"]["nodeName"])
    elif plugin_runtime.is_mps_daemon_pod(pod):
        refresh_node_gpus(cluster, pod["spec"]["nodeName"])
    dra.pod_stopped(cluster, pod)
    uid = pod["metadata"]["uid"]
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"])

    def finish() -> None:
        current = cluster.store.get("pods", *key)
        if current is not None and current["metadata"]["uid"] == uid:
            _remove(cluster, current)

    cluster.engine.at(min(float(grace_seconds), GRACE_CAP_SECONDS), finish)
    return updated


def _remove(cluster: ClusterState, pod: Obj) -> Obj:
    meta = pod["metadata"]
    return cluster.store.remove("pods", meta["namespace"], meta["name"]) or pod  # watchers clean up
