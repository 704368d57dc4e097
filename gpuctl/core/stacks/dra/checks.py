"""`gpuctl verify` on nodes whose GPUs go through Dynamic Resource Allocation.

Such a node publishes its GPUs as devices of ResourceSlices (driver gpu.nvidia.com) rather than
allocatable nvidia.com/gpu. Its checks read the slices and the DRA driver's kubelet-plugin pod,
and its verification pod claims every GPU of the node through a ResourceClaimTemplate
(DeviceClass gpu.nvidia.com, allocation mode All), so the scheduler's allocation is proven too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gpuctl.core.verify.model import IN_USE_SKIP, Check, Held, PodEvaluation, failed, passed, skipped, warned
from gpuctl.defaults import DRA_DEVICE_CLASS, GPU_RESOURCE
from gpuctl.diagnose import diagnose
from gpuctl.kube.claims import ClaimAllocation, claim_use
from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod, daemonset_pods
from gpuctl.kube.dra import DRIVER, DraInventory, DraNode, read_inventory, same_version
from gpuctl.kube.gpu_use import NodeUse
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.raw import JsonDict

CLAIM = "gpus"  # the pod's name for its claim
EXTENDED_RESOURCE_KUBELET = (1, 37)  # DRAExtendedResource GA (KEP-5004)
EXTENDED_RESOURCE_NOTE = "served through DRA's extended-resource mapping"
THROUGH_DRA = "GPUs are allocated through DRA on this node (see the dra.* checks)"
BESIDE_CHECK = "dra.device-plugin-beside"
INSTALL_HINT = "install NVIDIA's DRA driver: `helm install` the dra-driver-nvidia-gpu chart (docs/dra.md)"


@dataclass(frozen=True)
class DraFacts:
    """The DRA side of the read-only snapshot."""

    inventory: DraInventory = field(default_factory=DraInventory)
    plugins: tuple[DaemonSetInfo, ...] = ()  # the DRA driver's kubelet-plugin DaemonSets
    plugin_pods: dict[str, PluginPod] = field(default_factory=dict)
    use: dict[str, NodeUse] = field(default_factory=dict)  # node → GPUs its allocated claims hold

    @property
    def present(self) -> bool:
        return self.inventory.in_use or bool(self.plugins)

    def published(self, node: NodeInfo) -> DraNode:
        return self.inventory.nodes.get(node.name) or DraNode(node.name)

    def uses_dra(self, node: NodeInfo) -> bool:
        """The node's GPUs go through DRA: it publishes some, runs the plugin, or (on a DRA
        cluster) advertises nothing the device-plugin way."""
        if not self.present:
            return False
        if node.name in self.inventory.nodes or node.name in self.plugin_pods:
            return True
        return node.gpu_capacity == 0 and not any(count for _, count in node.device_capacity)


def kubelet_minor(node: NodeInfo) -> tuple[int, int]:
    """The node's kubelet (major, minor) from its reported version (v1.37.0+k3s1 → (1, 37))."""
    found = re.match(r"^v?(\d+)\.(\d+)", node.system.get("kubeletVersion", ""))
    return (int(found[1]), int(found[2])) if found else (0, 0)


def extended_resource_mapped(node: NodeInfo, facts: DraFacts) -> bool:
    """A pod asking for nvidia.com/gpu on `node` gets its GPUs through DRA: the GPU DeviceClass maps
    the resource (extendedResourceName) and the node's kubelet is 1.37+ (DRAExtendedResource GA:
    the kubelet reads pod.status.extendedResourceClaimStatus), and no device plugin advertises
    the resource there (the scheduler then serves it the device plugin's way)."""
    return (
        facts.inventory.extended_resource == GPU_RESOURCE
        and kubelet_minor(node) >= EXTENDED_RESOURCE_KUBELET
        and node.gpu_allocatable == 0
    )


def read_facts(api_client: ApiClient, daemonsets: list[DaemonSetInfo], *, claims: bool) -> DraFacts:
    """`claims`: also read which GPUs allocated claims hold (before verification pods claim some)."""
    inventory = read_inventory(api_client)
    plugins = tuple(ds for ds in daemonsets if ds.is_dra_plugin)
    pods = daemonset_pods(api_client, list(plugins)) if plugins else {}
    use = claim_use(api_client, inventory.version) if claims and inventory.nodes else {}
    return DraFacts(inventory, plugins, pods, use)


