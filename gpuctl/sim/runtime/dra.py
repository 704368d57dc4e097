"""NVIDIA's DRA driver for GPUs, as the simulated cluster plays it: the DeviceClasses the chart
installs, the kubelet-plugin DaemonSet, and the plugin on a node publishing that node's GPUs as a
ResourceSlice (no slice when it cannot load NVML; unhealthy GPUs published with a device taint).

The plugin's log lines are real output, quoted as data with their source:
- start-up: https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/1201 (utils.go:43)
- no driver: https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/65
- unhealthy device: https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/pull/689 (driver.go:219)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuctl import nvidia_smi
from gpuctl.defaults import DRA_DEVICE_CLASS, DRA_DRIVER_CHART_VERSION, DRA_DRIVER_NAMESPACE, GPU_RESOURCE
from gpuctl.sim.runtime import containers, objects
from gpuctl.sim.runtime.containers import FOREVER, Outcome
from gpuctl.sim.scenario import NodeSpec

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
DRIVER = DRA_DEVICE_CLASS  # the driver name and its GPU DeviceClass share the name
MIG_CLASS = "mig.nvidia.com"
SLICES = "resourceslices.resource.k8s.io"
CLASSES = "deviceclasses.resource.k8s.io"
TAINT_RULES = "devicetaintrules.resource.k8s.io"  # Kubernetes 1.37
API_VERSION = "resource.k8s.io/v1"
PLUGIN_DAEMONSET = "dra-driver-nvidia-gpu-kubelet-plugin"
PLUGIN_IMAGE = f"registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v{DRA_DRIVER_CHART_VERSION}"
PLUGIN_BINARY = "gpu-kubelet-plugin"
NODE_LABEL = "nvidia.com/dra-kubelet-plugin"  # the sim marks the nodes whose GPUs go through DRA
# What the kubelet plugin (v0.5, gpuctl.defaults DRA_DRIVER_CHART_VERSION) puts on a device after a
# critical Xid: `gpu.nvidia.com/xid=<Xid>:NoSchedule` (dra-driver-nvidia-gpu pull requests #983
# and #1390); the sim's unhealthy GPUs had Xid 79 (fallen off the bus).
UNHEALTHY_TAINT_KEY = "gpu.nvidia.com/xid"
UNHEALTHY_XID = "79"
NO_DRIVER_ERROR = (
    "Error: failed to create device library: failed to locate driver libraries: "
    'error locating "libnvidia-ml.so.1"'
)
FEATURE_GATES = (
    'Feature gates: map[string]bool{"AllAlpha":false, "AllBeta":false, "ContextualLogging":true, '
    '"DynamicMIG":false, "LoggingAlphaOptions":false, "LoggingBetaOptions":true, "MPSSupport":false, '
    '"NVMLDeviceHealthCheck":true, "PassthroughSupport":false, "TimeSlicingSettings":false}'
)
# The gates in that line, which the plugin's FEATURE_GATES ("Name=true,Name=false,", as the chart's
# templates/kubeletplugin.yaml writes it from `featureGates`) turns on or off.
_GATE_DEFAULTS = {
    name.strip('" '): value == "true"
    for name, value in (pair.split(":") for pair in FEATURE_GATES.split("{", 1)[1].rstrip("}").split(", "))
}
CRASH_RUN_SECONDS = 0.2


def _class_selector(device_type: str) -> str:
    return f"device.driver == '{DRIVER}' && device.attributes['{DRIVER}'].type == '{device_type}'"


def device_classes(extended_resource: bool = False) -> list[Obj]:
    """The chart's DeviceClasses; `extended_resource` (Kubernetes 1.37): the GPU class maps
    nvidia.com/gpu, as the chart's templates/deviceclass-gpu.yaml writes it on resource.k8s.io/v1."""
    classes = []
    for name, device_type in ((DRIVER, "gpu"), (MIG_CLASS, "mig")):
        spec: Obj = {"selectors": [{"cel": {"expression": _class_selector(device_type)}}]}
        if extended_resource and device_type == "gpu":
            spec["extendedResourceName"] = GPU_RESOURCE
        classes.append(
            {
                "apiVersion": API_VERSION,
                "kind": "DeviceClass",
                "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "dra-driver-nvidia-gpu"}},
                "spec": spec,
            }
        )
    return classes


