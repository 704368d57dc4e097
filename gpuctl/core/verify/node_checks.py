"""Read-only per-node checks: node state, GPU counts, device plugin pod and log, taints."""

from __future__ import annotations

from gpuctl.core.stacks.device_plugin.sharing import physical_capacity
from gpuctl.core.verify.model import IN_USE_CHECK, Check, Held, failed, passed, skipped, warned
from gpuctl.defaults import is_gate_taint_key
from gpuctl.diagnose import diagnose
from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod
from gpuctl.kube.nodes import ENFORCED_EFFECTS, NodeInfo
from gpuctl.shell import command_line

# Waiting reasons of a container that has not started yet (not a crash, not a pull failure).
STARTING = ("ContainerCreating", "PodInitializing")


def _describe_node(node: NodeInfo) -> str:
    return command_line("kubectl", "describe", "node", node.name)


def _pod_command(pod: PluginPod, *verb: str) -> str:
    """`kubectl -n NAMESPACE VERB... NAME` for the plugin pod."""
    return command_line("kubectl", "-n", pod.namespace, *verb, pod.name)


def node_ready(node: NodeInfo) -> Check:
    if node.ready:
        return passed("node.ready", "Ready")
    text = f"NotReady ({node.ready_reason}): {node.ready_message}".strip()
    found = diagnose(f"NotReady {node.ready_reason} {node.ready_message}", "node", node=node.name)
    hint = found.hint if found else f"`{_describe_node(node)}`"
    return failed("node.ready", text[:200], hint, found.signature_id if found else "")


def node_schedulable(node: NodeInfo) -> Check:
    if not node.unschedulable:
        return passed("node.schedulable", "schedulable")
    return failed(
        "node.schedulable",
        "cordoned (spec.unschedulable): no GPU workload can land here",
        f"`{command_line('kubectl', 'uncordon', node.name)}` if the maintenance is over",
        "sched.unschedulable",
    )


def gpu_capacity(node: NodeInfo, expected: int | None, plugin_log: Check | None = None) -> Check:
    """`plugin_log`: the device-plugin.log check; its diagnosis explains a missing capacity."""
    others = [f"{count} {name}" for name, count in node.device_capacity if count and name != "nvidia.com/gpu"]
    if node.gpu_capacity == 0 and others:  # MIG mixed (nvidia.com/mig-*) or renamed shared GPUs
        return passed("gpu.capacity", "capacity " + ", ".join(others))
    if node.gpu_capacity == 0:
        why = "labelled as a GPU node" if node.gpu_labelled else "expected to be a GPU node"
        message = f"{why} but advertises no nvidia.com/gpu capacity"
        if plugin_log is not None and plugin_log.diagnosis:
            cause = plugin_log.message.split("; log:", 1)[0]
            return failed("gpu.capacity", f"{message}: {cause}", plugin_log.hint, plugin_log.diagnosis)
        found = diagnose("advertises no nvidia.com/gpu", "node", node=node.name)
        assert found is not None  # the table has this signature
        return failed("gpu.capacity", message, found.hint, found.signature_id)
    if expected is not None and physical_capacity(node) != expected:
        return failed(
            "gpu.capacity",
            f"capacity {node.gpu_capacity} nvidia.com/gpu, expected {expected}"
            if physical_capacity(node) == node.gpu_capacity
            else f"capacity {physical_capacity(node)} physical GPU(s), expected {expected}",
            f"`{_describe_node(node)}`; compare `nvidia-smi -L` on the node with --expect-gpus",
        )
    return passed("gpu.capacity", f"capacity {node.gpu_capacity} nvidia.com/gpu")


def gpu_allocatable(node: NodeInfo) -> Check:
    if node.gpu_capacity == 0 and any(count for _, count in node.device_capacity):
        return passed("gpu.allocatable", f"allocatable {sum(count for _, count in node.device_allocatable)}")
    if node.gpu_capacity == 0:
        return skipped("gpu.allocatable", "no GPU capacity")
    if node.gpu_allocatable < node.gpu_capacity:
        text = f"allocatable {node.gpu_allocatable} < capacity {node.gpu_capacity}"
        found = diagnose(text, "node", node=node.name)
        unhealthy = node.gpu_capacity - node.gpu_allocatable
        return failed(
            "gpu.allocatable",
            f"{text}: {unhealthy} GPU(s) unhealthy",
            found.hint if found else "",
            found.signature_id if found else "",
        )
    return passed("gpu.allocatable", f"allocatable {node.gpu_allocatable}")