def claimable(published: DraNode) -> int:
    """GPUs a claim can get: published full GPUs without a NoSchedule/NoExecute device taint."""
    return sum(1 for device in published.devices if device.type == "gpu" and not device.taints)


def held(node: NodeInfo, facts: DraFacts) -> Held:
    """The verification claim asks for all of a node's GPUs (allocation mode All): one held by
    another claim leaves none for it."""
    use = facts.use.get(node.name) or NodeUse()
    devices = use.of(DRIVER)
    return Held(devices, 0 if devices else claimable(facts.published(node)), use.pods)


def why_no_pod(node: NodeInfo, facts: DraFacts) -> str:
    published = facts.published(node)
    if published.gpus == 0 and published.mig_devices:
        return "MIG devices only (verification claims full GPUs, DeviceClass gpu.nvidia.com)"
    if held(node, facts).busy:
        return IN_USE_SKIP
    return "" if claimable(published) else "no claimable GPU published"


# -- read-only checks ----------------------------------------------------------------------------


def gpus_published(node: NodeInfo, published: DraNode, expected: int | None, log: Check) -> Check:
    """gpu.capacity on a DRA node: the GPUs its ResourceSlices publish."""
    count = published.gpus or published.mig_devices
    unit = "GPU(s)" if published.gpus else "MIG device(s)"
    if count == 0:
        message = f"publishes no GPU in a ResourceSlice (driver {DRA_DEVICE_CLASS})"
        if log.diagnosis:
            return failed(
                "gpu.capacity", f"{message}: {log.message.split('; log:', 1)[0]}", log.hint, log.diagnosis
            )
        return failed(
            "gpu.capacity",
            message,
            f"is the DRA driver's kubelet plugin running on {node.name}? `{_slices_command(node.name)}`",
        )
    physical = published.gpus or None
    if expected is not None and physical is not None and physical != expected:
        return failed(
            "gpu.capacity",
            f"{physical} GPU(s) published in ResourceSlices, expected {expected}",
            f"`nvidia-smi -L` on {node.name} against `{_slices_command(node.name, '-o', 'yaml')}`",
        )
    also = f" (and {node.gpu_capacity} {GPU_RESOURCE} by a device plugin)" if node.gpu_capacity else ""
    return passed("gpu.capacity", f"{count} {unit} published in ResourceSlices{also}")


def _slices_command(node: str, *options: str) -> str:
    """The kubectl command listing the ResourceSlices `node` publishes."""
    field = f"spec.nodeName={node}"
    return command_line("kubectl", "get", "resourceslices", "--field-selector", field, *options)


def devices_untainted(node: NodeInfo, published: DraNode) -> Check:
    """gpu.allocatable on a DRA node: devices without a taint that keeps claims away."""
    if not published.devices:
        return skipped("gpu.allocatable", "no device published")
    tainted = published.tainted
    if not tainted:
        return passed("gpu.allocatable", f"{len(published.devices)} device(s) claimable, none tainted")
    names = "; ".join(f"{device.name} {', '.join(device.reasons)}" for device in tainted)
    # the driver's health taint: gpu.nvidia.com/xid=<Xid> since v0.5 (gpu.nvidia.com/unhealthy before)
    unhealthy = any(
        taint.startswith((f"{DRA_DEVICE_CLASS}/xid=", f"{DRA_DEVICE_CLASS}/unhealthy"))
        for device in tainted
        for taint in device.taints
    )
    found = diagnose("Received unhealthy notification for device: -", "plugin-log", node=node.name)
    if unhealthy and found is not None:
        return failed(
            "gpu.allocatable",
            f"{len(tainted)} GPU(s) tainted unhealthy: {names}",
            found.hint,
            found.signature_id,
        )
    by_rule = any(device.rules for device in tainted)
    return failed(
        "gpu.allocatable",
        f"{len(tainted)} of {len(published.devices)} device(s) tainted: {names}",
        f"`{_slices_command(node.name, '-o', 'yaml')}` (devices[].taints)"
        + (" and `kubectl get devicetaintrules -o yaml`" if by_rule else ""),
    )


