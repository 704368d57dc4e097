"""The evidence about one node, in order of precedence: its Ready condition, the GPU plugin and
operand pods running there (statuses, log tails), its events, its taints and what it advertises."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.explain_subject.evidence import LOG_TAIL_LINES, Clue, clue, diagnose_text, log_clues
from gpuctl.kube.daemonsets import DEVICE_PLUGIN, DRA_KUBELET_PLUGIN, pod_component
from gpuctl.kube.gpu_operator import ContainerState, OperandPod, pod_state
from gpuctl.kube.nodes import NodeInfo, node_from_json
from gpuctl.kube.objects import events_about, pods_on_node
from gpuctl.kube.pods import read_pod_log
from gpuctl.kube.raw import JsonDict, dig, name_of
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

# Where a GPU component's log is looked up first.
_LOG_SOURCES = {
    DEVICE_PLUGIN: ("plugin-log",),
    DRA_KUBELET_PLUGIN: ("plugin-log",),
    "NVIDIA driver": ("operator-driver", "kernel"),
}
_ANY_LOG = ("plugin-log", "operator-driver", "runtime", "nvidia-smi")


def node_state_clues(node: JsonDict) -> list[Clue]:
    """The node's conditions, then its cordon, taints and nvidia.com/gpu capacity and allocatable."""
    return [*condition_clues(node), *advertised_clues(node_from_json(node))]


def condition_clues(node: JsonDict) -> list[Clue]:
    """Ready when it is not (a NotReady node explains everything on it), and any other condition
    that holds (pressure)."""
    info = node_from_json(node)
    where = f"node {info.name} condition"
    clues = []
    if not info.ready:
        text = f"Ready {info.ready_reason or 'False'}: {info.ready_message}".strip()
        clues.append(clue(where, text, diagnose_text(f"NotReady {text}", ("node",), node=info.name)))
    for condition in dig(node, "status", "conditions", default=[]) or []:
        if condition.get("type") != "Ready" and condition.get("status") == "True":
            clues.append(clue(where, f"{condition.get('type')}: {condition.get('message') or ''}"))
    return clues


def advertised_clues(info: NodeInfo) -> list[Clue]:
    clues = []
    if info.unschedulable:
        clues.append(clue(f"node {info.name}", "cordoned (spec.unschedulable)"))
    if info.taints:
        clues.append(clue(f"node {info.name} taints", ", ".join(map(str, info.taints))))
    return [*clues, _gpus(info)]


def _gpus(info: NodeInfo) -> Clue:
    text = f"nvidia.com/gpu capacity {info.gpu_capacity}, allocatable {info.gpu_allocatable}"
    where, context = f"node {info.name} status", {"node": info.name}
    if info.gpu_allocatable < info.gpu_capacity:
        symptom = f"allocatable {info.gpu_allocatable} < capacity {info.gpu_capacity}"
        return clue(where, text, diagnose_text(symptom, ("node",), **context))
    if info.is_gpu_node and info.gpu_capacity == 0:
        return clue(where, text, diagnose_text("advertises no nvidia.com/gpu", ("node",), **context))
    return clue(where, text)


def node_clues(api_client: ApiClient, node: JsonDict) -> list[Clue]:
    """Every clue about `node`, the ones that decide first."""
    name = name_of(node)
    clues = condition_clues(node)
    for pod in pods_on_node(api_client, name):
        component = pod_component(pod)
        if component:
            clues += _component_clues(api_client, pod, component, name)
    for event in events_about(api_client, "Node", name):
        if event.type == "Warning":
            found = diagnose_text(event.message, ("node", "events"), node=name)
            clues.append(clue(f"event {event.reason}", event.message, found))
    return clues + advertised_clues(node_from_json(node))


def _component_clues(api_client: ApiClient, pod: JsonDict, component: str, node: str) -> list[Clue]:
    """A GPU component pod's status and the log tails of its troubled containers (its main
    container's when none is: a running plugin logs XIDs and devices it found none of)."""
    seen = pod_state(pod, component)
    where = f"pod {seen.namespace}/{seen.name}"
    clues = [clue(where, f"{component}: {_pod_words(seen)}")]
    containers = [*seen.init_containers, *seen.containers]
    troubled = [c for c in containers if _troubled(c)] or seen.containers[:1]
    context = {
        "node": node,
        "namespace": seen.namespace,
        "plugin_restart": command_line("kubectl", "-n", seen.namespace, "delete", "pod", seen.name),
    }
    sources = _LOG_SOURCES.get(component, ()) + _ANY_LOG
    for container in troubled:
        log = read_pod_log(api_client, seen.namespace, seen.name, container.name, LOG_TAIL_LINES)
        if isinstance(log, str) and log.strip():
            clues += log_clues(f"{where} log", log, sources, **context)
    return clues


def _troubled(container: ContainerState) -> bool:
    starting = container.state == "waiting" and container.reason in ("ContainerCreating", "PodInitializing")
    failed = container.state == "terminated" and not container.succeeded
    return container.restarts > 0 or failed or (container.state == "waiting" and not starting)


def _pod_words(pod: OperandPod) -> str:
    waiting = [
        f"{c.name} {c.reason}"
        for c in (*pod.init_containers, *pod.containers)
        if c.reason and not c.succeeded
    ]
    return f"{pod.phase}, {'ready' if pod.ready else 'not ready'}, {pod.restarts} restart(s)" + (
        f", {'; '.join(waiting)}" if waiting else ""
    )