def device_plugin_pod(node: NodeInfo, pod: PluginPod | None, any_plugin: bool) -> Check:
    if pod is None:
        if not any_plugin:
            return failed(
                "device-plugin.pod",
                "no NVIDIA device plugin DaemonSet in the cluster",
                "install it: `gpuctl render | kubectl apply -f -` (or the GPU Operator)",
            )
        return failed(
            "device-plugin.pod",
            "no device plugin pod runs on this node",
            f"check the DaemonSet's nodeSelector/tolerations against `{_describe_node(node)}`",
        )
    if not pod.ready and not pod.restarts and (pod.phase == "Pending" or pod.waiting_reason in STARTING):
        return failed(
            "device-plugin.pod",
            f"{pod.namespace}/{pod.name} is still starting ({pod.waiting_reason or pod.phase}): "
            "its GPUs are not registered yet",
            f"rerun `gpuctl verify` in a minute; if it stays so, `{_pod_command(pod, 'describe', 'pod')}`",
        )
    if pod.phase != "Running" or not pod.ready:
        state = pod.waiting_reason or pod.phase
        return failed(
            "device-plugin.pod",
            f"{pod.namespace}/{pod.name} is {state}, not ready (restarts {pod.restarts})",
            f"`{_pod_command(pod, 'describe', 'pod')}` and `{_pod_command(pod, 'logs')}`",
        )
    return passed("device-plugin.pod", f"{pod.namespace}/{pod.name} ready")


def device_plugin_log(node: NodeInfo, pod: PluginPod | None, log: str | None) -> Check:
    if pod is None or log is None:
        return skipped("device-plugin.log", "no device plugin pod to read")
    # The pod by name: the GPU Operator's plugin is neither in kube-system nor labelled as gpuctl's.
    restart = _pod_command(pod, "delete", "pod")
    found = diagnose(log, "plugin-log", node=node.name, plugin_restart=restart)
    if found is None:
        return passed("device-plugin.log", "no known failure signature in the recent log")
    severe = node.gpu_capacity == 0 or node.gpu_allocatable < node.gpu_capacity
    make = failed if severe else warned
    return make(
        "device-plugin.log",
        f"{found.cause}; log: {found.evidence}",
        found.hint,
        found.signature_id,
    )


def taint_toleration(node: NodeInfo, plugins: list[DaemonSetInfo]) -> Check:
    blocking = [t for t in node.taints if t.effect in ENFORCED_EFFECTS]
    if not blocking:
        return passed("taint.toleration", "no NoSchedule/NoExecute taints")
    untolerated = sorted(
        {
            f"{ds.namespace}/{ds.name} ✗ {taint}"
            for ds in plugins
            for taint in blocking
            if not ds.tolerates(taint)
        }
    )
    if untolerated:
        # A plugin pod already running stays on a gated node (NoSchedule), so the node can still be
        # proven; one that restarts would not come back: worth a warning, not a failed node.
        only_gate = all(
            is_gate_taint_key(taint.key) for ds in plugins for taint in blocking if not ds.tolerates(taint)
        )
        return (warned if only_gate else failed)(
            "taint.toleration",
            "device plugin does not tolerate the node's taint: " + "; ".join(untolerated),
            "add a matching toleration to the DaemonSet (`gpuctl taint-gpu-nodes` audits this), "
            f"or remove the taint: `{command_line('kubectl', 'taint', 'nodes', node.name, 'KEY-')}`",
        )
    names = ", ".join(str(taint) for taint in blocking)
    return passed("taint.toleration", f"taints tolerated by the device plugin: {names}")


def gpus_in_use(node: NodeInfo, held: Held) -> Check | None:
    """gpu.in-use: GPUs the node's workloads hold are left to them (None when they hold none).
    All held: this run cannot prove the node, and says so rather than wait on, or evict, its work."""
    if held.devices <= 0:
        return None
    names = ", ".join(held.by[:3]) + (f" and {len(held.by) - 3} more" if len(held.by) > 3 else "")
    holders = f"{len(held.by)} workload(s) ({names})" if held.by else "its workloads"
    if held.busy:
        return warned(
            IN_USE_CHECK,
            f"all {held.devices} GPU(s) held by {holders}: not proven by this run",
            "verify it again when they have finished, or drain it for a proof now "
            f"(`{command_line('kubectl', 'drain', node.name, '--ignore-daemonsets')}`, then verify, then "
            f"`{command_line('kubectl', 'uncordon', node.name)}`)",
        )
    return passed(
        IN_USE_CHECK, f"{held.devices} GPU(s) held by {holders}: the verification took the {held.free} free"
    )
