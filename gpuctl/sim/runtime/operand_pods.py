"""How the GPU Operator's operand pods behave on a simulated node: their init containers (the
validator's stages, the driver manager) and what their main containers do.

An operand pod (label app.kubernetes.io/managed-by=gpu-operator) runs its init containers in
order, as the kubelet does: each one either completes, keeps running because what it validates is
not there yet (the pod shows `Init:N/M`, and the Operator's reconcile starts it again once the node
changed), or fails (`Init:CrashLoopBackOff`, retried with the kubelet's back-off). Only then do the
main containers start, through the kubelet's usual path (the device plugin's included).
The cluster hands `init_blocked` and `outcome` to the kubelet (ClusterState.init_gates and
container_programs): the kubelet knows nothing of the Operator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import kubelet, operator, operator_gpucluster
from gpuctl.sim.runtime.containers import FOREVER, Outcome
from gpuctl.sim.runtime.operator_operands import DRIVER_MANAGER, VALIDATION_STAGES, is_nfd_worker, is_operand
from gpuctl.sim.runtime.podstatus import container_id, put_status, status_entry
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]

# k8s-driver-manager (init container of nvidia-driver-daemonset) on a node whose host already has
# the NVIDIA driver loaded: it cannot unload it and exits 1. Log lines as printed in
# https://github.com/NVIDIA/gpu-operator/issues/304 (refcount and module sizes from there).
DRIVER_IN_USE_LOG = """\
nvidia driver module is already loaded with refcount 350
Shutting down all GPU clients on the current node by disabling their component-specific nodeSelector labels
node/{node} labeled
Waiting for the operator-validator to shutdown
Waiting for the container-toolkit to shutdown
Waiting for the device-plugin to shutdown
Waiting for gpu-feature-discovery to shutdown
Unloading NVIDIA driver kernel modules...
nvidia_modeset       1228800  0
nvidia_uvm           1146880  4
nvidia              34086912  350 nvidia_uvm,nvidia_modeset
Could not unload NVIDIA driver kernel modules, driver is in use
Auto drain of the node {node} is disabled
Failed to uninstall nvidia driver
"""
# nvidia-driver-ctr installing on a host without a driver: the installer's first lines, as in
# https://github.com/NVIDIA/gpu-operator/issues/137.
DRIVER_INSTALL_LOG = """\
========== NVIDIA Software Installer ==========

Starting installation of NVIDIA driver version {version} for Linux kernel version 6.8.0-45-generic

"""


def _stage(cluster: ClusterState, pod: Obj, name: str) -> str:
    """'done', 'waiting' (the container keeps running) or 'failed' for one init container."""
    node_name = pod["spec"]["nodeName"]
    if name == DRIVER_MANAGER:
        return "failed" if operator.host_driver_loaded(cluster, node_name) else "done"
    if name == operator_gpucluster.GPU_VALIDATION:
        return "done" if operator_gpucluster.gpu_validated(cluster, node_name) else "waiting"
    if name not in VALIDATION_STAGES:
        return "done"
    readiness = operator.node_readiness(cluster, node_name)
    passed = {
        "driver-validation": readiness.driver,
        "toolkit-validation": readiness.driver and readiness.toolkit,
        "cuda-validation": readiness.driver and readiness.toolkit,
        "plugin-validation": readiness.driver and readiness.toolkit and readiness.plugin,
    }
    return "done" if passed[name] else "waiting"


def init_blocked(cluster: ClusterState, pod: Obj) -> bool:
    """Run an operand pod's init containers; True while they hold its main containers back."""
    if not is_operand(pod) or not pod["spec"].get("initContainers"):
        return False
    operator.register_pod(cluster, pod)
    runtime = cluster.pod_runtime(pod)
    statuses: list[Obj] = []
    blocking = ""
    for container in pod["spec"]["initContainers"]:
        name = container["name"]
        if blocking:
            statuses.append(status_entry(pod, container, {"waiting": {"reason": "PodInitializing"}}, False))
            continue
        stage = _stage(cluster, pod, name)
        if stage == "done":
            runtime.logs.setdefault(name, "")
            terminated = {"exitCode": 0, "reason": "Completed", "containerID": container_id(pod, name)}
            statuses.append(status_entry(pod, container, {"terminated": terminated}, True))
            continue
        blocking = stage
        if stage == "failed":
            runtime.logs[name] = DRIVER_IN_USE_LOG.format(node=pod["spec"]["nodeName"])
            statuses.append(_crash_looping(cluster, pod, container))
        else:
            runtime.logs.setdefault(name, "")
            started = {"running": {"startedAt": rfc3339(runtime.started or None)}}
            statuses.append(status_entry(pod, container, started, False, runtime.restarts))
    if not blocking:
        _write(cluster, pod, statuses, initialized=True)
        return False
    if blocking == "waiting":
        operator.wait_for_node_change(cluster, pod)
    _write(cluster, pod, statuses, initialized=False)
    return True


