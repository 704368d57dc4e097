"""The sim plays NVIDIA's GPU Operator once a ClusterPolicy (nvidia.com/v1) exists.

Like the real controller it: labels the nodes NFD marked as NVIDIA PCI devices
(feature.node.kubernetes.io/pci-10de.present=true) with nvidia.com/gpu.present and the
nvidia.com/gpu.deploy.<operand>=true labels; creates the operand DaemonSets (operator_operands.py)
in its namespace (the policy's Helm release namespace) for the operands the policy enables; deletes
them when an operand is disabled or the policy is gone; and writes the policy's status
(state ready/notReady, namespace, conditions Ready and Error with the real reasons and messages).

Operands change the simulated host: a Ready driver pod leaves the node with a loaded driver, a
Ready toolkit pod with containerd configured (the node's effective NodeSpec), so the device
plugin operand advertises nvidia.com/gpu through the kubelet's usual path. The original host state
is kept, and restored when the policy is deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gpuctl import defaults
from gpuctl.sim.runtime import crd_objects, dra, kubelet, objects
from gpuctl.sim.runtime import operator_gpucluster as gpucluster
from gpuctl.sim.runtime.daemonsets import owned
from gpuctl.sim.runtime.objects import GPU, NFD_PCI_LABEL
from gpuctl.sim.runtime.operator_operands import (
    DEPLOY_COMPONENTS,
    DEPLOY_LABEL,
    HASH_ANNOTATION,
    MANAGED_BY,
    OPERANDS,
    enabled,
    is_nfd_worker,
    is_operand,
    owner_reference,
    section,
    wanted,
)
from gpuctl.sim.runtime.operator_operands import daemonset as operand_daemonset
from gpuctl.sim.runtime.predicates import is_terminated
from gpuctl.sim.runtime.state import CLUSTER_POLICIES, GPU_CLUSTERS
from gpuctl.sim.runtime.store import Change, clone, rfc3339
from gpuctl.sim.scenario import NodeSpec

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
DAEMONSETS = "daemonsets.apps"
READY_MESSAGE = "ClusterPolicy is ready as all resources have been successfully reconciled"
RUNTIME_CLASSES = "runtimeclasses.node.k8s.io"
NFD_PREFIX = "feature.node.kubernetes.io/"
# The PCI labels NFD gives NVIDIA devices that the Operator counts as GPU nodes (10de: NVIDIA).
GPU_PCI_LABELS = (NFD_PCI_LABEL, NFD_PREFIX + "pci-0302_10de.present", NFD_PREFIX + "pci-0300_10de.present")


@dataclass(frozen=True)
class Readiness:
    driver: bool
    toolkit: bool
    plugin: bool


# -- what operand pods ask (operand_pods.py) ---------------------------------------------------


def _host(cluster: ClusterState, node_name: str) -> NodeSpec:
    return cluster.operator.original_hosts.get(node_name) or cluster.node_spec(node_name)


def host_driver_loaded(cluster: ClusterState, node_name: str) -> bool:
    """The host itself has an NVIDIA driver loaded (installed, or a mismatched upgrade)."""
    host = _host(cluster, node_name)
    return host.gpus > 0 and host.driver in ("installed", "mismatch")


def driver_version(cluster: ClusterState) -> str:
    return str(section(cluster.operator.spec, "driver").get("version") or "")


def register_pod(cluster: ClusterState, pod: Obj) -> None:
    """An operand pod the kubelet is starting: the one to look at for its operand on its node."""
    meta = pod["metadata"]
    key = ((meta.get("labels") or {}).get("app", ""), str(pod["spec"].get("nodeName")))
    cluster.operator.pods_by_node[key] = (meta["namespace"], meta["name"], meta["uid"])


def _operand_ready(cluster: ClusterState, app: str, node_name: str) -> bool:
    """The operand's pod on the node (the last one the kubelet started there) is Ready."""
    found = cluster.operator.pods_by_node.get((app, node_name))
    pod = cluster.store.get("pods", found[0], found[1]) if found else None
    if pod is None or found is None or pod["metadata"]["uid"] != found[2] or is_terminated(pod):
        return False
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def node_readiness(cluster: ClusterState, node_name: str) -> Readiness:
    """What the validator's stages find on a node: a driver (the operand's, else the host's), a
    configured toolkit (likewise), and nvidia.com/gpu allocatable (when the plugin is enabled)."""
    spec, host = cluster.operator.spec, _host(cluster, node_name)
    if enabled(spec, "driver"):
        driver = _operand_ready(cluster, "nvidia-driver-daemonset", node_name)
    else:
        driver = host.driver == "installed" and host.gpus > 0
    if enabled(spec, "toolkit"):
        toolkit = _operand_ready(cluster, "nvidia-container-toolkit-daemonset", node_name)
    else:
        toolkit = host.toolkit == "configured"
    node = cluster.store.get("nodes", "", node_name) or {}
    allocatable = int(str((node.get("status") or {}).get("allocatable", {}).get(GPU, "0")) or 0)
    plugin = allocatable > 0 or not enabled(spec, "devicePlugin")
    if driver and toolkit:
        sync_host(cluster, node_name)  # what the plugin starting next will find
    return Readiness(driver, toolkit, plugin)


