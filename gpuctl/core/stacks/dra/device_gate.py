"""Per-GPU gates on DRA nodes (Kubernetes 1.37, resource.k8s.io/v1 DeviceTaintRule): with `verify
--gate`, a node whose only failure is the CUDA check on some of its GPUs (an uncorrectable ECC error
on GPU 2) stays schedulable, and a DeviceTaintRule per failed GPU (effect NoSchedule, selecting the
device by driver, pool and name as the DRA driver publishes it) keeps that GPU alone from claims.
A failure that concerns the whole node (driver, runtime, plugin, fabric, or every GPU) keeps the
node taint (gpuctl.core.gate), and the node's device rules stay as they were: nothing proved or
disproved its GPUs one by one.

Recovery is proven before return: a rule comes off only when its GPU passed the CUDA check again
in this run. verify's claims tolerate the gate's taint (gpuctl.kube.claims), so every run, and
every --watch round, proves the gated GPUs again.

Which GPU failed: the CUDA check runs on the pod's GPUs by their index in the pod (CUDA_VISIBLE_
DEVICES=i); the claim gets every published GPU not kept out by another taint (allocation mode All),
and a node's identical GPUs enumerate in PCI bus order, which is their `index` attribute's order, so
the pod's GPU i is the i-th of those devices by index.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpuctl.core.stacks.base import DeviceGateResult
from gpuctl.core.verify.model import GpuDevice
from gpuctl.defaults import DEVICE_GATE_LABEL, DEVICE_GATE_NODE_LABEL, GATE_TAINT_EFFECT, GATE_TAINT_KEY
from gpuctl.kube.device_taint_rules import create_rule, delete_rule, rule_names
from gpuctl.kube.dra import DRIVER, DraDevice, DraNode, read_inventory
from gpuctl.kube.raw import JsonDict

if TYPE_CHECKING:
    from gpuctl.core.verify.model import NodeResult

# The failures that can be confined to some GPUs: the CUDA check on them, and devices the DRA
# driver's health check taints (gpu.allocatable: fewer claimable GPUs than published).
CUDA_CHECK = "cuda.workload"
ALLOCATABLE_CHECK = "gpu.allocatable"
CONFINABLE = frozenset({CUDA_CHECK, ALLOCATABLE_CHECK})
# The DRA driver's health taints: gpu.nvidia.com/xid=<Xid> since v0.5, gpu.nvidia.com/unhealthy before.
HEALTH_TAINTS = (f"{DRIVER}/xid=", f"{DRIVER}/unhealthy")


def rule_name(node: str, device: str) -> str:
    """A DNS subdomain per (node, device); long names end in a hash so they stay unique."""
    name = f"gpuctl-unproven-{node}-{device}".lower()
    if len(name) <= 253:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:10]
    return f"{name[:242]}-{digest}"


def rule_manifest(node: str, device: DraDevice, level: str, key: str) -> JsonDict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {
            "name": rule_name(node, device.name),
            "labels": {
                "app.kubernetes.io/managed-by": "gpuctl",
                DEVICE_GATE_LABEL: "device",
                DEVICE_GATE_NODE_LABEL: node,
            },
        },
        "spec": {
            "deviceSelector": {"driver": DRIVER, "pool": device.pool, "device": device.name},
            "taint": {"key": key, "value": level, "effect": GATE_TAINT_EFFECT},
        },
    }


def pod_order(published: DraNode) -> list[DraDevice]:
    """The GPUs the verification claim gets, in the order the pod sees them."""
    claimable = [d for d in published.devices if d.type == "gpu" and not d.taints]
    return sorted(claimable, key=lambda d: (d.index is None, d.index or 0, d.name))


def sick_gpus(published: DraNode) -> list[DraDevice]:
    """The GPUs the DRA driver's health check keeps from claims (its device taint, an Xid)."""
    return [
        device
        for device in published.devices
        if device.type == "gpu" and device.taints and all(t.startswith(HEALTH_TAINTS) for t in device.taints)
    ]


