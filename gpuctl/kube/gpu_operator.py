"""What NVIDIA's GPU Operator reports: its ClusterPolicy's state and its operand pods per node.

The operand DaemonSets carry fixed names (and an `app` label of the same name); the validator's
init containers are the Operator's own per-node checks, in order: driver, toolkit, CUDA, plugin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, dig, labels_of, list_json, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

VALIDATOR = "nvidia-operator-validator"
DRIVER = "nvidia-driver-daemonset"
TOOLKIT = "nvidia-container-toolkit-daemonset"
DEVICE_PLUGIN = "nvidia-device-plugin-daemonset"
OPERANDS = (VALIDATOR, DRIVER, TOOLKIT, DEVICE_PLUGIN)
VALIDATIONS = ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation")
POLICY_GROUP, POLICY_VERSION, POLICY_PLURAL = "nvidia.com", "v1", "clusterpolicies"
# The GPU Operator's GPUCluster (26.7: api/nvidia/v1alpha1/gpucluster_types.go, a cluster-scoped
# singleton named gpu-cluster; the chart creates it with gpuCluster.deployCR=true).
GPU_CLUSTER_VERSION, GPU_CLUSTER_PLURAL = "v1alpha1", "gpuclusters"


@dataclass(frozen=True)
class ContainerState:
    name: str
    state: str  # running | waiting | terminated
    reason: str  # CrashLoopBackOff, Completed, PodInitializing, ...
    exit_code: int | None
    ready: bool
    restarts: int

    @property
    def succeeded(self) -> bool:
        return self.state == "terminated" and self.exit_code == 0


@dataclass(frozen=True)
class OperandPod:
    """One operand pod on one node: which operand, its phase, its init and main containers."""

    operand: str
    namespace: str
    name: str
    node: str
    phase: str
    ready: bool
    init_containers: tuple[ContainerState, ...]
    containers: tuple[ContainerState, ...]

    @property
    def crash_looping(self) -> bool:
        return any(c.reason == "CrashLoopBackOff" for c in (*self.init_containers, *self.containers))

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in (*self.init_containers, *self.containers))


def _container(status: JsonDict) -> ContainerState:
    state_doc: JsonDict = status.get("state") or {}
    state = next(iter(state_doc), "waiting")
    detail: JsonDict = state_doc.get(state) or {}
    code = detail.get("exitCode")
    return ContainerState(
        name=str(status.get("name") or ""),
        state=state,
        reason=str(detail.get("reason") or ""),
        exit_code=int(code) if code is not None else None,
        ready=bool(status.get("ready")),
        restarts=int(status.get("restartCount") or 0),
    )


def _operand(item: JsonDict) -> str:
    app = labels_of(item).get("app", "")
    if app in OPERANDS:
        return app
    return next((operand for operand in OPERANDS if name_of(item).startswith(operand + "-")), "")


def operand_pod(item: JsonDict) -> OperandPod | None:
    operand = _operand(item)
    return pod_state(item, operand) if operand else None


def pod_state(item: JsonDict, operand: str) -> OperandPod:
    """Any pod's phase, readiness and container states, as an OperandPod named `operand`."""
    conditions = dig(item, "status", "conditions", default=[]) or []
    return OperandPod(
        operand=operand,
        namespace=str(dig(item, "metadata", "namespace", default="")),
        name=name_of(item),
        node=str(dig(item, "spec", "nodeName", default="") or ""),
        phase=str(dig(item, "status", "phase", default="Pending") or "Pending"),
        ready=any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions),
        init_containers=tuple(
            map(_container, dig(item, "status", "initContainerStatuses", default=[]) or [])
        ),
        containers=tuple(map(_container, dig(item, "status", "containerStatuses", default=[]) or [])),
    )


def list_operand_pods(api_client: ApiClient, namespace: str) -> list[OperandPod]:
    """The Operator's operand pods in `namespace` (one request)."""
    with api_call("list", f"pods in {namespace}"):
        items = list_json(api_client, "/api/v1/namespaces/{namespace}/pods", namespace=namespace)
    pods = (operand_pod(item) for item in items)
    return [pod for pod in pods if pod is not None]


