"""What a migration does with the old stack's GPU sharing (time-slicing, MPS, MIG): what the new
stack carries over, what it cannot, in words, and the DRA driver's feature gates that carry it.

The DRA driver for NVIDIA GPUs (gpuctl.defaults DRA_DRIVER_CHART_VERSION, 0.5) shares a GPU per
ResourceClaim: the pods that reference one claim share its devices, and a GpuConfig
(resource.nvidia.com/v1beta1, opaque config of driver gpu.nvidia.com) sets how, `sharing.strategy`
TimeSlicing (`timeSlicingConfig.interval`: Default, Short, Medium, Long) or MPS (`mpsConfig`:
defaultActiveThreadPercentage, defaultPinnedDeviceMemoryLimit, defaultPerDevicePinnedMemoryLimit).
Both settings are behind Alpha gates that default to false, TimeSlicingSettings and MPSSupport
(pkg/featuregates/featuregates.go); the chart passes `featureGates` to the kubelet plugin as its
FEATURE_GATES (templates/kubeletplugin.yaml). A device goes to one claim at a time, so nothing in
DRA counts replicas of a GPU: a pod that asks for nvidia.com/gpu through the DeviceClass's
extendedResourceName gets a claim of its own and a whole GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from gpuctl.core.migrate.operator import OPERATOR_CARRIED
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.device_plugin.sharing import MIG_STRATEGY_LABEL, REPLICAS_LABEL, SHARING_LABEL
from gpuctl.defaults import DRA_DEVICE_CLASS, GPU_RESOURCE

if TYPE_CHECKING:
    from gpuctl.kube.nodes import NodeInfo

TIME_SLICING_GATE = "TimeSlicingSettings"
MPS_GATE = "MPSSupport"
GPU_CONFIG = "a GpuConfig (resource.nvidia.com/v1beta1) in the claim's spec.devices.config"


@dataclass(frozen=True)
class CarriedSharing:
    """`carried`/`not_carried`: in words; `feature_gates`: the DRA driver's gates to turn on."""

    carried: tuple[str, ...] = ()
    not_carried: tuple[str, ...] = ()
    feature_gates: tuple[str, ...] = ()


def _shared(nodes: list[NodeInfo], strategy: str) -> list[NodeInfo]:
    return [node for node in nodes if node.labels.get(SHARING_LABEL) == strategy]


def _lost_capacity(nodes: list[NodeInfo], physical: dict[str, int | None]) -> str:
    """Per node: the nvidia.com/gpu it advertised shared, and the whole GPUs DRA gives instead."""
    parts = [
        f"{node.name} {node.gpu_allocatable} -> {physical.get(node.name) or '?'}"
        for node in nodes
        if node.gpu_allocatable
    ]
    return f" ({GPU_RESOURCE} per node: {', '.join(parts)})" if parts else ""


def _replicas(nodes: list[NodeInfo]) -> str:
    return ", ".join(sorted({node.labels.get(REPLICAS_LABEL, "?") for node in nodes}))


def _time_slicing(nodes: list[NodeInfo], physical: dict[str, int | None]) -> tuple[str, str]:
    replicas = _replicas(nodes)
    carried = (
        f"time-slicing: the DRA driver's {TIME_SLICING_GATE} gate is on; pods that share a GPU "
        f"reference one ResourceClaim, with {GPU_CONFIG} setting sharing.strategy TimeSlicing "
        "(timeSlicingConfig.interval Default, Short, Medium or Long)"
    )
    not_carried = (
        f"time-slicing replicas ({replicas} per GPU): DRA counts no replicas, a GPU goes to one "
        f"claim, so each {GPU_RESOURCE} request gets a whole GPU{_lost_capacity(nodes, physical)}"
    )
    return carried, not_carried


def _mps(nodes: list[NodeInfo], physical: dict[str, int | None]) -> tuple[str, str]:
    replicas = _replicas(nodes)
    carried = (
        f"MPS: the DRA driver's {MPS_GATE} gate is on; pods that share a GPU reference one "
        f"ResourceClaim, with {GPU_CONFIG} setting sharing.strategy MPS (mpsConfig "
        "defaultActiveThreadPercentage, defaultPinnedDeviceMemoryLimit)"
    )
    not_carried = (
        f"MPS replicas ({replicas} per GPU) and their per-replica share of threads and memory: "
        f"set per claim in mpsConfig; each {GPU_RESOURCE} request gets a whole GPU, unshared"
        f"{_lost_capacity(nodes, physical)}"
    )
    return carried, not_carried


def carried_to_dra(nodes: list[NodeInfo], physical: dict[str, int | None]) -> CarriedSharing:
    """The device plugin's sharing on `nodes` as DRA takes it over; `physical`: node → its GPUs."""
    carried = [f"{GPU_RESOURCE} requests: served by DeviceClass {DRA_DEVICE_CLASS} "
               f"(extendedResourceName {GPU_RESOURCE}), one whole GPU each"]  # fmt: skip
    not_carried: list[str] = []
    gates: list[str] = []
    for strategy, gate, notes in (
        ("time-slicing", TIME_SLICING_GATE, _time_slicing),
        ("mps", MPS_GATE, _mps),
    ):
        shared = _shared(nodes, strategy)
        if shared:
            did, did_not = notes(shared, physical)
            carried.append(did)
            not_carried.append(did_not)
            gates.append(gate)
    mig = {node.labels.get(MIG_STRATEGY_LABEL, "none") for node in nodes} - {"none", ""}
    if mig:
        carried.append("MIG devices: published by the DRA driver as DeviceClass mig.nvidia.com devices")
        not_carried.append(
            f"MIG strategy {', '.join(sorted(mig))}: {GPU_RESOURCE} maps to whole GPUs only; pods "
            "that requested MIG resources (nvidia.com/mig-*) must claim from mig.nvidia.com"
        )
    return CarriedSharing(tuple(carried), tuple(not_carried), tuple(gates))


def carried_sharing(nodes: list[NodeInfo], source: Stack, physical: dict[str, int | None]) -> CarriedSharing:
    """What the move from `source` keeps of the sharing on `nodes` (the nodes it moves)."""
    if not nodes:
        return CarriedSharing()
    if source is Stack.DRA:
        return CarriedSharing(
            ("the device plugin is rendered with this command's --sharing and --mig-strategy",)
        )
    carried = carried_to_dra(nodes, physical)
    if source is Stack.OPERATOR:
        return replace(carried, carried=(*carried.carried, OPERATOR_CARRIED))
    return carried