def wait_for_node_change(cluster: ClusterState, pod: Obj) -> None:
    """An init container waits on the node's state: start the pod again after the next reconcile."""
    meta = pod["metadata"]
    cluster.operator.waiting_pods[meta["uid"]] = (meta["namespace"], meta["name"])


def install(cluster: ClusterState, spec: Obj, created: float) -> None:
    """The scenario's `gpuOperator`: the CRD, the namespace and a ClusterPolicy, present at start."""
    store = cluster.store
    if store.get("namespaces", "", defaults.OPERATOR_NAMESPACE) is None:
        store.add("namespaces", objects.namespace(defaults.OPERATOR_NAMESPACE), created)
    store.add("customresourcedefinitions.apiextensions.k8s.io", crd_objects.cluster_policy_crd(), created)
    policy = {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy", "generation": 1},
        "spec": clone(spec),
    }
    store.add(CLUSTER_POLICIES, policy, created)


# -- what the Operator watches -------------------------------------------------------------------


def watch(cluster: ClusterState) -> None:
    """Its ClusterPolicies and GPUClusters, the nodes it labels, its DaemonSets and their pods
    (operand readiness), the DRA driver's ResourceSlices (the GPUCluster validator waits on them)."""
    for resource in (CLUSTER_POLICIES, GPU_CLUSTERS, "nodes", DAEMONSETS, dra.SLICES):
        cluster.store.watch(resource, lambda _: cluster.operator_soon())
    cluster.store.watch("pods", lambda change: _pod_changed(cluster, change))


def _pod_changed(cluster: ClusterState, change: Change) -> None:
    if owned(change.obj) or (change.previous is not None and owned(change.previous)):
        cluster.operator_soon()


# -- the reconcile loop ------------------------------------------------------------------------


def _policies(cluster: ClusterState) -> list[Obj]:
    policies = cluster.store.items(CLUSTER_POLICIES)
    return sorted(policies, key=lambda p: (p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))


def reconcile(cluster: ClusterState) -> None:
    state = cluster.operator
    policies = _policies(cluster)
    gpu_clusters = gpucluster.sorted_by_age(cluster.store.items(GPU_CLUSTERS))
    if policies and gpu_clusters:  # both controllers refuse, and change nothing else
        _refuse_both(cluster, policies, gpu_clusters)
        return
    if not policies:
        if state.active and not gpu_clusters:
            _apply_daemonsets(cluster, [])
            _apply_runtime_classes(cluster, {}, None)
            _apply_device_classes(cluster, None)
            _restore_hosts(cluster)
            state.active, state.spec, state.waiting_pods, state.pods_by_node = False, {}, {}, {}
        if gpu_clusters:
            _reconcile_gpu_cluster(cluster, gpu_clusters[0])
        return
    policy, ignored = policies[0], policies[1:]
    for other in ignored:  # the Operator reconciles one ClusterPolicy and ignores the others
        _write_status(cluster, other, {"state": "ignored"})
    annotations = policy["metadata"].get("annotations") or {}
    state.active = True
    state.spec = section(policy, "spec")
    state.namespace = annotations.get("meta.helm.sh/release-namespace") or defaults.OPERATOR_NAMESPACE
    has_nfd, gpu_nodes = _label_nodes(cluster)
    desired = []
    if gpu_nodes and cluster.store.get("namespaces", "", state.namespace) is not None:
        desired = [operand_daemonset(state.spec, op, state.namespace, policy) for op in wanted(state.spec)]
    _apply_daemonsets(cluster, desired)
    _apply_runtime_classes(cluster, state.spec, policy)
    for node_name in gpu_nodes:
        sync_host(cluster, node_name)
    _retry_waiting_pods(cluster)
    _write_status(cluster, policy, _status(cluster, has_nfd, bool(gpu_nodes), desired))


