"""The device plugin on a node, as the kubelet meets it: start-up with its configuration (exit on
a fatal one), its log, the MPS control daemon it waits for, the node's advertised resources and
GFD labels, and Allocate (distributed replicas, refused requests)."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime import containers
from gpuctl.sim.runtime.containers import FOREVER, Outcome
from gpuctl.sim.runtime.plugin_config import PluginConfig, read_plugin_config
from gpuctl.sim.runtime.predicates import DEVICE_RESOURCE_PREFIX, pod_device_requests
from gpuctl.sim.runtime.sharing import Advertised, Device, advertise, pick, refused_request
from gpuctl.sim.scenario import NodeSpec

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
MPS_NOT_READY = (
    "Failed to start plugin: error waiting for MPS daemon: error checking MPS daemon health: "
    "failed to send command to MPS daemon: exit status 1"
)
CRASH_RUN_SECONDS = 0.2  # how long a plugin with a fatal configuration runs before it exits


def is_mps_daemon_pod(pod: Obj) -> bool:
    """A pod running NVIDIA's MPS control daemon (not its mount-shm init step)."""
    for container in pod.get("spec", {}).get("containers") or []:
        if not containers.is_device_plugin_image(container.get("image", "")):
            continue  # asked of every pod that starts: the cheap test first
        argv = containers.argv_of(container)
        daemon = bool(argv) and os.path.basename(argv[0]) == "mps-control-daemon"
        if daemon and argv[1:2] != ["mount-shm"]:
            return True
    return False


def mps_ready(cluster: ClusterState, node_name: str) -> bool:
    for pod in cluster.store.items("pods"):
        if pod["spec"].get("nodeName") != node_name or pod["metadata"].get("deletionTimestamp"):
            continue
        conditions = pod.get("status", {}).get("conditions") or []
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        if ready and is_mps_daemon_pod(pod):
            return True
    return False


def node_advertised(cluster: ClusterState, node_name: str) -> tuple[Advertised, bool]:
    """(what the node's plugin serves, whether it waits for the MPS daemon)."""
    config = cluster.plugin_configs.get(node_name, PluginConfig())
    advertised = advertise(cluster.node_spec(node_name), config)
    if config.sharing == "mps" and advertised.devices and not mps_ready(cluster, node_name):
        return Advertised(labels=advertised.labels), True
    return advertised, False


def node_resources(cluster: ClusterState, node_name: str, status: Obj) -> tuple[Obj, Obj, dict[str, str]]:
    """The node's capacity and allocatable with the plugin's resources, and the GFD labels."""
    advertised, _ = node_advertised(cluster, node_name)
    capacity = {k: v for k, v in status["capacity"].items() if not k.startswith(DEVICE_RESOURCE_PREFIX)}
    allocatable = {k: v for k, v in status["allocatable"].items() if not k.startswith(DEVICE_RESOURCE_PREFIX)}
    for name, devices in advertised.devices.items():
        capacity[name] = str(len(devices))
        allocatable[name] = str(advertised.healthy.get(name, 0))
    return capacity, allocatable, advertised.labels


def allocate(cluster: ClusterState, pod: Obj, node_name: str) -> list[Device] | tuple[str, str]:
    """The devices for a bound pod, or (reason, message) of the kubelet's admission failure.
    Requests the scheduler mapped to a DRA claim (pod.status.extendedResourceClaimStatus,
    Kubernetes 1.37) are the claim's, not the plugin's."""
    mapped = (pod.get("status") or {}).get("extendedResourceClaimStatus") or {}
    through_dra = {m.get("resourceName") for m in mapped.get("requestMappings") or []}
    requests = {name: count for name, count in pod_device_requests(pod).items() if name not in through_dra}
    if not requests:
        return []
    advertised, _ = node_advertised(cluster, node_name)
    config = cluster.plugin_configs.get(node_name, PluginConfig())
    uid = pod["metadata"]["uid"]
    held = [d for holder, ds in cluster.gpu_holders.get(node_name, {}).items() if holder != uid for d in ds]
    spec = cluster.node_spec(node_name)
    chosen: list[Device] = []
    for name, wanted in sorted(requests.items()):
        healthy = [d for d in advertised.devices.get(name, []) if d.gpu < spec.gpus - spec.unhealthy_gpus]
        free = [d for d in healthy if d not in held]
        if len(free) < wanted:
            message = (
                f"Pod was rejected: Node didn't have enough resource: {name}, requested: {wanted}, "
                f"used: {len(healthy) - len(free)}, capacity: {len(healthy)}"
            )
            return f"OutOf{name}", message
        refusal = refused_request(config, name, wanted)
        if refusal:
            return "UnexpectedAdmissionError", (
                f"Allocate failed due to rpc error: code = Unknown desc = {refusal}, which is unexpected"
            )
        chosen += pick(free, held, wanted)
    return chosen


