"""The operand DaemonSets the GPU Operator creates from a ClusterPolicy: their real names, labels,
node selectors (nvidia.com/gpu.deploy.<operand>=true) and init containers; images from the policy.

Only what the simulated kubelet and gpuctl look at is modelled: no volumes, no probes, no
runtimeClassName (the sim's operands are gated by their validation init containers instead).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gpuctl.defaults import OPERATOR_CHART_VERSION
from gpuctl.sim.runtime import defaults
from gpuctl.sim.runtime.objects import short_hash

Obj = dict[str, Any]
MANAGED_BY = ("app.kubernetes.io/managed-by", "gpu-operator")
VALIDATION_STAGES = ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation")
DRIVER_MANAGER = "k8s-driver-manager"
DEPLOY_LABEL = "nvidia.com/gpu.deploy.{}"
HASH_ANNOTATION = "nvidia.com/last-applied-hash"
DRIVER_MANAGER_IMAGE = "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.8.1"
DCGM_EXPORTER_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"


@dataclass(frozen=True)
class Operand:
    spec_key: str  # its section of ClusterPolicy.spec (`enabled` there switches it)
    name: str  # the DaemonSet's name and its pods' `app` label
    component: str  # nvidia.com/gpu.deploy.<component>
    state: str  # the Operator's state name, as in ClusterPolicy conditions
    default_enabled: bool = True


# In the Operator's order of states.
OPERANDS = (
    Operand("driver", "nvidia-driver-daemonset", "driver", "state-driver"),
    Operand("toolkit", "nvidia-container-toolkit-daemonset", "container-toolkit", "state-container-toolkit"),
    Operand("validator", "nvidia-operator-validator", "operator-validator", "state-operator-validation"),
    Operand("devicePlugin", "nvidia-device-plugin-daemonset", "device-plugin", "state-device-plugin"),
    Operand("dcgmExporter", "nvidia-dcgm-exporter", "dcgm-exporter", "state-dcgm-exporter", False),
    Operand("gfd", "gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery"),
)
# Every label the Operator puts on a GPU node (it sets them all, whatever is enabled).
DEPLOY_COMPONENTS = (*(operand.component for operand in OPERANDS), "dcgm")


def is_operand(obj: Obj) -> bool:
    """An object the Operator manages (an operand DaemonSet, its pods, its RuntimeClasses)."""
    return bool((obj["metadata"].get("labels") or {}).get(MANAGED_BY[0]) == MANAGED_BY[1])


def is_nfd_worker(pod: Obj) -> bool:
    """A Node Feature Discovery worker (the chart's nfd subchart): it labels the node it runs on."""
    labels = pod["metadata"].get("labels") or {}
    return labels.get("app.kubernetes.io/name") == "node-feature-discovery" and labels.get("role") == "worker"


def section(spec: Obj, key: str) -> Obj:
    """One section of ClusterPolicy.spec ({} when absent or not a mapping)."""
    value = spec.get(key)
    return value if isinstance(value, dict) else {}


def enabled(spec: Obj, key: str, default: bool = True) -> bool:
    value = section(spec, key).get("enabled", default)
    return value is True or str(value).lower() == "true"


def wanted(spec: Obj) -> list[Operand]:
    """The operands a policy deploys; the validator always runs."""
    return [
        op for op in OPERANDS if op.spec_key == "validator" or enabled(spec, op.spec_key, op.default_enabled)
    ]


def _image(spec: Obj, key: str, fallback: str, suffix: str = "") -> str:
    repository, image, version = (section(spec, key).get(k) for k in ("repository", "image", "version"))
    if not (repository and image and version):
        return fallback
    return f"{repository}/{image}:{version}{suffix}"


def _validation(spec: Obj, stage: str) -> Obj:
    default = f"nvcr.io/nvidia/cloud-native/gpu-operator-validator:{OPERATOR_CHART_VERSION}"
    image = _image(spec, "validator", default)
    component = stage.removesuffix("-validation")
    return {
        "name": stage,
        "image": image,
        "command": ["sh", "-c"],
        "args": ["nvidia-validator"],
        "env": [{"name": "WITH_WAIT", "value": "true"}, {"name": "COMPONENT", "value": component}],
    }


def _toolkit_env(spec: Obj) -> list[Obj]:
    toolkit, operator = section(spec, "toolkit"), section(spec, "operator")
    env = [
        {"name": "RUNTIME", "value": str(operator.get("defaultRuntime", "containerd"))},
        {"name": "CONTAINERD_RUNTIME_CLASS", "value": str(operator.get("runtimeClass", "nvidia"))},
        {"name": "CDI_ENABLED", "value": str(enabled(spec, "cdi", False)).lower()},
    ]
    if enabled(spec, "cdi", False) and section(spec, "cdi").get("default") is True:
        env.append({"name": "NVIDIA_CONTAINER_RUNTIME_MODE", "value": "cdi"})
    return env + [dict(item) for item in toolkit.get("env") or [] if isinstance(item, dict)]


def _validator_stages(spec: Obj) -> tuple[str, ...]:
    """The validator's stages: without plugin-validation where the policy disables the device
    plugin, as the Operator renders it (controllers/object_controls.go TransformValidator: "remove
    plugin init container from validator Daemonset if it is not enabled")."""
    if enabled(spec, "devicePlugin"):
        return VALIDATION_STAGES
    return tuple(stage for stage in VALIDATION_STAGES if stage != "plugin-validation")


def _init_containers(spec: Obj, operand: Operand) -> list[Obj]:
    """The driver manager for the driver; the validator's stages for the validator; the stage each
    other operand waits for (the toolkit waits for the driver, the rest for the toolkit)."""
    init: dict[str, list[Obj]] = {
        "driver": [
            {
                "name": DRIVER_MANAGER,
                "image": DRIVER_MANAGER_IMAGE,
                "command": ["driver-manager"],
                "args": ["uninstall_driver"],
            }
        ],
        "toolkit": [_validation(spec, "driver-validation")],
        "validator": [_validation(spec, stage) for stage in _validator_stages(spec)],
    }
    return init.get(operand.spec_key) or [_validation(spec, "toolkit-validation")]


def _main_container(spec: Obj, operand: Operand) -> Obj:
    plugin_image = _image(spec, "devicePlugin", "nvcr.io/nvidia/k8s-device-plugin:v0.18.0")
    main: dict[str, Obj] = {
        "driver": {
            "name": "nvidia-driver-ctr",
            "image": _image(spec, "driver", "nvcr.io/nvidia/driver:580.95.05", "-ubuntu22.04"),
            "command": ["nvidia-driver"],
            "args": ["init"],
        },
        "toolkit": {
            "name": "nvidia-container-toolkit-ctr",
            "image": _image(spec, "toolkit", "nvcr.io/nvidia/k8s/container-toolkit:v1.18.0"),
            "command": ["nvidia-toolkit"],
            "env": _toolkit_env(spec),
        },
        "validator": {
            "name": "nvidia-operator-validator",
            "image": _validation(spec, "driver-validation")["image"],
            "command": ["sh", "-c"],
            "args": ["echo all validations are successful; sleep infinity"],
        },
        "devicePlugin": {
            "name": "nvidia-device-plugin",
            "image": plugin_image,
            "command": ["nvidia-device-plugin"],
        },
        "dcgmExporter": {
            "name": "nvidia-dcgm-exporter",
            "image": _image(spec, "dcgmExporter", DCGM_EXPORTER_IMAGE),
        },
        "gfd": {"name": "gpu-feature-discovery", "image": plugin_image, "command": ["gpu-feature-discovery"]},
    }
    return main[operand.spec_key]


def _with_plugin_config(spec: Obj, pod_spec: Obj) -> Obj:
    """The device plugin and GFD read spec.mig.strategy (MIG_STRATEGY) and the plugin the
    ConfigMap spec.devicePlugin.config names (mounted at /config, CONFIG_FILE: its `default` key)."""
    container = pod_spec["containers"][0]
    env = list(container.get("env") or [])
    strategy = section(spec, "mig").get("strategy")
    if strategy:
        env.append({"name": "MIG_STRATEGY", "value": str(strategy)})
    config = section(section(spec, "devicePlugin"), "config")
    if config.get("name") and container["name"] == "nvidia-device-plugin":
        key = str(config.get("default") or "config.yaml")
        env.append({"name": "CONFIG_FILE", "value": f"/config/{key}"})
        container["volumeMounts"] = [{"name": "config", "mountPath": "/config"}]
        pod_spec["volumes"] = [{"name": "config", "configMap": {"name": str(config["name"])}}]
    if env:
        container["env"] = env
    return pod_spec


def _pod_spec(spec: Obj, operand: Operand) -> Obj:
    daemonsets = section(spec, "daemonsets")
    pod_spec = {
        "nodeSelector": {DEPLOY_LABEL.format(operand.component): "true"},
        "tolerations": [dict(t) for t in daemonsets.get("tolerations") or [] if isinstance(t, dict)],
        "priorityClassName": str(daemonsets.get("priorityClassName") or "system-node-critical"),
        "serviceAccountName": operand.name.removesuffix("-daemonset"),
        "initContainers": _init_containers(spec, operand),
        "containers": [_main_container(spec, operand)],
    }
    return _with_plugin_config(spec, pod_spec) if operand.spec_key in ("devicePlugin", "gfd") else pod_spec


def owner_reference(policy: Obj) -> Obj:
    """What the Operator creates is owned by its ClusterPolicy or GPUCluster (garbage collected with it)."""
    meta = policy["metadata"]
    return {
        "apiVersion": policy.get("apiVersion", "nvidia.com/v1"),
        "kind": policy.get("kind", "ClusterPolicy"),
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def daemonset(spec: Obj, operand: Operand, namespace: str, owner: Obj) -> Obj:
    """The DaemonSet of one operand, owned by the ClusterPolicy `owner` (garbage collected with it)."""
    labels = {"app": operand.name, MANAGED_BY[0]: MANAGED_BY[1], "app.kubernetes.io/part-of": "nvidia-gpu"}
    template: Obj = {"metadata": {"labels": dict(labels)}, "spec": _pod_spec(spec, operand)}
    defaults.apply_pod_spec_defaults(template)
    body = {"selector": {"matchLabels": {"app": operand.name}}, "template": template}
    return {
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": {
            "name": operand.name,
            "namespace": namespace,
            "labels": labels,
            "annotations": {HASH_ANNOTATION: short_hash(json.dumps(body, sort_keys=True))},
            "ownerReferences": [owner_reference(owner)],
            "generation": 1,
        },
        "spec": dict(body, updateStrategy={"type": "RollingUpdate"}),
        "status": {
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        },
    }