def _refuse_both(cluster: ClusterState, policies: list[Obj], gpu_clusters: list[Obj]) -> None:
    cluster.operator.namespace = cluster.operator.namespace or defaults.OPERATOR_NAMESPACE
    for policy in policies:
        _write_status(cluster, policy, gpucluster.policy_conflict(gpu_clusters[0]["metadata"]["name"]))
    for gpu_cluster in gpu_clusters:
        status = gpucluster.prerequisite_not_met(policies[0]["metadata"]["name"])
        _write_status(cluster, gpu_cluster, status, GPU_CLUSTERS)


def _reconcile_gpu_cluster(cluster: ClusterState, gpu_cluster: Obj) -> None:
    """GPUCluster mode: the DRA driver's kubelet plugin and the DRA validator on GPU nodes."""
    state = cluster.operator
    annotations = gpu_cluster["metadata"].get("annotations") or {}
    state.active, state.spec = True, {}  # no ClusterPolicy spec: no driver or toolkit operand
    state.namespace = annotations.get("meta.helm.sh/release-namespace") or defaults.OPERATOR_NAMESPACE
    _label_nodes(cluster, gpucluster.DEPLOY_COMPONENTS_DRA, gpucluster.SWEPT_COMPONENTS)
    namespace = cluster.store.get("namespaces", "", state.namespace)
    desired = []
    if namespace is not None:
        labels = namespace["metadata"].get("labels") or {}
        if labels.get(gpucluster.ADMIN_ACCESS_LABEL) != "true":
            labels = {**labels, gpucluster.ADMIN_ACCESS_LABEL: "true"}
            cluster.store.put(
                "namespaces", dict(namespace, metadata=dict(namespace["metadata"], labels=labels))
            )
        desired = gpucluster.daemonsets(gpu_cluster, state.namespace)
    _apply_daemonsets(cluster, desired)
    _apply_runtime_classes(cluster, {}, None)
    _apply_device_classes(cluster, gpu_cluster)
    # A DaemonSet with nothing desired counts as ready: this mode has no NoGPUNodes state.
    ready = bool(desired) and all(_daemonset_ready(cluster, ds) and _observed(cluster, ds) for ds in desired)
    _write_status(cluster, gpu_cluster, gpucluster.status(ready), GPU_CLUSTERS)


def _observed(cluster: ClusterState, ds: Obj) -> bool:
    """The DaemonSet controller has counted the DaemonSet's nodes (before that, nothing is desired)."""
    current = cluster.store.get(DAEMONSETS, ds["metadata"]["namespace"], ds["metadata"]["name"]) or {}
    return "observedGeneration" in (current.get("status") or {})


def _apply_device_classes(cluster: ClusterState, gpu_cluster: Obj | None) -> None:
    """GPUCluster mode's DeviceClasses (never one that someone else, e.g. the driver's chart, made)."""
    store = cluster.store
    wanted_classes = gpucluster.device_classes(gpu_cluster) if gpu_cluster is not None else []
    names = {c["metadata"]["name"] for c in wanted_classes}
    for existing in store.items(dra.CLASSES):
        if is_operand(existing) and existing["metadata"]["name"] not in names:
            store.remove(dra.CLASSES, "", existing["metadata"]["name"])
    for device_class in wanted_classes:
        if store.get(dra.CLASSES, "", device_class["metadata"]["name"]) is None:
            store.add(dra.CLASSES, device_class)


