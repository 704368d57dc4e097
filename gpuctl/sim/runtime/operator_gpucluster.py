"""The GPU Operator's second mode, as the sim plays it: a GPUCluster (nvidia.com/v1alpha1, the
cluster-scoped singleton `gpu-cluster`) deploys NVIDIA's DRA driver for GPUs instead of the device
plugin. Modelled on NVIDIA/gpu-operator release-26.7 (commit 10ee5b3638b89e11e949412aafa5ba99279c3721):

- controllers/gpucluster_controller.go: a ClusterPolicy beside it is an unmet prerequisite
  (state notReady, condition Error/PrerequisiteNotMet); otherwise the operator namespace gets the
  label resource.kubernetes.io/admin-access=true, the operand states are synced, and the status is
  ready (Ready/Reconciled) or notReady (Error/OperandNotReady, "Waiting for operand pods to be ready");
- controllers/clusterpolicy_controller.go: a ClusterPolicy beside a GPUCluster is notReady with
  Error/ReconcileFailed, and nothing of it is reconciled (its operands stay as they are);
- internal/state/manager.go newGPUClusterStates: the DRA driver, DCGM, DCGM Exporter and the DRA
  validator; DCGM and the exporter only where spec.dcgm / spec.dcgmExporter enable them (not modelled);
- manifests/state-dra-driver: DeviceClasses gpu.nvidia.com and mig.nvidia.com (no
  extendedResourceName), DaemonSet nvidia-dra-driver-kubelet-plugin (container `gpus`, nodeSelector
  nvidia.com/gpu.deploy.dra-driver=true); manifests/state-dra-validation: DaemonSet
  nvidia-dra-validator, its pods labelled app=nvidia-operator-validator, an init container
  gpu-validation (`nvidia-smi -L` on a GPU claimed with adminAccess). The sim's allocator has no
  admin access, so the validator claims nothing: its init container waits for the node's
  ResourceSlice, which is what the claim's scheduling waits on;
- controllers/state_manager.go gpuClusterStateLabels: the deploy labels put on GPU nodes; the
  ClusterPolicy stack's own labels are swept (nodelabeling_controller.go updateGPUStateLabels).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gpuctl.defaults import OPERATOR_CHART_VERSION
from gpuctl.sim.runtime import defaults, dra
from gpuctl.sim.runtime.objects import short_hash
from gpuctl.sim.runtime.operator_operands import (
    DEPLOY_COMPONENTS,
    DEPLOY_LABEL,
    HASH_ANNOTATION,
    MANAGED_BY,
    owner_reference,
    section,
)

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
KIND = "GPUCluster"
KUBELET_PLUGIN = "nvidia-dra-driver-kubelet-plugin"
VALIDATOR = "nvidia-dra-validator"
GPU_VALIDATION = "gpu-validation"  # the validator's init container
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
# gpuClusterStateLabels: driver, dra-driver, dra-validator, dcgm-dra, dcgm-exporter-dra.
DEPLOY_COMPONENTS_DRA = ("driver", "dra-driver", "dra-validator", "dcgm-dra", "dcgm-exporter-dra")
# The ClusterPolicy stack's labels that this mode sweeps off a node (the driver's is shared).
SWEPT_COMPONENTS = tuple(c for c in DEPLOY_COMPONENTS if c not in DEPLOY_COMPONENTS_DRA)
READY_MESSAGE = "All resources have been successfully reconciled"
NOT_READY_MESSAGE = "Waiting for operand pods to be ready"


def sorted_by_age(items: list[Obj]) -> list[Obj]:
    return sorted(items, key=lambda i: (i["metadata"].get("creationTimestamp", ""), i["metadata"]["name"]))


def _plugin_image(spec: Obj) -> str:
    driver = section(spec, "draDriver")
    repository, image, version = (driver.get(k) for k in ("repository", "image", "version"))
    if repository and image and version:
        return f"{repository}/{image}:{version}"
    return dra.PLUGIN_IMAGE


def _pod_spec(spec: Obj, component: str, service_account: str) -> Obj:
    daemonsets = section(spec, "daemonsets")
    return {
        "nodeSelector": {DEPLOY_LABEL.format(component): "true"},
        "tolerations": [dict(t) for t in daemonsets.get("tolerations") or [] if isinstance(t, dict)],
        "priorityClassName": str(daemonsets.get("priorityClassName") or "system-node-critical"),
        "serviceAccountName": service_account,
    }


def _kubelet_plugin(spec: Obj) -> tuple[Obj, Obj, Obj]:
    """(DaemonSet labels, pod labels, pod spec)"""
    pod_spec = _pod_spec(spec, "dra-driver", "nvidia-dra-driver-kubeletplugin")
    pod_spec["containers"] = [
        {
            "name": "gpus",
            "image": _plugin_image(spec),
            "command": ["bash", "-c"],
            "args": [f'exec {dra.PLUGIN_BINARY} -v "${{LOG_VERBOSITY}}"'],
        }
    ]
    labels = {
        "app.kubernetes.io/name": "nvidia-dra-driver",
        "app.kubernetes.io/component": KUBELET_PLUGIN,
        "app": KUBELET_PLUGIN,
    }
    return labels, dict(labels), pod_spec


def _validator(spec: Obj) -> tuple[Obj, Obj, Obj]:
    image = f"nvcr.io/nvidia/cloud-native/gpu-operator-validator:{OPERATOR_CHART_VERSION}"
    pod_spec = _pod_spec(spec, "dra-validator", VALIDATOR)
    pod_spec["initContainers"] = [
        {"name": GPU_VALIDATION, "image": image, "command": ["sh", "-c", "nvidia-smi -L"]}
    ]
    pod_spec["containers"] = [
        {
            "name": VALIDATOR,
            "image": image,
            "command": ["sh", "-c", "echo all validations are successful; while true; do sleep 86400; done"],
        }
    ]
    labels = {"app.kubernetes.io/name": VALIDATOR, "app.kubernetes.io/component": VALIDATOR}
    # The pods carry app=nvidia-operator-validator, the label the upgrade controller selects on.
    return {**labels, "app": VALIDATOR}, {**labels, "app": "nvidia-operator-validator"}, pod_spec


def daemonsets(gpu_cluster: Obj, namespace: str) -> list[Obj]:
    """The GPUCluster's operand DaemonSets, owned by it, in the Operator's namespace."""
    spec = section(gpu_cluster, "spec")
    wanted = []
    for name, (ds_labels, pod_labels, pod_spec) in (
        (KUBELET_PLUGIN, _kubelet_plugin(spec)),
        (VALIDATOR, _validator(spec)),
    ):
        labels = {**ds_labels, MANAGED_BY[0]: MANAGED_BY[1]}
        template = {"metadata": {"labels": {**pod_labels, MANAGED_BY[0]: MANAGED_BY[1]}}, "spec": pod_spec}
        defaults.apply_pod_spec_defaults(template)
        selector = {"app.kubernetes.io/name": labels["app.kubernetes.io/name"]}
        body = {"selector": {"matchLabels": selector}, "template": template}
        wanted.append(
            {
                "kind": "DaemonSet",
                "apiVersion": "apps/v1",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": labels,
                    "annotations": {HASH_ANNOTATION: short_hash(json.dumps(body, sort_keys=True))},
                    "ownerReferences": [owner_reference(gpu_cluster)],
                    "generation": 1,
                },
                "spec": dict(body, updateStrategy={"type": "RollingUpdate"}),
                "status": {"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0},
            }
        )
    return wanted


def device_classes(gpu_cluster: Obj) -> list[Obj]:
    """The DeviceClasses the DRA driver state renders (the same selectors as the driver's chart)."""
    classes = dra.device_classes()
    for device_class in classes:
        device_class["metadata"] = {
            "name": device_class["metadata"]["name"],
            "labels": {MANAGED_BY[0]: MANAGED_BY[1]},
            "ownerReferences": [owner_reference(gpu_cluster)],
        }
    return classes


def gpu_validated(cluster: ClusterState, node_name: str) -> bool:
    """The validator's gpu-validation: the node's DRA driver publishes a GPU to claim."""
    published = cluster.store.get(dra.SLICES, "", dra.slice_name(node_name))
    return published is not None and bool(published["spec"].get("devices"))


# -- status: the GPUCluster controller's states, reasons and messages --------------------------


def _error(state: str, reason: str, message: str) -> Obj:
    return {
        "state": state,
        "conditions": [
            {"type": "Ready", "status": "False", "reason": "Error", "message": ""},
            {"type": "Error", "status": "True", "reason": reason, "message": message},
        ],
    }


def status(ready: bool) -> Obj:
    if not ready:
        return _error("notReady", "OperandNotReady", NOT_READY_MESSAGE)
    return {
        "state": "ready",
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "Reconciled", "message": READY_MESSAGE},
            {"type": "Error", "status": "False", "reason": "Ready", "message": ""},
        ],
    }


def prerequisite_not_met(policy_name: str) -> Obj:
    """A ClusterPolicy exists: the GPUCluster controller deploys nothing (validatePrerequisites)."""
    message = (
        f"A ClusterPolicy CR {json.dumps(policy_name)} exists; "
        "a ClusterPolicy CR and GPUCluster CR may not exist at the same time"
    )
    return _error("notReady", "PrerequisiteNotMet", message)


def policy_conflict(gpu_cluster_name: str) -> Obj:
    """A GPUCluster exists: the ClusterPolicy controller stops before reconciling anything."""
    message = (
        f"conflicting GPUCluster resource {json.dumps(gpu_cluster_name)} detected; "
        "ClusterPolicy and GPUCluster cannot co-exist"
    )
    return _error("notReady", "ReconcileFailed", message)