def cluster_policy_states(api_client: ApiClient) -> dict[str, str] | None:
    """ClusterPolicy name → status.state (ready, notReady, ""); None when the CRD is not served."""
    return _custom_resource_states(api_client, POLICY_VERSION, POLICY_PLURAL)


def gpu_cluster_states(api_client: ApiClient) -> dict[str, str] | None:
    """GPUCluster name → status.state (ready, notReady, disabled, ""): the GPU Operator's DRA mode
    (26.7+), which cannot coexist with a ClusterPolicy; None when the CRD is not served."""
    return _custom_resource_states(api_client, GPU_CLUSTER_VERSION, GPU_CLUSTER_PLURAL)


def _custom_resource_states(api_client: ApiClient, version: str, plural: str) -> dict[str, str] | None:
    items = _custom_resources(api_client, version, plural)
    if items is None:
        return None
    return {name_of(item): str(dig(item, "status", "state", default="") or "") for item in items}


def _custom_resources(
    api_client: ApiClient, version: str, plural: str, *, forbidden_unknown: bool = False
) -> list[JsonDict] | None:
    """The nvidia.com resources; None when the CRD is not served (or, with `forbidden_unknown`,
    when the caller may not list them: an optional read then leaves its answer unknown)."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("list", plural):
            try:
                return list_json(
                    api_client,
                    "/apis/{group}/{version}/{plural}",
                    group=POLICY_GROUP,
                    version=version,
                    plural=plural,
                )
            except ApiException as error:
                # Inside api_call, which turns a 403 into an exit-3 error.
                if forbidden_unknown and error.status == 403:
                    return None
                raise
    except ApiException as error:
        if error.status == 404:
            return None
        raise


@dataclass(frozen=True)
class GpuClusterStatus:
    """A GPUCluster's status as its controller writes it (controllers/gpucluster_controller.go):
    state ready | notReady, and the Error condition's reason and message while not ready
    (PrerequisiteNotMet beside a ClusterPolicy, OperandNotReady, ReconcileFailed)."""

    name: str
    state: str
    reason: str = ""
    message: str = ""

    @property
    def ready(self) -> bool:
        return self.state == "ready"


def _gpu_cluster_status(item: JsonDict) -> GpuClusterStatus:
    conditions: list[JsonDict] = dig(item, "status", "conditions", default=[]) or []
    error: JsonDict = next(
        (c for c in conditions if c.get("type") == "Error" and c.get("status") == "True"), {}
    )
    return GpuClusterStatus(
        name=name_of(item),
        state=str(dig(item, "status", "state", default="") or ""),
        reason=str(error.get("reason") or ""),
        message=str(error.get("message") or ""),
    )


def read_gpu_clusters(api_client: ApiClient) -> tuple[GpuClusterStatus, ...] | None:
    """Every GPUCluster's status; None when the CRD is not served (a 403 is exit 3, as for the
    ClusterPolicy: a denied read must not read as "no GPUCluster")."""
    items = _custom_resources(api_client, GPU_CLUSTER_VERSION, GPU_CLUSTER_PLURAL)
    return None if items is None else tuple(sorted(map(_gpu_cluster_status, items), key=lambda g: g.name))


def operator_mode(api_client: ApiClient) -> str:
    """Which of its modes the GPU Operator runs in: ClusterPolicy, GPUCluster, `both` (a conflict
    both controllers refuse), or "" (neither resource, or not served)."""
    policies = _custom_resources(api_client, POLICY_VERSION, POLICY_PLURAL)
    gpu_clusters = read_gpu_clusters(api_client)
    return mode_of(bool(policies), bool(gpu_clusters))


def mode_of(has_policy: bool, has_gpu_cluster: bool) -> str:
    if has_policy and has_gpu_cluster:
        return "both"
    return "GPUCluster" if has_gpu_cluster else ("ClusterPolicy" if has_policy else "")


def kubelet_versions(api_client: ApiClient) -> list[str]:
    """Every node's kubelet version (`v1.31.4+k3s1` names the distribution)."""
    with api_call("list", "nodes"):
        items = list_json(api_client, "/api/v1/nodes")
    return [str(dig(item, "status", "nodeInfo", "kubeletVersion", default="") or "") for item in items]