# -- the plugin's start-up and log -------------------------------------------------------------


def _klog(severity: str, source: str, message: str) -> str:
    now = datetime.now(tz=UTC)
    stamp = now.strftime("%m%d %H:%M:%S.") + f"{now.microsecond:06d}"
    return f"{severity}{stamp}       1 {source}] {message}\n"


def _head(spec: NodeSpec) -> list[str]:
    """The v0.17-shaped start-up lines up to NVML detection (see containers.device_plugin_log)."""
    lines = containers.device_plugin_log(spec).splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if "Starting GRPC server" in line), len(lines))
    return lines[:cut]


def _socket(resource: str) -> str:
    return f"/var/lib/kubelet/device-plugins/nvidia-{resource.split('/', 1)[1]}.sock"


def plugin_log(spec: NodeSpec, config: PluginConfig, advertised: Advertised, waiting_for_mps: bool) -> str:
    if config == PluginConfig() and not spec.mig:
        return containers.device_plugin_log(spec)  # the default plugin, as before
    if config.error.startswith("specified config"):  # the config-manager's refusal
        return _klog("E", "main.go:209", config.error)
    lines = _head(spec)
    if not spec.host_can_advertise:
        return containers.device_plugin_log(spec)
    lines += [_klog("W", "device_map.go:173", warning) for warning in advertised.warnings]
    if advertised.error or config.error:
        lines.append(_klog("E", "main.go:198", f"error starting plugins: {advertised.error or config.error}"))
        return "".join(lines)
    if waiting_for_mps:
        lines.append(_klog("E", "main.go:409", MPS_NOT_READY))
        lines.append(_klog("I", "main.go:302", "Failed to start one or more plugins. Retrying in 30s..."))
        return "".join(lines)
    if not advertised.devices:
        lines.append(_klog("I", "main.go:416", "No devices found. Waiting indefinitely."))
    for name in sorted(advertised.devices):
        if config.sharing == "mps" and name == config.shared_resource:
            lines.append(_klog("I", "mps.go:70", f'"MPS daemon is healthy" resource="{name}"'))
        lines.append(_klog("I", "server.go:195", f"Starting GRPC server for '{name}'"))
        lines.append(_klog("I", "server.go:139", f"Starting to serve '{name}' on {_socket(name)}"))
        lines.append(_klog("I", "server.go:146", f"Registered device plugin for '{name}' with Kubelet"))
    return "".join(lines)


class SharingPluginLog:
    """A running plugin's log, grown (not rewritten) when what it serves changes."""

    def __init__(self, state: Callable[[], tuple[NodeSpec, PluginConfig, Advertised, bool]]) -> None:
        self._state = state
        self._last: tuple[NodeSpec, PluginConfig, Advertised, bool] | None = None
        self._text = ""

    def __call__(self) -> str:
        state = self._state()
        if state != self._last:
            self._text += plugin_log(*state)
            self._last = state
        return self._text


def start_plugin(
    cluster: ClusterState, pod: Obj, container: Obj, node_name: str
) -> tuple[Outcome, Callable[[], str]]:
    """Read the plugin's configuration as it starts; a fatal one makes it exit 1 (CrashLoopBackOff)."""
    node = cluster.store.get("nodes", "", node_name)
    config = read_plugin_config(cluster.store, pod, container, node)
    cluster.plugin_configs[node_name] = config

    def state() -> tuple[NodeSpec, PluginConfig, Advertised, bool]:
        advertised, waiting = node_advertised(cluster, node_name)
        return cluster.node_spec(node_name), config, advertised, waiting

    advertised, _ = node_advertised(cluster, node_name)
    spec = cluster.node_spec(node_name)
    fatal = bool(config.error or (advertised.error and spec.host_can_advertise))
    if fatal:
        text = plugin_log(*state())
        return Outcome(log=text, exit_code=1, run_seconds=CRASH_RUN_SECONDS), lambda: text
    return Outcome(run_seconds=FOREVER), SharingPluginLog(state)