def plugin_pod(node: NodeInfo, facts: DraFacts) -> Check:
    pod = facts.plugin_pods.get(node.name)
    if pod is None:
        if not facts.plugins:
            return failed(
                "dra.plugin-pod", "no DRA driver kubelet-plugin DaemonSet in the cluster", INSTALL_HINT
            )
        return failed(
            "dra.plugin-pod",
            "no DRA kubelet-plugin pod runs on this node",
            "check the DaemonSet's nodeSelector/affinity/tolerations against "
            f"`{command_line('kubectl', 'describe', 'node', node.name)}`",
        )
    if pod.phase != "Running" or not pod.ready:
        return failed(
            "dra.plugin-pod",
            f"{pod.namespace}/{pod.name} is {pod.waiting_reason or pod.phase}, "
            f"not ready (restarts {pod.restarts})",
            f"`{command_line('kubectl', '-n', pod.namespace, 'logs', pod.name, '-c', pod.container)}`",
        )
    return passed("dra.plugin-pod", f"{pod.namespace}/{pod.name} ready")


def plugin_log(node: NodeInfo, pod: PluginPod | None, log: str | None) -> Check:
    if pod is None or log is None:
        return skipped("dra.plugin-log", "no DRA kubelet-plugin pod to read")
    found = diagnose(log, "plugin-log", node=node.name)
    if found is None:
        return passed("dra.plugin-log", "no known failure signature in the recent log")
    make = failed if found.category in ("driver", "toolkit") else warned
    return make("dra.plugin-log", f"{found.cause}; log: {found.evidence}", found.hint, found.signature_id)


def device_plugin_beside(node: NodeInfo, device_plugin: PluginPod | None) -> Check | None:
    """A device plugin still advertising nvidia.com/gpu on a DRA node hands out the same GPUs the
    DRA driver publishes: each GPU can be given twice (None where no plugin advertises)."""
    if not node.gpu_capacity:
        return None
    pod = f" ({device_plugin.namespace}/{device_plugin.name})" if device_plugin is not None else ""
    return warned(
        BESIDE_CHECK,
        f"{node.name} still runs the NVIDIA device plugin{pod} beside the DRA driver: it advertises "
        f"{node.gpu_capacity} {GPU_RESOURCE} for the GPUs the DRA driver publishes, so a GPU can be "
        "given to a pod twice",
        "keep the device plugin off DRA nodes (its DaemonSet's nodeSelector/affinity), then "
        f"`{command_line('kubectl', 'describe', 'node', node.name)}` shows no {GPU_RESOURCE}",
    )


def node_checks(
    node: NodeInfo,
    facts: DraFacts,
    expected: int | None,
    log: Check | None,
    device_plugin: PluginPod | None = None,
) -> list[Check]:
    """What replaces the device plugin's capacity/allocatable/pod/log checks on a DRA node."""
    log = log or plugin_log(node, facts.plugin_pods.get(node.name), None)
    published = facts.published(node)
    beside = device_plugin_beside(node, device_plugin)
    return [
        gpus_published(node, published, expected, log),
        devices_untainted(node, published),
        skipped("device-plugin.pod", THROUGH_DRA),
        skipped("device-plugin.log", THROUGH_DRA),
        plugin_pod(node, facts),
        log,
        *([beside] if beside is not None else []),
    ]


def cluster_checks(facts: DraFacts, dra_nodes: list[NodeInfo]) -> list[Check]:
    if not dra_nodes:
        return []
    inventory = facts.inventory
    checks = []
    if inventory.denied:
        checks.append(warned("dra.access", f"not allowed to list {inventory.denied}", "see docs/rbac.md"))
    if not inventory.version:
        checks.append(failed("dra.api", "resource.k8s.io is not served", "DRA needs Kubernetes 1.34+ (v1)"))
    elif not inventory.device_class:
        checks.append(failed("dra.device-class", f"no DeviceClass {DRA_DEVICE_CLASS}", INSTALL_HINT))
    else:
        mapped = f", extended resource {inventory.extended_resource}" if inventory.extended_resource else ""
        checks.append(
            passed(
                "dra.device-class",
                f"DeviceClass {DRA_DEVICE_CLASS} (resource.k8s.io/{inventory.version}{mapped})",
            )
        )
    beside = [node.name for node in dra_nodes if node.gpu_capacity]
    if beside:
        checks.append(
            warned(
                BESIDE_CHECK,
                f"the NVIDIA device plugin still runs beside the DRA driver on {', '.join(beside)}",
                "keep the device plugin's DaemonSet off the DRA nodes (nodeSelector/affinity)",
            )
        )
    return checks


# -- the verification pod and its claim ----------------------------------------------------------


