"""How a node shares its GPUs (time-slicing, MPS, MIG), what verification pods may request there,
and the classic sharing faults, read from GFD labels and the advertised resource names."""

from __future__ import annotations

from dataclasses import dataclass

from gpuctl.core.verify.model import Check, PodEvaluation, failed, passed, skipped, warned
from gpuctl.defaults import GPU_RESOURCE
from gpuctl.kube.gpu_use import NodeUse
from gpuctl.kube.nodes import GFD_COUNT_LABEL, GFD_PRODUCT_LABEL, NodeInfo, as_int

SHARING_LABEL = "nvidia.com/gpu.sharing-strategy"
REPLICAS_LABEL = "nvidia.com/gpu.replicas"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
MIG_CAPABLE_LABEL = "nvidia.com/mig.capable"
MPS_CAPABLE_LABEL = "nvidia.com/mps.capable"
SHARED_RESOURCE = f"{GPU_RESOURCE}.shared"
MIG_PREFIX = "nvidia.com/mig-"


@dataclass(frozen=True)
class SharingPlan:
    """A node's sharing as advertised, and the verification pods that prove it."""

    mode: str  # exclusive | time-slicing | mps
    replicas: int
    mig_strategy: str  # none | single | mixed
    physical: int | None  # physical GPUs; None where only nvidia-smi can tell (MIG single)
    mig_devices: int
    requests: tuple[tuple[str, int], ...]  # per verification pod
    pods: int = 1
    held: int = 0  # of the devices it advertises, those the node's pods hold (not requested)

    @property
    def mig(self) -> bool:
        return self.mig_devices > 0

    @property
    def advertised(self) -> int:
        return sum(count for _, count in self.requests) * self.pods