def plugin_daemonset() -> Obj:
    labels = {
        "app.kubernetes.io/name": "dra-driver-nvidia-gpu",
        "app.kubernetes.io/component": "kubelet-plugin",
    }
    return {
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": {"name": PLUGIN_DAEMONSET, "namespace": DRA_DRIVER_NAMESPACE, "labels": dict(labels)},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "nodeSelector": {NODE_LABEL: "true"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "priorityClassName": "system-node-critical",
                    "containers": [{"name": "gpus", "image": PLUGIN_IMAGE, "command": [PLUGIN_BINARY]}],
                },
            },
        },
    }


def install(cluster: ClusterState, created: float) -> None:
    """What the scenario says is already installed: the chart's DeviceClasses and DaemonSet."""
    if not cluster.scenario.has_dra_nodes or cluster.scenario.dra_driver != "installed":
        return
    store = cluster.store
    if store.get("namespaces", "", DRA_DRIVER_NAMESPACE) is None:
        store.add("namespaces", objects.namespace(DRA_DRIVER_NAMESPACE), created)
    for device_class in device_classes(cluster.scenario.dra_137):
        store.add(CLASSES, device_class, created)
    store.add("daemonsets.apps", plugin_daemonset(), created)


def is_plugin_container(container: Obj) -> bool:
    image = str(container.get("image", ""))
    if "dra-driver-nvidia-gpu" not in image and "k8s-dra-driver-gpu" not in image:
        return False  # asked of every container that starts: the cheap test first
    argv = containers.argv_of(container)
    named = any(os.path.basename(part) == PLUGIN_BINARY for part in argv[:1]) or PLUGIN_BINARY in " ".join(
        argv
    )
    return ("dra-driver-nvidia-gpu" in image or "k8s-dra-driver-gpu" in image) and named


def is_plugin_pod(pod: Obj) -> bool:
    return any(is_plugin_container(c) for c in pod.get("spec", {}).get("containers") or [])


# -- the node's devices --------------------------------------------------------------------------


def semver(driver_version: str) -> str:
    """The driver version as the plugin publishes it (a semantic version: 550.90.07 → 550.90.7)."""
    parts = [str(int(part)) if part.isdigit() else part for part in driver_version.split(".")]
    return ".".join([*parts, "0", "0"][:3])


def _gpu_device(gpu: nvidia_smi.Gpu, spec: NodeSpec) -> Obj:
    device: Obj = {
        "name": f"gpu-{gpu.index}",
        "attributes": {
            "type": {"string": "gpu"},
            "uuid": {"string": gpu.uuid},
            "productName": {"string": gpu.name},
            "brand": {"string": "Nvidia"},
            "driverVersion": {"version": semver(spec.driver_version)},
            "cudaDriverVersion": {"version": semver(gpu.cuda_version)},
            "index": {"int": gpu.index},
            "minor": {"int": gpu.index},
            "pcieBusID": {"string": gpu.pci_bus_id},
        },
        "capacity": {"memory": {"value": f"{spec.gpu_memory_mib}Mi"}},
    }
    if gpu.index >= spec.gpus - spec.unhealthy_gpus:
        device["taints"] = [{"key": UNHEALTHY_TAINT_KEY, "value": UNHEALTHY_XID, "effect": "NoSchedule"}]
    xid = dict(spec.xid_gpus).get(gpu.index)
    if xid is not None:  # `gpuHealth` fault xid: the health check's taint, as of now
        device["taints"] = [{"key": UNHEALTHY_TAINT_KEY, "value": str(xid), "effect": "NoSchedule"}]
    return device


def _mig_devices(gpu: nvidia_smi.Gpu, spec: NodeSpec) -> list[Obj]:
    devices, index = [], 0
    for profile, count in spec.mig:
        for _ in range(count):
            devices.append(
                {
                    "name": f"gpu-{gpu.index}-mig-{profile.replace('.', '')}-{index}",
                    "attributes": {
                        "type": {"string": "mig"},
                        "uuid": {"string": nvidia_smi.mig_uuid(spec.name, gpu.index, index)},
                        "parentUUID": {"string": gpu.uuid},
                        "profile": {"string": profile},
                        "productName": {"string": gpu.name},
                        "driverVersion": {"version": semver(spec.driver_version)},
                        "parentIndex": {"int": gpu.index},
                    },
                }
            )
            index += 1
    return devices


def node_devices(spec: NodeSpec) -> list[Obj]:
    gpus = nvidia_smi.fake_gpus(
        spec.name, spec.gpus, spec.gpu_product, spec.gpu_memory_mib, spec.driver_version
    )
    if spec.mig:
        return [device for gpu in gpus for device in _mig_devices(gpu, spec)]
    return [_gpu_device(gpu, spec) for gpu in gpus]


