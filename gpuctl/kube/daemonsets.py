"""GPU DaemonSets and the device plugin pods they run per node.

One definition of "GPU DaemonSet" for both `verify` and `taint-gpu-nodes`: the device plugin, GFD,
the NFD worker, dcgm-exporter, DCGM's host engine and the GPU Operator's validator, driver and
toolkit DaemonSets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.nodes import ENFORCED_EFFECTS, tolerates
from gpuctl.kube.raw import JsonDict, dig, labels_of, list_items, list_json, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from gpuctl.kube.nodes import Taint

DEVICE_PLUGIN = "NVIDIA device plugin"
DRA_KUBELET_PLUGIN = "NVIDIA DRA kubelet plugin"
# (component, fragments of the name or a label value, fragments of a container image). Names are
# tried before images, and the first match wins: GFD ships in the k8s-device-plugin image since
# v0.16, and GPU Operator DaemonSets run the validator image as an init container.
_COMPONENTS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("GPU feature discovery", ("gpu-feature-discovery",), ("gpu-feature-discovery",)),
    # Before the device plugin: NVIDIA names it nvidia-device-plugin-mps-control-daemon and runs
    # it from the k8s-device-plugin image, but it serves no GPUs to the kubelet.
    ("NVIDIA MPS control daemon", ("mps-control-daemon",), ()),
    # The DRA driver's per-node plugin publishes GPUs as ResourceSlices (its controller is a Deployment).
    (DRA_KUBELET_PLUGIN, ("dra-driver-nvidia-gpu", "dra-driver-gpu", "k8s-dra-driver"), ("dra-driver",)),
    (
        DEVICE_PLUGIN,
        ("nvidia-device-plugin", "k8s-device-plugin"),
        ("k8s-device-plugin", "nvidia-device-plugin"),
    ),
    ("GPU Operator validator", ("operator-validator",), ("gpu-operator-validator",)),
    # The GPU Operator's DaemonSets carry their name as the pods' `app` label. ClusterPolicy mode:
    # nvidia-dcgm-exporter and the standalone host engine nvidia-dcgm (assets/state-dcgm-exporter/
    # 0800_daemonset.yaml, assets/state-dcgm/0400_dcgm.yml, unchanged from v25.10.0 to v26.7.0);
    # 26.7's GPUCluster mode: nvidia-dcgm-exporter-dra and nvidia-dcgm-dra (manifests/
    # state-dcgm-exporter/0700_daemonset.yaml, manifests/state-dcgm/0500_daemonset.yaml, v26.7.0).
    # Fragments, so both match; the exporter before the host engine, whose name it contains.
    ("dcgm-exporter", ("dcgm-exporter",), ("dcgm-exporter",)),
    ("DCGM host engine", ("nvidia-dcgm",), ("cloud-native/dcgm:",)),
    ("NVIDIA driver", ("nvidia-driver",), ("nvidia-driver", "nvcr.io/nvidia/driver:")),
    ("NVIDIA container toolkit", ("nvidia-container-toolkit",), ("container-toolkit",)),
)
_NFD = "node-feature-discovery"
_OPERATOR = "gpu-operator"
# The DaemonSet controller adds these tolerations to every DaemonSet pod by itself.
AUTO_TOLERATED_PREFIX = "node.kubernetes.io/"


def gpu_component(names: str, images: str, init_images: str, argv: str) -> str:
    """Which GPU component a DaemonSet runs ("" when none), from its lower-cased name and label
    values, its container and init container images, and its containers' command lines."""
    for component, name_parts, _ in _COMPONENTS:
        if any(part in names for part in name_parts):
            return component
    for component, _, image_parts in _COMPONENTS:
        if any(part in images for part in image_parts):
            return component
    if _NFD in f"{names} {images}":
        # Only the NFD worker runs on every node; the master and gc do not.
        return "NFD worker" if "worker" in names or "nfd-worker" in argv else ""
    if _OPERATOR in f"{names} {images} {init_images}":
        return "GPU Operator component"
    return ""


@dataclass(frozen=True)
class DaemonSetInfo:
    namespace: str
    name: str
    images: tuple[str, ...]
    tolerations: tuple[JsonDict, ...]
    selector: dict[str, str]
    runtime_class: str
    component: str  # see gpu_component; "" for a DaemonSet that is not a GPU component
    # The controller has not yet placed a pod on every node it should (just created or updated).
    rolling_out: bool = False

    @property
    def is_device_plugin(self) -> bool:
        return self.component == DEVICE_PLUGIN

    @property
    def is_dra_plugin(self) -> bool:
        return self.component == DRA_KUBELET_PLUGIN

    @property
    def is_gpu_daemonset(self) -> bool:
        return bool(self.component)

    def tolerates(self, taint: Taint) -> bool:
        """Whether this DaemonSet's pods run on a node with `taint`."""
        if taint.key.startswith(AUTO_TOLERATED_PREFIX) or taint.effect not in ENFORCED_EFFECTS:
            return True
        return any(tolerates(toleration, taint) for toleration in self.tolerations)


def _joined(containers: list[JsonDict], *fields: str) -> str:
    parts = [str(part) for container in containers for field in fields for part in _listed(container, field)]
    return " ".join(parts).lower()


