"""Audit GPU DaemonSets against a taint: the device plugin, GFD, the NFD worker, the GPU
Operator validator and dcgm-exporter must tolerate the GPU taint, or they stop running on exactly
the nodes that need them. Also used by `gpuctl verify` for its cluster check."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from gpuctl.core.taint_rules import TaintSpec

JsonDict = dict[str, Any]
GPU_RESOURCE = "nvidia.com/gpu"
ENFORCED_EFFECTS = ("NoSchedule", "NoExecute")  # PreferNoSchedule only steers the scheduler

# (component, name fragments, image fragments); the first match wins, so GFD (which ships in the
# k8s-device-plugin image since v0.16) is tested before the device plugin.
_COMPONENTS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("GPU feature discovery", ("gpu-feature-discovery",), ("gpu-feature-discovery",)),
    ("NVIDIA device plugin", ("nvidia-device-plugin",), ("k8s-device-plugin",)),
    ("GPU Operator validator", ("operator-validator",), ("gpu-operator-validator",)),
    ("dcgm-exporter", ("dcgm-exporter",), ("dcgm-exporter",)),
)


@dataclass(frozen=True)
class DaemonSetWarning:
    """A GPU DaemonSet whose pods will not run on nodes carrying the taint."""

    namespace: str
    name: str
    component: str
    message: str
    hint: str


def tolerates(toleration: JsonDict, taint: TaintSpec) -> bool:
    """Kubernetes' ToleratesTaint: effect, key and (for operator Equal) value must match."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.key:
        return False
    return operator == "Exists" or (toleration.get("value") or "") == taint.value


def _pod_spec(daemonset: JsonDict) -> JsonDict:
    spec: JsonDict = ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}
    return spec


def _container_text(daemonset: JsonDict) -> tuple[str, str]:
    """(images, command lines) of every container, lower-cased, for fragment matching."""
    containers = [*(_pod_spec(daemonset).get("containers") or [])]
    containers += _pod_spec(daemonset).get("initContainers") or []
    images = " ".join(str(container.get("image", "")) for container in containers)
    argv = " ".join(
        " ".join(str(part) for part in (container.get("command") or []) + (container.get("args") or []))
        for container in containers
    )
    return images.lower(), argv.lower()


def gpu_component(daemonset: JsonDict) -> str:
    """Which GPU component a DaemonSet runs ("" when it is not one), by name, labels and image."""
    metadata = daemonset.get("metadata") or {}
    labels = metadata.get("labels") or {}
    names = " ".join([str(metadata.get("name", "")), *map(str, labels.values())]).lower()
    images, argv = _container_text(daemonset)
    for component, name_parts, image_parts in _COMPONENTS:
        if any(part in names for part in name_parts) or any(part in images for part in image_parts):
            return component
    is_nfd = "node-feature-discovery" in images or "node-feature-discovery" in names
    if is_nfd and ("worker" in names or "nfd-worker" in argv):
        return "NFD worker"
    return ""


def _toleration_text(toleration: JsonDict) -> str:
    key = toleration.get("key") or "*"
    operator = toleration.get("operator") or "Equal"
    value = f"={toleration.get('value') or ''}" if operator == "Equal" else ""
    effect = toleration.get("effect") or "*"
    return f"{key}{value}:{effect} ({operator})"


def _warning(daemonset: JsonDict, component: str, taint: TaintSpec) -> DaemonSetWarning:
    metadata = daemonset.get("metadata") or {}
    namespace, name = str(metadata.get("namespace", "")), str(metadata.get("name", ""))
    same_key = [
        toleration
        for toleration in _pod_spec(daemonset).get("tolerations") or []
        if (toleration.get("key") or "") == taint.key
    ]
    if same_key:
        why = "its toleration " + ", ".join(_toleration_text(tol) for tol in same_key)
        why += " does not match"
    else:
        why = f"it has no toleration for {taint.key}"
    return DaemonSetWarning(
        namespace=namespace,
        name=name,
        component=component,
        message=f"DaemonSet {namespace}/{name} ({component}) will not run on nodes tainted {taint}: {why}",
        hint=f"add the toleration {{key: {taint.key}, operator: Exists, effect: {taint.effect}}} "
        f"(`kubectl -n {namespace} edit daemonset {name}`)",
    )


def audit_daemonsets(daemonsets: Iterable[JsonDict], taint: TaintSpec) -> list[DaemonSetWarning]:
    """One warning per GPU DaemonSet that does not tolerate `taint` (none for PreferNoSchedule)."""
    if taint.effect not in ENFORCED_EFFECTS:
        return []
    warnings = []
    for daemonset in daemonsets:
        component = gpu_component(daemonset)
        tolerations = _pod_spec(daemonset).get("tolerations") or []
        if component and not any(tolerates(toleration, taint) for toleration in tolerations):
            warnings.append(_warning(daemonset, component, taint))
    return sorted(warnings, key=lambda warning: (warning.namespace, warning.name))


def admission_notes(taint: TaintSpec) -> list[str]:
    """What the ExtendedResourceToleration admission plugin does (and does not do) for `taint`."""
    note = (
        "Pods requesting nvidia.com/gpu get a matching toleration automatically only when the "
        "API server enables the ExtendedResourceToleration admission plugin "
        "(--enable-admission-plugins=...,ExtendedResourceToleration); otherwise GPU workloads "
        f"need `{{key: {taint.key}, operator: Exists, effect: {taint.effect}}}` in their pod spec."
    )
    if taint.key != GPU_RESOURCE or taint.effect != "NoSchedule":
        note += (
            f" That plugin only adds `{GPU_RESOURCE}` NoSchedule tolerations, so it will not "
            f"cover {taint.key}:{taint.effect}."
        )
    return [note]