def _label_nodes(
    cluster: ClusterState,
    components: tuple[str, ...] = DEPLOY_COMPONENTS,
    swept: tuple[str, ...] = (),
) -> tuple[bool, list[str]]:
    """Label GPU nodes for the operands (keeping a value an admin set, e.g. =false to opt a node
    out); drop the labels from nodes NFD no longer reports as GPU nodes, and the other mode's
    labels `swept` from GPU nodes. (has NFD labels, GPU nodes)"""
    has_nfd, gpu_nodes = False, []
    nfd_workers = _nfd_worker_nodes(cluster)
    for node in cluster.store.items("nodes"):
        labels = dict(node["metadata"].get("labels") or {})
        name = node["metadata"]["name"]
        if name in nfd_workers and cluster.node_spec(name).gpus > 0:
            labels.setdefault(NFD_PCI_LABEL, "true")  # what NFD's PCI source finds: NVIDIA, 10de
        has_nfd = has_nfd or any(key.startswith(NFD_PREFIX) for key in labels)
        is_gpu = any(labels.get(key) == "true" for key in GPU_PCI_LABELS)
        wanted_labels = {DEPLOY_LABEL.format(c) for c in components} | {"nvidia.com/gpu.present"}
        if is_gpu:
            gpu_nodes.append(name)
            kept = {k: v for k, v in labels.items() if k not in {DEPLOY_LABEL.format(c) for c in swept}}
            updated = {**dict.fromkeys(wanted_labels, "true"), **kept}
        else:
            updated = {
                k: v for k, v in labels.items() if k not in wanted_labels or k == "nvidia.com/gpu.present"
            }
        if updated != node["metadata"].get("labels"):
            cluster.store.put("nodes", dict(node, metadata=dict(node["metadata"], labels=updated)))
    return has_nfd, gpu_nodes


def _nfd_worker_nodes(cluster: ClusterState) -> set[str]:
    return {
        str(pod["spec"].get("nodeName"))
        for pod in cluster.store.items("pods")
        if is_nfd_worker(pod) and (pod.get("status") or {}).get("phase") == "Running"
    }


def _apply_daemonsets(cluster: ClusterState, desired: list[Obj]) -> None:
    """Create or update the wanted operand DaemonSets; delete the Operator's others."""
    store = cluster.store
    wanted_keys = {(ds["metadata"]["namespace"], ds["metadata"]["name"]) for ds in desired}
    for existing in store.items(DAEMONSETS):
        meta = existing["metadata"]
        if is_operand(existing) and (meta["namespace"], meta["name"]) not in wanted_keys:
            store.remove(DAEMONSETS, meta["namespace"], meta["name"])
    for ds in desired:
        meta = ds["metadata"]
        current = store.get(DAEMONSETS, meta["namespace"], meta["name"])
        if current is None:
            store.add(DAEMONSETS, ds)
        elif (current["metadata"].get("annotations") or {}).get(HASH_ANNOTATION) != meta["annotations"][
            HASH_ANNOTATION
        ]:
            generation = int(current["metadata"].get("generation", 1)) + 1
            metadata = dict(current["metadata"], annotations=meta["annotations"], generation=generation)
            store.put(DAEMONSETS, dict(current, metadata=metadata, spec=ds["spec"]))


def _apply_runtime_classes(cluster: ClusterState, spec: Obj, policy: Obj | None) -> None:
    """The RuntimeClasses the Operator creates for the runtimes its toolkit configures:
    spec.operator.runtimeClass (handler nvidia), with CDI also nvidia-cdi and nvidia-legacy."""
    wanted_classes: dict[str, str] = {}
    if policy is not None:
        wanted_classes[str(section(spec, "operator").get("runtimeClass") or "nvidia")] = "nvidia"
        if enabled(spec, "cdi", False):
            wanted_classes.update({"nvidia-cdi": "nvidia-cdi", "nvidia-legacy": "nvidia-legacy"})
    store = cluster.store
    for existing in store.items(RUNTIME_CLASSES):
        if is_operand(existing) and existing["metadata"]["name"] not in wanted_classes:
            store.remove(RUNTIME_CLASSES, "", existing["metadata"]["name"])
    for name, handler in wanted_classes.items():
        if store.get(RUNTIME_CLASSES, "", name) is None and policy is not None:
            metadata = {
                "name": name,
                "labels": {MANAGED_BY[0]: MANAGED_BY[1]},
                "ownerReferences": [owner_reference(policy)],
            }
            store.add(
                RUNTIME_CLASSES,
                {
                    "apiVersion": "node.k8s.io/v1",
                    "kind": "RuntimeClass",
                    "metadata": metadata,
                    "handler": handler,
                },
            )


