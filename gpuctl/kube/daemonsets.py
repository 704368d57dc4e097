"""GPU DaemonSets (device plugin, GFD, DCGM exporter, operator) and the pods they run per node."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, call_json, dig, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from gpuctl.kube.nodes import Taint

DEVICE_PLUGIN_MARKERS = ("k8s-device-plugin", "nvidia-device-plugin")
GPU_DAEMONSET_MARKERS = (
    *DEVICE_PLUGIN_MARKERS,
    "gpu-feature-discovery",
    "dcgm-exporter",
    "gpu-operator",
    "nvidia-container-toolkit",
    "nvidia-driver",
)
# The DaemonSet controller adds these tolerations to every DaemonSet pod by itself.
_AUTO_TOLERATED_PREFIX = "node.kubernetes.io/"


@dataclass(frozen=True)
class DaemonSetInfo:
    namespace: str
    name: str
    images: tuple[str, ...]
    tolerations: tuple[JsonDict, ...]
    selector: dict[str, str]
    runtime_class: str

    @property
    def is_device_plugin(self) -> bool:
        text = " ".join((self.name, *self.images))
        return any(marker in text for marker in DEVICE_PLUGIN_MARKERS)

    @property
    def is_gpu_daemonset(self) -> bool:
        text = " ".join((self.name, *self.images))
        return any(marker in text for marker in GPU_DAEMONSET_MARKERS)

    def tolerates(self, taint: Taint) -> bool:
        if taint.key.startswith(_AUTO_TOLERATED_PREFIX) or taint.effect == "PreferNoSchedule":
            return True
        return any(toleration_matches(toleration, taint) for toleration in self.tolerations)


def toleration_matches(toleration: JsonDict, taint: Taint) -> bool:
    """Kubernetes' Toleration.ToleratesTaint."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return not key or key == taint.key
    return key == taint.key and (toleration.get("value") or "") == taint.value


def _from_json(item: JsonDict) -> DaemonSetInfo:
    pod_spec = dig(item, "spec", "template", "spec", default={})
    containers = [*(pod_spec.get("initContainers") or []), *(pod_spec.get("containers") or [])]
    return DaemonSetInfo(
        namespace=str(dig(item, "metadata", "namespace", default="")),
        name=name_of(item),
        images=tuple(str(container.get("image", "")) for container in containers),
        tolerations=tuple(pod_spec.get("tolerations") or ()),
        selector=dict(dig(item, "spec", "selector", "matchLabels", default={})),
        runtime_class=str(pod_spec.get("runtimeClassName") or ""),
    )


def list_gpu_daemonsets(api_client: ApiClient) -> list[DaemonSetInfo]:
    """The GPU-related DaemonSets of all namespaces (one request)."""
    from kubernetes.client import AppsV1Api

    with api_call("list", "daemonsets"):
        body = call_json(AppsV1Api(api_client).list_daemon_set_for_all_namespaces)
    daemonsets = [_from_json(item) for item in body.get("items", [])]
    return [daemonset for daemonset in daemonsets if daemonset.is_gpu_daemonset]


@dataclass(frozen=True)
class PluginPod:
    namespace: str
    name: str
    node: str
    phase: str
    ready: bool
    container: str
    waiting_reason: str
    restarts: int


def _plugin_pod(item: JsonDict) -> PluginPod:
    statuses = dig(item, "status", "containerStatuses", default=[])
    conditions = dig(item, "status", "conditions", default=[])
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    containers = dig(item, "spec", "containers", default=[])
    waiting = next((dig(s, "state", "waiting", "reason", default="") for s in statuses), "")
    return PluginPod(
        namespace=str(dig(item, "metadata", "namespace", default="")),
        name=name_of(item),
        node=str(dig(item, "spec", "nodeName", default="")),
        phase=str(dig(item, "status", "phase", default="Unknown")),
        ready=ready,
        container=str(containers[0].get("name", "")) if containers else "",
        waiting_reason=waiting or "",
        restarts=sum(int(s.get("restartCount") or 0) for s in statuses),
    )


def device_plugin_pods(api_client: ApiClient, daemonsets: list[DaemonSetInfo]) -> dict[str, PluginPod]:
    """node name → the device plugin pod running there (one request per device plugin DaemonSet)."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(api_client)
    by_node: dict[str, PluginPod] = {}
    for daemonset in daemonsets:
        if not daemonset.is_device_plugin or not daemonset.selector:
            continue
        selector = ",".join(f"{key}={value}" for key, value in sorted(daemonset.selector.items()))
        with api_call("list", f"pods in {daemonset.namespace}"):
            body = call_json(core.list_namespaced_pod, daemonset.namespace, label_selector=selector)
        for item in body.get("items", []):
            pod = _plugin_pod(item)
            if pod.node and (pod.node not in by_node or pod.ready):
                by_node[pod.node] = pod
    return by_node