def slice_name(node_name: str) -> str:
    return f"{node_name}-{DRIVER}-{objects.short_hash(node_name)[:5]}"


def _slice(node: Obj, spec: NodeSpec) -> Obj:
    name = node["metadata"]["name"]
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {
            "name": slice_name(name),
            "generateName": f"{name}-{DRIVER}-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "name": name,
                    "uid": node["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {
            "driver": DRIVER,
            "nodeName": name,
            "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
            "devices": node_devices(spec),
        },
    }


def publish(cluster: ClusterState, node_name: str) -> None:
    """The plugin on `node_name` is up: publish its devices (none when it cannot load NVML)."""
    node = cluster.store.get("nodes", "", node_name)
    spec = cluster.health_spec(node_name)
    if node is None or spec.driver == "missing" or spec.gpus == 0 or spec.dra_slices == "never":
        return
    if cluster.store.get(SLICES, "", slice_name(node_name)) is None:
        cluster.store.add(SLICES, _slice(node, spec), cluster.created_at if cluster.settling else None)


def republish(cluster: ClusterState, node_name: str) -> None:
    """A `gpuHealth` event: the running plugin republishes its slice with the devices' health
    taints as of now (the pool's generation moves on, as the kubelet-plugin library's does)."""
    current = cluster.store.get(SLICES, "", slice_name(node_name))
    if current is None:
        return  # the plugin is not running: it publishes the health as of its start
    pool = dict(current["spec"]["pool"], generation=int(current["spec"]["pool"].get("generation", 1)) + 1)
    spec = dict(current["spec"], devices=node_devices(cluster.health_spec(node_name)), pool=pool)
    cluster.store.put(SLICES, dict(current, spec=spec))
    cluster.schedule_soon()  # a device back without a taint may serve a pending pod


def unpublish(cluster: ClusterState, node_name: str) -> None:
    """The plugin stopped: the kubelet-plugin library removes its node's slices."""
    cluster.store.remove(SLICES, "", slice_name(node_name))


def pod_stopped(cluster: ClusterState, pod: Obj) -> None:
    node_name = pod.get("spec", {}).get("nodeName")
    if node_name and is_plugin_pod(pod):
        unpublish(cluster, node_name)


# -- the plugin process ------------------------------------------------------------------------


def _klog(severity: str, source: str, message: str) -> str:
    now = datetime.now(tz=UTC)
    stamp = now.strftime("%m%d %H:%M:%S.") + f"{now.microsecond:06d}"
    return f"{severity}{stamp}       1 {source}] {message}\n"


def feature_gates_line(container: Obj | None) -> str:
    """The plugin's "Feature gates:" line, with the gates its FEATURE_GATES sets."""
    gates = dict(_GATE_DEFAULTS)
    env = {str(var.get("name")): str(var.get("value", "")) for var in (container or {}).get("env") or []}
    for setting in env.get("FEATURE_GATES", "").split(","):
        name, _, value = setting.partition("=")
        if name.strip() in gates:
            gates[name.strip()] = value.strip().lower() == "true"
    shown = ", ".join(f'"{name}":{str(on).lower()}' for name, on in sorted(gates.items()))
    return f"Feature gates: map[string]bool{{{shown}}}"


def plugin_log(spec: NodeSpec, container: Obj | None = None) -> str:
    if spec.driver == "missing":
        return NO_DRIVER_ERROR + "\n"
    lines = [_klog("I", "utils.go:43", ""), feature_gates_line(container) + "\n"]
    gpus = nvidia_smi.fake_gpus(
        spec.name, spec.gpus, spec.gpu_product, spec.gpu_memory_mib, spec.driver_version
    )
    for gpu in gpus[spec.gpus - spec.unhealthy_gpus :]:
        lines.append(_klog("W", "driver.go:219", f"Received unhealthy notification for device: {gpu.uuid}"))
    return "".join(lines)


def start_plugin(
    cluster: ClusterState, node_name: str, container: Obj | None = None
) -> tuple[Outcome, Callable[[], str] | str]:
    """The kubelet plugin starting on a node: it exits 1 without a driver (CrashLoopBackOff)."""
    spec = cluster.node_spec(node_name)
    text = plugin_log(spec, container)
    if spec.driver == "missing":
        return Outcome(log=text, exit_code=1, run_seconds=CRASH_RUN_SECONDS), text
    return Outcome(run_seconds=FOREVER), text