def claim_pod(pod: JsonDict, template: str) -> JsonDict:
    """The verification pod, its GPUs claimed through `template` instead of requested."""
    spec = dict(pod["spec"])
    spec["resourceClaims"] = [{"name": CLAIM, "resourceClaimTemplateName": template}]
    # the pod's one container: nvidia-smi, or a deeper level's workload
    spec["containers"] = [
        dict(container, resources={"claims": [{"name": CLAIM}]}) for container in spec["containers"]
    ]
    return dict(pod, spec=spec)


def matched_to_published(evaluation: PodEvaluation, published: DraNode) -> PodEvaluation:
    """The pod's evaluation (GPUs seen against the published GPUs a claim can get) with
    dra.devices: nvidia-smi's GPUs against the published devices' uuid, productName and driverVersion."""
    if evaluation.seen is None:
        return evaluation
    return replace(evaluation, checks=(*evaluation.checks, _matches_published(evaluation, published)))


def _matches_published(evaluation: PodEvaluation, published: DraNode) -> Check:
    uuids = {device.uuid for device in published.devices if device.uuid}
    unknown = [uuid for uuid in evaluation.uuids if uuids and uuid not in uuids]
    problems = []
    if unknown:
        problems.append(f"GPU(s) not in the node's ResourceSlices: {', '.join(unknown)}")
    if published.product and evaluation.product and published.product != evaluation.product:
        problems.append(f"nvidia-smi shows {evaluation.product!r}, published {published.product!r}")
    reported = evaluation.driver_version
    if published.driver_version and reported and not same_version(published.driver_version, reported):
        problems.append(f"driver {evaluation.driver_version}, published {published.driver_version}")
    if problems:
        return failed(
            "dra.devices",
            "; ".join(problems),
            "the DRA driver's kubelet plugin publishes stale devices: restart its pod on the node",
        )
    return passed("dra.devices", "the GPUs seen are the published devices (uuid, product, driver)")


def claim_check(
    node: NodeInfo, facts: DraFacts, allocation: ClaimAllocation | None, ran: PodEvaluation | None
) -> Check:
    """dra.claim: the scheduler allocated the node's claimable GPUs, on this node."""
    if ran is None or why_no_pod(node, facts):
        return skipped("dra.claim", why_no_pod(node, facts) or "no verification pod")
    if allocation is None:
        scheduled = next((c for c in ran.checks if c.id == "pod.scheduled"), None)
        if scheduled is not None and scheduled.failed:
            return failed(
                "dra.claim", f"claim not allocated: {scheduled.message}", scheduled.hint, scheduled.diagnosis
            )
        return warned("dra.claim", "no allocation of the verification claim was observed")
    wanted = claimable(facts.published(node))
    if allocation.node and allocation.node != node.name:
        return failed(
            "dra.claim", f"claim {allocation.claim} allocated on {allocation.node}, not {node.name}"
        )
    if len(allocation.devices) != wanted:
        return failed(
            "dra.claim",
            f"claim {allocation.claim} got {len(allocation.devices)} device(s), {wanted} claimable",
            "`kubectl get resourceclaims -A` (devices held by other claims)",
        )
    served = f" ({GPU_RESOURCE} {EXTENDED_RESOURCE_NOTE})" if extended_resource_mapped(node, facts) else ""
    return passed(
        "dra.claim",
        f"claim {allocation.claim} allocated {len(allocation.devices)} device(s): "
        + ", ".join(allocation.devices)
        + served,
    )


def extended_resource_check(node: NodeInfo, facts: DraFacts, allocation: ClaimAllocation | None) -> Check:
    """dra.extended-resource (Kubernetes 1.37): the pod asked for nvidia.com/gpu and the scheduler
    served it through the claim it created for the pod."""
    wanted = claimable(facts.published(node))
    if allocation is None:
        return failed(
            "dra.extended-resource",
            f"the verification pod asked for {GPU_RESOURCE}: {wanted}; no claim of the scheduler's "
            "was observed for it",
            "`kubectl get pod -o jsonpath='{.status.extendedResourceClaimStatus}'` on a pod that asks for "
            f"{GPU_RESOURCE}; DeviceClass {DRA_DEVICE_CLASS} must set extendedResourceName",
        )
    return passed(
        "dra.extended-resource",
        f"{GPU_RESOURCE}: {wanted} {EXTENDED_RESOURCE_NOTE} (DeviceClass {DRA_DEVICE_CLASS}, "
        f"claim {allocation.claim})",
    )