def failed_gpus(node: NodeResult, published: DraNode) -> set[str] | None:
    """The devices the node's failure is confined to (the CUDA check failed on them, or the DRA
    driver reports them unhealthy); None when it concerns the node, or the run did not judge its
    GPUs one by one, or every GPU failed."""
    failing = {check.id for check in node.checks if check.failed}
    if not failing or not failing <= CONFINABLE:
        return None
    devices, sick = pod_order(published), sick_gpus(published)
    broken = {device.name for device in sick}
    others_tainted = len(published.tainted) > len(sick)  # an admin's taint is not a GPU's failure
    if ALLOCATABLE_CHECK in failing and (not broken or others_tainted):
        return None
    if CUDA_CHECK in failing:
        if node.cuda is None or len(node.cuda) != len(devices):
            return None
        broken |= {
            devices[gpu.index].name for gpu in node.cuda if not gpu.ok and 0 <= gpu.index < len(devices)
        }
    return broken if 0 < len(broken) < len(devices) + len(sick) else None


def passed_gpus(node: NodeResult, devices: list[DraDevice]) -> set[str]:
    """The devices this run's CUDA check proved (none where it did not run on each)."""
    if node.cuda is None or len(node.cuda) != len(devices) or node.busy:
        return set()
    return {devices[gpu.index].name for gpu in node.cuda if gpu.ok and 0 <= gpu.index < len(devices)}


def apply_device_gate(
    api_client: Any, *, nodes: Iterable[NodeResult], level: str, taint_key: str = GATE_TAINT_KEY
) -> DeviceGateResult:
    """Gate the failed GPUs of `nodes` (DRA's) whose failure is confined to them; lift the rules of
    GPUs proven again. Busy nodes are left alone."""
    dra_nodes = [node for node in nodes if not node.busy]
    if not dra_nodes:
        return DeviceGateResult()
    inventory = read_inventory(api_client, denied_is_error=True)
    if inventory.version != "v1":
        return DeviceGateResult()  # DeviceTaintRules are served from Kubernetes 1.37 (v1)
    existing = rule_names(api_client, f"{DEVICE_GATE_LABEL}=device")
    if existing is None:
        return DeviceGateResult()  # DeviceTaintRules not served: the node taint gates as before
    gated: list[str] = []
    lifted: list[str] = []
    confined: list[str] = []
    devices_by_node: list[tuple[str, tuple[GpuDevice, ...]]] = []
    for node in dra_nodes:
        published = inventory.nodes.get(node.name) or DraNode(node.name)
        devices = pod_order(published)
        broken = failed_gpus(node, published)
        proven = passed_gpus(node, devices)
        if broken is not None:
            confined.append(node.name)
        after: dict[str, str] = {}
        for device in [*devices, *sick_gpus(published)]:
            name = rule_name(node.name, device.name)
            if broken is not None and device.name in broken:
                if name not in existing:
                    create_rule(api_client, rule_manifest(node.name, device, level, taint_key))
                    gated.append(f"{node.name}/{device.name}")
                after[device.name] = name
            elif device.name in proven and name in existing:
                delete_rule(api_client, name)
                lifted.append(f"{node.name}/{device.name}")
            elif name in existing:
                after[device.name] = name
        devices_by_node.append((node.name, _devices(node, devices, sick_gpus(published), after)))
    return DeviceGateResult(tuple(devices_by_node), tuple(gated), tuple(lifted), tuple(confined))


def _devices(
    node: NodeResult, devices: list[DraDevice], sick: list[DraDevice], rules: dict[str, str]
) -> tuple[GpuDevice, ...]:
    """The node's GPUs by index: those the pod got with their CUDA verdict, and those the driver
    reports unhealthy (no pod got them: ok None)."""
    ran = {gpu.index: gpu.ok for gpu in node.cuda or ()} if node.cuda is not None else {}
    unhealthy = tuple(
        GpuDevice(d.index, d.uuid, d.name, d.pool, DRIVER, None, d.name in rules, rules.get(d.name, ""))
        for d in sick
    )
    proven = tuple(
        GpuDevice(
            index=device.index,
            uuid=device.uuid,
            device=device.name,
            pool=device.pool,
            driver=DRIVER,
            ok=ran.get(position) if len(ran) == len(devices) else None,
            gated=device.name in rules,
            rule=rules.get(device.name, ""),
        )
        for position, device in enumerate(devices)
    )
    return tuple(sorted((*proven, *unhealthy), key=lambda d: (d.index is None, d.index or 0, d.device)))