def plan_for(node: NodeInfo, use: NodeUse | None = None) -> SharingPlan:
    """The node's sharing, and the verification pods that prove it: they request what is free,
    what the node advertises less what its pods hold (`use`)."""
    labels = node.labels
    allocatable = dict(node.device_allocatable)
    capacity = dict(node.device_capacity)
    use = use or NodeUse()
    free = {name: max(count - use.of(name), 0) for name, count in allocatable.items()}
    strategy = labels.get(MIG_STRATEGY_LABEL, "none")
    replicas = max(as_int(labels.get(REPLICAS_LABEL)), 1)
    mode = labels.get(SHARING_LABEL, "none")
    mode = mode if mode in ("time-slicing", "mps") and replicas > 1 else "exclusive"
    migs = sorted(name for name, count in allocatable.items() if name.startswith(MIG_PREFIX) and count)
    if strategy == "mixed" and migs:
        physical = as_int(labels.get(GFD_COUNT_LABEL)) or None
        mig_total = sum(count for name, count in capacity.items() if name.startswith(MIG_PREFIX))
        requests = tuple((name, free[name]) for name in migs if free[name])
        held = sum(use.of(name) for name in migs)
        return SharingPlan("exclusive", 1, strategy, physical, mig_total, requests, held=held)
    if strategy == "single" and "-MIG-" in labels.get(GFD_PRODUCT_LABEL, ""):
        mig_total = capacity.get(GPU_RESOURCE, 0)
        requests = ((GPU_RESOURCE, free.get(GPU_RESOURCE, 0)),)
        held = use.of(GPU_RESOURCE)
        return SharingPlan(mode, replicas, strategy, None, mig_total // replicas, requests, held=held)
    resource = SHARED_RESOURCE if SHARED_RESOURCE in capacity else GPU_RESOURCE
    physical = as_int(labels.get(GFD_COUNT_LABEL)) or capacity.get(resource, 0) // replicas
    held = use.of(resource)
    if mode == "mps":  # MPS refuses requests above one replica: one pod per physical GPU
        count = min(physical, free.get(resource, 0))
        # Nothing advertised: one pod still goes, and its pending says why; all held: none.
        pods = count if held else max(count, 1)
        return SharingPlan(mode, replicas, strategy, physical, 0, ((resource, 1),), pods=pods, held=held)
    requests = ((resource, free.get(resource, 0)),)
    return SharingPlan(mode, replicas, strategy, physical, 0, requests, held=held)


def physical_allocatable(node: NodeInfo) -> int:
    """Allocatable GPUs counted as physical GPUs (or MIG devices): replicas divided out."""
    plan = plan_for(node)  # held devices count as allocatable here
    if plan.mig:
        return plan.advertised
    return plan.advertised // plan.replicas if plan.mode == "time-slicing" else plan.advertised


def physical_capacity(node: NodeInfo) -> int:
    plan = plan_for(node)
    if plan.mode == "exclusive" or plan.mig:
        return node.gpu_capacity
    return plan.physical or 0


def expected_seen(plan: SharingPlan) -> int | None:
    """GPUs each verification pod should list: its devices' distinct physical GPUs."""
    if plan.mig or plan.physical is None:
        return None
    if plan.mode == "mps":
        return 1
    requested = sum(count for _, count in plan.requests)
    return min(requested, plan.physical) if plan.mode == "time-slicing" else requested


def sharing_check(node: NodeInfo, plan: SharingPlan, others: list[SharingPlan]) -> Check:
    """The classic sharing faults, from what the node advertises (labels, resource names)."""
    labels = node.labels
    capacity = dict(node.device_capacity)
    product = labels.get(GFD_PRODUCT_LABEL, "")
    if product.endswith("-MIG-INVALID"):
        return failed(
            "gpu.sharing",
            f"MIG strategy {plan.mig_strategy} does not fit the node's MIG layout (GFD: {product})",
            "the single strategy needs one MIG profile on every GPU: repartition with nvidia-smi mig "
            "(or mig-parted), or render with `gpuctl render --mig-strategy mixed`",
            "plugin.mig-invalid",
        )
    if labels.get(MIG_CAPABLE_LABEL) == "true" and plan.mig_strategy != "none" and not capacity:
        return failed(
            "gpu.sharing",
            f"MIG enabled (strategy {plan.mig_strategy}) but no MIG devices are advertised",
            f"create the MIG devices on {node.name} (`nvidia-smi mig -cgi PROFILE -C`) or disable MIG mode",
            "plugin.mig-no-devices",
        )
    if labels.get(SHARING_LABEL) == "mps" and labels.get(MPS_CAPABLE_LABEL) == "true" and not capacity:
        return failed(
            "gpu.sharing",
            "the device plugin is configured for MPS but the MPS control daemon is not running: "
            "no GPU is advertised",
            "apply the MPS control daemon (`gpuctl render --sharing mps`), then "
            "`kubectl -n kube-system get pods -l name=nvidia-device-plugin-mps-control-daemon -o wide`",
            "plugin.mps-daemon",
        )
    if SHARED_RESOURCE in capacity and GPU_RESOURCE not in capacity:
        return warned(
            "gpu.sharing",
            f"shared GPUs are advertised as {SHARED_RESOURCE} (renameByDefault): workloads that request "
            f"{GPU_RESOURCE} will not schedule here",
            f"request {SHARED_RESOURCE} in shared workloads, or drop renameByDefault from the plugin config",
            "plugin.renamed-resource",
        )
    shared = [other for other in others if other.mode != "exclusive"]
    if plan.mode == "exclusive" and not plan.mig and shared:
        return failed(
            "gpu.sharing",
            f"replicas not applied: other GPU nodes share with {shared[0].mode} ({shared[0].replicas} "
            "replicas) but this one advertises its GPUs unshared",
            "check that the plugin's config is mounted (CONFIG_FILE and the ConfigMap volume) and that "
            f"the node label nvidia.com/device-plugin.config on {node.name} names a key of the ConfigMap",
            "plugin.replicas-not-applied",
        )
    return passed("gpu.sharing", describe(plan))


def describe(plan: SharingPlan) -> str:
    if plan.mig:
        return f"MIG {plan.mig_strategy}: {plan.mig_devices} MIG device(s)"
    if plan.mode == "exclusive":
        return "exclusive GPUs (no sharing)"
    return f"{plan.mode}: {plan.physical} GPU(s) x {plan.replicas} replicas"


def physical_checks(plan: SharingPlan, evaluation: PodEvaluation) -> list[Check]:
    """Shared or MIG nodes: every physical GPU (or MIG device) was reached from a pod."""
    if plan.mode == "exclusive" and not plan.mig:
        return []
    if not evaluation.uuids or (plan.held and not plan.mig):
        held = f"{plan.held} replica(s) held by the node's pods: not every GPU is free"
        return [skipped("gpu.physical", held if evaluation.uuids else "no verification pod output")]
    if plan.mig:
        wanted = sum(count for _, count in plan.requests)
        if evaluation.mig_devices != wanted:
            return [
                failed(
                    "gpu.physical",
                    f"{evaluation.mig_devices} MIG device(s) seen, {wanted} requested",
                    "`nvidia-smi -L` on the node; the plugin advertises MIG devices the pod did not get",
                )
            ]
        return [passed("gpu.physical", f"{wanted} MIG device(s) seen on {len(evaluation.uuids)} GPU(s)")]
    if len(evaluation.uuids) != plan.physical:
        return [
            failed(
                "gpu.physical",
                f"{len(evaluation.uuids)} of {plan.physical} physical GPU(s) reached",
                "the plugin's replicas do not cover every GPU: check its log and the sharing config",
            )
        ]
    return [
        passed("gpu.physical", f"all {plan.physical} physical GPU(s) reached ({plan.replicas} replicas each)")
    ]
