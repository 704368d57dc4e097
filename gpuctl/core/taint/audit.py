"""Audit GPU DaemonSets against a taint: the device plugin, GFD, the NFD worker, the GPU
Operator validator and dcgm-exporter must tolerate the GPU taint, or they stop running on exactly
the nodes that need them. Which DaemonSets those are is decided in gpuctl.kube.daemonsets, for
`gpuctl verify`'s cluster check too."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuctl.defaults import GPU_RESOURCE
from gpuctl.kube.daemonsets import DaemonSetInfo
from gpuctl.kube.nodes import ENFORCED_EFFECTS, Taint
from gpuctl.kube.raw import JsonDict
from gpuctl.shell import command_line


@dataclass(frozen=True)
class DaemonSetWarning:
    """A GPU DaemonSet whose pods will not run on nodes carrying the taint."""

    namespace: str
    name: str
    component: str
    message: str
    hint: str


def _toleration_text(toleration: JsonDict) -> str:
    key = toleration.get("key") or "*"
    operator = toleration.get("operator") or "Equal"
    value = f"={toleration.get('value') or ''}" if operator == "Equal" else ""
    effect = toleration.get("effect") or "*"
    return f"{key}{value}:{effect} ({operator})"


def _warning(daemonset: DaemonSetInfo, taint: Taint) -> DaemonSetWarning:
    namespace, name, component = daemonset.namespace, daemonset.name, daemonset.component
    same_key = [tol for tol in daemonset.tolerations if (tol.get("key") or "") == taint.key]
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
        f"(`{command_line('kubectl', '-n', namespace, 'edit', 'daemonset', name)}`)",
    )


def audit_daemonsets(daemonsets: Iterable[DaemonSetInfo], taint: Taint) -> list[DaemonSetWarning]:
    """One warning per GPU DaemonSet that does not tolerate `taint` (none for PreferNoSchedule)."""
    if taint.effect not in ENFORCED_EFFECTS:
        return []
    warnings = [
        _warning(daemonset, taint)
        for daemonset in daemonsets
        if daemonset.is_gpu_daemonset and not daemonset.tolerates(taint)
    ]
    return sorted(warnings, key=lambda warning: (warning.namespace, warning.name))


def admission_notes(taint: Taint) -> list[str]:
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