def _listed(container: JsonDict, field: str) -> list[object]:
    value = container.get(field)
    if isinstance(value, list):
        return value
    return [value] if value else []


def _component_of(item: JsonDict, pod_spec: JsonDict) -> str:
    """gpu_component of a DaemonSet or pod `item` running `pod_spec`."""
    names = " ".join([name_of(item), *map(str, labels_of(item).values())]).lower()
    containers: list[JsonDict] = pod_spec.get("containers") or []
    return gpu_component(
        names,
        _joined(containers, "image"),
        _joined(pod_spec.get("initContainers") or [], "image"),
        _joined(containers, "command", "args"),
    )


def pod_component(pod: JsonDict) -> str:
    """Which GPU component a pod runs ("" when none): as its DaemonSet would say."""
    return _component_of(pod, pod.get("spec") or {})


def daemonset_from_json(item: JsonDict) -> DaemonSetInfo:
    pod_spec = dig(item, "spec", "template", "spec", default={})
    containers: list[JsonDict] = pod_spec.get("containers") or []
    init_containers: list[JsonDict] = pod_spec.get("initContainers") or []
    component = _component_of(item, pod_spec)
    return DaemonSetInfo(
        namespace=str(dig(item, "metadata", "namespace", default="")),
        name=name_of(item),
        images=tuple(str(container.get("image", "")) for container in [*init_containers, *containers]),
        tolerations=tuple(pod_spec.get("tolerations") or ()),
        selector=dict(dig(item, "spec", "selector", "matchLabels", default={})),
        runtime_class=str(pod_spec.get("runtimeClassName") or ""),
        component=component,
        rolling_out=_rolling_out(item),
    )


def _rolling_out(item: JsonDict) -> bool:
    """The DaemonSet controller has not caught up: it has not seen this generation yet, or it
    has not placed (or updated) a pod on every node that should run one."""
    status = item.get("status") or {}
    generation = dig(item, "metadata", "generation", default=0) or 0
    if int(status.get("observedGeneration") or 0) < int(generation):
        return True
    desired = int(status.get("desiredNumberScheduled") or 0)
    return int(status.get("currentNumberScheduled") or 0) < desired or (
        int(status.get("updatedNumberScheduled", desired) or 0) < desired
    )


def list_gpu_daemonsets(api_client: ApiClient) -> list[DaemonSetInfo]:
    """The GPU-related DaemonSets of all namespaces (one request)."""
    with api_call("list", "daemonsets"):
        daemonsets = [daemonset_from_json(item) for item in list_json(api_client, "/apis/apps/v1/daemonsets")]
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
    # The DRA driver's plugin pod runs its GPU plugin in container "gpus" (next to "compute-domains").
    containers = sorted(containers, key=lambda container: container.get("name") != "gpus")
    waiting = next((dig(s, "state", "waiting", "reason", default="") for s in statuses), "")
    return PluginPod(
        namespace=str(dig(item, "metadata", "namespace", default="")),
        name=name_of(item),
        node=str(dig(item, "spec", "nodeName", default="") or _target_node(item)),
        phase=str(dig(item, "status", "phase", default="Unknown")),
        ready=ready,
        container=str(containers[0].get("name", "")) if containers else "",
        waiting_reason=waiting or "",
        restarts=sum(int(s.get("restartCount") or 0) for s in statuses),
    )


def _target_node(item: JsonDict) -> str:
    """The node a DaemonSet pod not yet bound is for: the controller creates it with a required
    node affinity on `metadata.name` and the scheduler binds it a moment later (a plugin just
    deployed has such pods, which are starting, not missing)."""
    terms = dig(
        item, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
        "nodeSelectorTerms", default=[],
    )  # fmt: skip
    for term in terms:
        for field in term.get("matchFields") or []:
            values = field.get("values") or []
            if field.get("key") == "metadata.name" and field.get("operator") == "In" and len(values) == 1:
                return str(values[0])
    return ""


def device_plugin_pods(api_client: ApiClient, daemonsets: list[DaemonSetInfo]) -> dict[str, PluginPod]:
    """node name → the device plugin pod running there (one request per device plugin DaemonSet)."""
    return daemonset_pods(api_client, [daemonset for daemonset in daemonsets if daemonset.is_device_plugin])


def daemonset_pods(api_client: ApiClient, daemonsets: list[DaemonSetInfo]) -> dict[str, PluginPod]:
    """node name → the pod of these DaemonSets running there, a ready one first (a request per
    DaemonSet and 500 pods)."""
    by_node: dict[str, PluginPod] = {}
    for daemonset in daemonsets:
        if not daemonset.selector:
            continue
        selector = ",".join(f"{key}={value}" for key, value in sorted(daemonset.selector.items()))
        with api_call("list", f"pods in {daemonset.namespace}"):
            pods = list_items(
                api_client,
                "/api/v1/namespaces/{namespace}/pods",
                query={"labelSelector": selector},
                namespace=daemonset.namespace,
            )
            for item in pods:
                pod = _plugin_pod(item)
                if pod.node and (pod.node not in by_node or pod.ready):
                    by_node[pod.node] = pod
    return by_node
