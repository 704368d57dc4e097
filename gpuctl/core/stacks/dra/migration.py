"""Moving GPU nodes onto DRA, and off it (gpuctl.core.migrate runs the node-by-node sequence).

Onto DRA: refused before anything is written on a cluster older than 1.37, whose scheduler cannot
serve a pod's `nvidia.com/gpu` from DRA devices; what becomes of the old stack's GPU sharing
(time-slicing, MPS, MIG): what DRA carries over, what it cannot, in words, and the DRA driver's
feature gates that carry it. Off DRA: its ResourceSlices gone from a moved node, its release
uninstalled once the last node has moved.

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

import re
from typing import TYPE_CHECKING

from gpuctl.core.stacks.base import CarriedSharing
from gpuctl.core.stacks.device_plugin.sharing import MIG_STRATEGY_LABEL, REPLICAS_LABEL, SHARING_LABEL
from gpuctl.core.stacks.dra.checks import kubelet_minor
from gpuctl.defaults import DRA_DEVICE_CLASS, GPU_RESOURCE
from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call
from gpuctl.kube.dra import read_inventory, served_version
from gpuctl.kube.rest_requests import get_json

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.nodes import NodeInfo

TIME_SLICING_GATE = "TimeSlicingSettings"
MPS_GATE = "MPSSupport"
GPU_CONFIG = "a GpuConfig (resource.nvidia.com/v1beta1) in the claim's spec.devices.config"


# DRAExtendedResource is GA in 1.37: kube-scheduler serves an extended resource request from a
# DeviceClass's extendedResourceName, and the kubelet reads the claim it made for the pod.
EXTENDED_RESOURCE_MINOR = (1, 37)
WORKLOAD_CHANGE = (
    f"or change the workloads first: replace `resources.limits: {{{GPU_RESOURCE}: N}}` with a "
    f"ResourceClaim (spec.resourceClaims naming a ResourceClaimTemplate whose request has "
    f"deviceClassName {DRA_DEVICE_CLASS} and count N), then run "
    f"`gpuctl bootstrap --phase cluster --stack dra`"
)


def _minor(version: str) -> tuple[int, int]:
    found = re.match(r"^v?(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def refuse_unsupported(api_client: ApiClient, to_move: list[NodeInfo]) -> None:
    """Exit 2 before any write where the workloads could not keep running as they are."""
    if not to_move:
        return
    if not served_version(api_client):
        raise ConfigError(
            "--stack dra --migrate: the API server does not serve resource.k8s.io (DRA)",
            hint="upgrade the cluster to Kubernetes 1.37 or later, then rerun",
        )
    with api_call("get", "the server's version"):
        server = str(get_json(api_client, "/version").get("gitVersion", ""))
    old = [f"kubelet of {node.name} is {node.system.get('kubeletVersion', '?')}"
           for node in to_move if kubelet_minor(node) < EXTENDED_RESOURCE_MINOR]  # fmt: skip
    if _minor(server) < EXTENDED_RESOURCE_MINOR:
        old.insert(0, f"the API server is {server or 'of unknown version'}")
    if old:
        raise ConfigError(
            f"--stack dra --migrate needs Kubernetes 1.37 or later, where a DeviceClass's "
            f"extendedResourceName serves pods that request {GPU_RESOURCE} from DRA devices "
            f"(DRA extended resources), so running workloads keep their requests: {'; '.join(old)}",
            hint=f"upgrade the control plane and the GPU nodes' kubelets to 1.37, {WORKLOAD_CHANGE}",
        )


def extended_resource_problem(api_client: ApiClient) -> str:
    """Why pods asking for nvidia.com/gpu would not be served on DRA nodes ("" when they would)."""
    mapped = read_inventory(api_client).extended_resource
    if mapped == GPU_RESOURCE:
        return ""
    return (
        f"the DRA driver's GPU DeviceClass maps {mapped or 'no extended resource'}, not {GPU_RESOURCE}: "
        "pods that request it would not schedule on moved nodes"
    )


def still_published(api_client: ApiClient, node: str) -> str:
    """What of DRA still serves `node` besides its plugin pod ("" when nothing does)."""
    return "its ResourceSlice is still published" if node in read_inventory(api_client).nodes else ""


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