def sync_host(cluster: ClusterState, node_name: str) -> None:
    """The node's effective host: the original, plus what Ready driver/toolkit operands installed."""
    state = cluster.operator
    original = state.original_hosts.setdefault(node_name, cluster.node_spec(node_name))
    changes: Obj = {}
    if enabled(state.spec, "driver") and _operand_ready(cluster, "nvidia-driver-daemonset", node_name):
        changes.update(driver="installed", driver_version=driver_version(cluster) or original.driver_version)
    if enabled(state.spec, "toolkit") and _operand_ready(
        cluster, "nvidia-container-toolkit-daemonset", node_name
    ):
        changes.update(toolkit="configured")
    effective = replace(original, **changes)
    if cluster.node_specs.get(node_name) != effective:
        cluster.node_specs[node_name] = effective
        kubelet.refresh_node_gpus(cluster, node_name)


def _restore_hosts(cluster: ClusterState) -> None:
    for node_name, original in cluster.operator.original_hosts.items():
        if cluster.node_specs.get(node_name) != original:
            cluster.node_specs[node_name] = original
            kubelet.refresh_node_gpus(cluster, node_name)
    cluster.operator.original_hosts.clear()


def _retry_waiting_pods(cluster: ClusterState) -> None:
    waiting, cluster.operator.waiting_pods = cluster.operator.waiting_pods, {}
    for uid, (namespace, name) in waiting.items():
        pod = cluster.store.get("pods", namespace, name)
        if pod is not None and pod["metadata"]["uid"] == uid and not pod["metadata"].get("deletionTimestamp"):
            kubelet.start(cluster, namespace, name, uid)


# -- the ClusterPolicy's status: the real Operator's states, condition reasons and messages
# (controllers/clusterpolicy_controller.go, internal/conditions) ---------------------------------


def _daemonset_ready(cluster: ClusterState, ds: Obj) -> bool:
    """As the Operator judges a DaemonSet: nothing desired, or every desired pod available."""
    current = cluster.store.get(DAEMONSETS, ds["metadata"]["namespace"], ds["metadata"]["name"])
    status = (current or {}).get("status") or {}
    desired = int(status.get("desiredNumberScheduled", 0))
    return desired == 0 or (
        int(status.get("numberAvailable", 0)) >= desired and not status.get("numberUnavailable")
    )


def _status(cluster: ClusterState, has_nfd: bool, has_gpu_nodes: bool, desired: list[Obj]) -> Obj:
    if not has_nfd:
        return _conditions_ready("NFDLabelsMissing", "No NFD labels found")
    if not has_gpu_nodes:
        return _conditions_ready(
            "NoGPUNodes", "No GPU node found, watching for new nodes to join the cluster."
        )
    names = {op.name: op.state for op in OPERANDS}
    not_ready = [names[ds["metadata"]["name"]] for ds in desired if not _daemonset_ready(cluster, ds)]
    if not not_ready:
        return _conditions_ready("Reconciled", READY_MESSAGE)
    message = f"ClusterPolicy is not ready, states not ready: [{' '.join(not_ready)}]"
    return {
        "state": "notReady",
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "OperandNotReady", "message": message},
            {"type": "Error", "status": "True", "reason": "OperandNotReady", "message": message},
        ],
    }


def _conditions_ready(reason: str, message: str) -> Obj:
    return {
        "state": "ready",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": reason, "message": message},
            {"type": "Error", "status": "False", "reason": "Ready", "message": ""},
        ],
    }


def _write_status(cluster: ClusterState, policy: Obj, status: Obj, resource: str = CLUSTER_POLICIES) -> None:
    """Write status.state, .namespace and .conditions; a condition keeps its lastTransitionTime
    while its status stays the same (no write at all when nothing changed)."""
    old = policy.get("status") or {}
    previous = {c.get("type"): c for c in old.get("conditions") or []}
    for condition in status.get("conditions", []):
        before = previous.get(condition["type"]) or {}
        same = before.get("status") == condition["status"]
        condition["lastTransitionTime"] = before.get("lastTransitionTime") if same else rfc3339()
    if status["state"] != "ignored":
        status["namespace"] = cluster.operator.namespace
    if old == status:
        return
    cluster.store.put(resource, dict(policy, status=status))
