"""What `gpuctl render` (and bootstrap's cluster phase) renders: the options, the rendered file,
and the sharing variables the device plugin's manifests and the GPU Operator's values share.
Plain data below gpuctl.core.render and the stack modules, which both read it."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuctl.core.stacks import DEFAULT_STACK, Stack
from gpuctl.core.stacks.settings import DraSettings, OperatorSettings
from gpuctl.defaults import (
    DEFAULT_READINESS_TAINT,
    DEVICE_PLUGIN_IMAGE,
    DEVICE_PLUGIN_NAMESPACE,
    GATE_CONDITION_TYPE,
    GATE_TAINT_EFFECT,
    GATE_TAINT_KEY,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GPUCTL_NAMESPACE,
    RUNTIME_CLASS,
)

CONFIG_MAP_NAME = "nvidia-device-plugin-config"
# Host folder of the MPS control daemon's pipes, logs and shm (the chart's `mps.root`).
MPS_ROOT = "/run/nvidia/mps"
DEFAULT_VERIFY_SCHEDULE = "*/30 * * * *"
# Every GPU DaemonSet gpuctl renders tolerates the gate too (gpuctl.core.gate), and the Node
# Readiness Controller's taint of `render --readiness-rule`: a gated node's GPUs must be served, or
# it can never be proven.
GATE_TOLERATION_VARIABLES = {
    "gate_key": GATE_TAINT_KEY,
    "gate_effect": GATE_TAINT_EFFECT,
    "readiness_key": DEFAULT_READINESS_TAINT,
}


@dataclass(frozen=True)
class RbacSubject:
    """Who the RBAC bindings grant every gpuctl role to (--rbac-subject)."""

    kind: str = "ServiceAccount"
    name: str = "gpuctl"
    namespace: str = GPUCTL_NAMESPACE


@dataclass(frozen=True)
class RenderOptions:
    """What to render; every field maps to one `gpuctl render` flag."""

    namespace: str = DEVICE_PLUGIN_NAMESPACE
    image: str = DEVICE_PLUGIN_IMAGE
    mig_strategy: str = "none"
    sharing: str = "none"
    replicas: int = 2
    taint_key: str = GPU_TAINT_KEY
    taint_effect: str = GPU_TAINT_EFFECT
    runtime_class: str = RUNTIME_CLASS
    stack: Stack = DEFAULT_STACK
    rbac: bool = False
    rbac_subject: RbacSubject | None = None  # None: each role to its own ServiceAccount
    verify_namespace: str = GPUCTL_NAMESPACE
    log_namespaces: tuple[str, ...] = ()  # more namespaces whose GPU plugin logs verify may read
    node_selector: tuple[tuple[str, str], ...] = ()
    verify_cronjob: bool = False  # gpuctl verify in the cluster on a schedule (+ its RBAC)
    verify_schedule: str = DEFAULT_VERIFY_SCHEDULE
    gpuctl_image: str = ""  # the image holding gpuctl, for the CronJob or the Deployment
    # `gpuctl verify --watch --metrics-addr` in a Deployment with its metrics Service (+ its RBAC)
    verify_deployment: bool = False
    service_monitor: bool = False  # and a prometheus-operator ServiceMonitor scraping it
    # a NodeReadinessRule (Node Readiness Controller) turning verify's node condition into a taint
    readiness_rule: bool = False
    readiness_taint: str = DEFAULT_READINESS_TAINT
    readiness_condition: str = GATE_CONDITION_TYPE
    # the in-cluster verify's --gate-taint and --gate-condition, and what verify's admission
    # policies let its account write (`verify --gate` takes the same flags)
    gate_taint: str = GATE_TAINT_KEY
    gate_condition: str = GATE_CONDITION_TYPE
    operator: OperatorSettings = field(default_factory=OperatorSettings)  # --stack operator's chart
    dra: DraSettings = field(default_factory=DraSettings)  # --stack dra's chart


@dataclass(frozen=True)
class RenderedFile:
    """One output file: its name under --out DIR and its YAML text."""

    filename: str
    content: str
    helm_values: bool = False  # Helm values, not Kubernetes objects


def sharing_variables(options: RenderOptions) -> dict[str, object]:
    """The device plugin's sharing, MIG and taint settings as template variables (its manifests
    and the GPU Operator's values both configure the device plugin)."""
    return {
        "namespace": options.namespace,
        "config_map_name": CONFIG_MAP_NAME if options.sharing != "none" else "",
        "mig_strategy": options.mig_strategy,
        "sharing": options.sharing,
        "replicas": options.replicas,
        "taint_key": options.taint_key,
        "taint_effect": options.taint_effect,
        **GATE_TOLERATION_VARIABLES,
        "mps_root": MPS_ROOT,
    }