def _crash_looping(cluster: ClusterState, pod: Obj, container: Obj) -> Obj:
    """The init container exited 1: back off (10 s, doubling, at most 300 s) and run it again."""
    runtime = cluster.pod_runtime(pod)
    runtime.restarts += 1
    backoff = min(10.0 * 2 ** (runtime.restarts - 1), 300.0)
    key = (pod["metadata"]["namespace"], pod["metadata"]["name"], pod["metadata"]["uid"])
    cluster.engine.at(backoff, lambda: kubelet.start(cluster, *key))
    meta = pod["metadata"]
    waiting = {
        "reason": "CrashLoopBackOff",
        "message": f"back-off {int(backoff)}s restarting failed container={container['name']} "
        f"pod={meta['name']}_{meta['namespace']}({meta['uid']})",
    }
    entry = status_entry(pod, container, {"waiting": waiting}, False, runtime.restarts)
    entry["lastState"] = {
        "terminated": {
            "exitCode": 1,
            "reason": "Error",
            "startedAt": rfc3339(),
            "finishedAt": rfc3339(),
            "containerID": container_id(pod, container["name"], runtime.restarts - 1),
        }
    }
    return entry


def _write(cluster: ClusterState, pod: Obj, statuses: list[Obj], *, initialized: bool) -> None:
    """Write the init containers' states; nothing when they are what the pod already shows, so
    that the Operator's reconcile, which restarts waiting pods, settles."""
    current = pod.get("status") or {}
    if _signature(current.get("initContainerStatuses")) == _signature(statuses) and (
        initialized or current.get("phase") == "Pending"
    ):
        return
    if initialized:
        put_status(cluster, pod, initContainerStatuses=statuses)
        return
    waiting = {"waiting": {"reason": "PodInitializing"}}
    put_status(
        cluster,
        pod,
        phase="Pending",
        conditions=_init_conditions(),
        initContainerStatuses=statuses,
        containerStatuses=[status_entry(pod, c, waiting, False) for c in pod["spec"].get("containers") or []],
    )


def _signature(statuses: list[Obj] | None) -> list[tuple[str, str, int]]:
    return [
        (s.get("name", ""), next(iter(s.get("state") or {"": 0})), s.get("restartCount", 0))
        for s in statuses or []
    ]


def _init_conditions() -> list[Obj]:
    now = rfc3339()

    def condition(kind: str, status: bool, reason: str = "") -> Obj:
        found: Obj = {"type": kind, "status": str(status), "lastProbeTime": None, "lastTransitionTime": now}
        if reason:
            found["reason"] = reason
        return found

    return [
        condition("PodReadyToStartContainers", True),
        condition("Initialized", False, "ContainersNotInitialized"),
        condition("Ready", False, "ContainersNotReady"),
        condition("ContainersReady", False, "ContainersNotReady"),
        condition("PodScheduled", True),
    ]


def outcome(cluster: ClusterState, pod: Obj, container: Obj) -> Outcome | None:
    """What an operand's (or NFD worker's) main container does; None: the kubelet decides."""
    if is_nfd_worker(pod):
        return Outcome(run_seconds=FOREVER)
    if not is_operand(pod):
        return None
    name = container.get("name", "")
    if name == "nvidia-driver-ctr":
        version = (
            operator.driver_version(cluster) or cluster.node_spec(pod["spec"]["nodeName"]).driver_version
        )
        return Outcome(log=DRIVER_INSTALL_LOG.format(version=version), run_seconds=FOREVER)
    if name in ("nvidia-operator-validator", operator_gpucluster.VALIDATOR):
        return Outcome(log="all validations are successful\n", run_seconds=FOREVER)
    return Outcome(run_seconds=FOREVER)  # toolkit, GFD, DCGM exporter: long-running daemons
