"""The evidence about one pod, in order of precedence: why it is not scheduled, its RuntimeClass,
its containers (states, messages, logs of the failed ones), its Warning events, its
ResourceClaims, its node."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuctl.core.explain_subject.evidence import LOG_TAIL_LINES, Clue, clue, diagnose_text, log_clues
from gpuctl.core.explain_subject.node import node_state_clues
from gpuctl.diagnose import Diagnosis, diagnose_events, diagnose_scheduling, scheduling_reasons
from gpuctl.kube.claims import allocation_of
from gpuctl.kube.dra import served_version
from gpuctl.kube.nodes import ENFORCED_EFFECTS, HOSTNAME_LABEL, node_from_json, tolerates
from gpuctl.kube.objects import events_about, read_claim, read_node, read_runtime_class
from gpuctl.kube.pods import read_pod_log
from gpuctl.kube.raw import JsonDict, dig, name_of

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

# Where a container's own failure text is looked up: the runtime's start error, then what
# nvidia-smi or a CUDA program printed.
CONTAINER_SOURCES = ("runtime", "nvidia-smi", "cuda-workload", "events")
# Waiting reasons that say only that the container has not started yet.
_TAINT_REASON = re.compile(r"taint", re.IGNORECASE)
STARTING = frozenset({"ContainerCreating", "PodInitializing", ""})


def pod_clues(api_client: ApiClient, pod: JsonDict) -> list[Clue]:
    """Every clue about `pod`, the ones that decide first."""
    namespace = str(dig(pod, "metadata", "namespace", default=""))
    node = str(dig(pod, "spec", "nodeName", default="") or "")
    context = {"node": node or "NODE", "namespace": namespace}
    events = events_about(api_client, "Pod", name_of(pod), namespace)
    warnings = [(event.reason, event.message) for event in events if event.type == "Warning"]
    phase = str(dig(pod, "status", "phase", default="Pending"))
    clues = [clue("pod status", f"phase {phase}, " + (f"on node {node}" if node else "not scheduled"))]
    if not node:
        clues += _scheduling(pod, warnings, context, _selected_node(api_client, pod))
    clues += _runtime_class(api_client, pod)
    for status in _container_statuses(pod):
        clues += _container(api_client, pod, status, context)
    clues += [
        clue(f"event {reason}", message, diagnose_events([(reason, message)], **context))
        for reason, message in _distinct(warnings)
    ]
    clues += _claims(api_client, pod, namespace)
    if node:
        node_object = read_node(api_client, node)
        if node_object is not None:
            clues += node_state_clues(node_object)
    return clues


def _distinct(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return list(dict.fromkeys(pairs))


def _scheduling(
    pod: JsonDict, warnings: list[tuple[str, str]], context: dict[str, str], node: JsonDict | None
) -> list[Clue]:
    """The scheduler's message: the PodScheduled condition's, else its newest FailedScheduling event."""
    messages = [
        str(condition.get("message") or "")
        for condition in dig(pod, "status", "conditions", default=[]) or []
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False"
    ]
    messages += [message for reason, message in reversed(warnings) if reason == "FailedScheduling"]
    message = next((message for message in messages if message), "")
    if not message:
        return [clue("pod status", "no scheduler message yet: the scheduler has not tried this pod")]
    return [
        clue("event FailedScheduling", message, diagnose_scheduling(_about(pod, message, node), **context))
    ]


def _about(pod: JsonDict, message: str, node: JsonDict | None) -> str:
    """The scheduler's message without the taint reasons when the one node the pod selects has no
    taint it does not tolerate: each other node says why it does not fit, and a taint there is not
    why this pod waits (a reason names no node, only how many said it)."""
    if node is None:
        return message
    tolerations = dig(pod, "spec", "tolerations", default=[]) or []
    taints = [taint for taint in node_from_json(node).taints if taint.effect in ENFORCED_EFFECTS]
    if any(not any(tolerates(toleration, taint) for toleration in tolerations) for taint in taints):
        return message
    reasons = [reason for reason in scheduling_reasons(message) if not _TAINT_REASON.search(reason)]
    return f"0/{len(reasons)} nodes are available: {', '.join(reasons)}." if reasons else message


def _selected_node(api_client: ApiClient, pod: JsonDict) -> JsonDict | None:
    """The node the pod's kubernetes.io/hostname node selector picks, None when it picks none."""
    hostname = (dig(pod, "spec", "nodeSelector", default={}) or {}).get(HOSTNAME_LABEL)
    return read_node(api_client, str(hostname)) if hostname else None


def _runtime_class(api_client: ApiClient, pod: JsonDict) -> list[Clue]:
    name = str(dig(pod, "spec", "runtimeClassName", default="") or "")
    if not name:
        return []
    runtime_class = read_runtime_class(api_client, name)
    if runtime_class is None:
        return [
            clue(f"runtimeclass {name}", f'RuntimeClass "{name}" not found', _missing_runtime_class(name))
        ]
    return [clue(f"runtimeclass {name}", f"exists, handler {runtime_class.get('handler') or '?'}")]


def _missing_runtime_class(name: str) -> Diagnosis:
    found = diagnose_text(f'pod rejected: RuntimeClass "{name}" not found', ("events",))
    return found or Diagnosis(
        "pod.runtimeclass-not-found",
        f'RuntimeClass "{name}" not found',
        f"the pod names RuntimeClass {name}, which does not exist in the cluster",
        "create it (`gpuctl render` prints gpuctl's RuntimeClass nvidia: `gpuctl render | kubectl apply "
        "-f -`), or drop runtimeClassName from the pod",
        "runtime",
    )


def _container_statuses(pod: JsonDict) -> Iterator[JsonDict]:
    yield from dig(pod, "status", "initContainerStatuses", default=[]) or []
    yield from dig(pod, "status", "containerStatuses", default=[]) or []


def _container(api_client: ApiClient, pod: JsonDict, status: JsonDict, context: dict[str, str]) -> list[Clue]:
    """A container's current and last state, and its log when it failed."""
    name = str(status.get("name") or "")
    clues: list[Clue] = []
    failed = False
    for when, state in (("", status.get("state") or {}), ("last ", status.get("lastState") or {})):
        for kind, detail in state.items():
            text = _state_text(kind, detail or {})
            if text is None:
                continue
            message = str((detail or {}).get("message") or "")
            found = diagnose_text(message, CONTAINER_SOURCES, **context) if message else None
            clues.append(clue(f"container {name} {when}{kind}", text, found))
            failed = failed or kind == "terminated" or (detail or {}).get("reason") == "CrashLoopBackOff"
    if int(status.get("restartCount") or 0) > 0 and dig(status, "lastState", "terminated"):
        # A restarted container's failed run is its previous one (`kubectl logs --previous`): the
        # current run may be running cleanly, or not started yet.
        clues += _container_log(api_client, pod, name, context, previous=True)
    elif failed:
        clues += _container_log(api_client, pod, name, context)
    return clues


def _state_text(kind: str, detail: JsonDict) -> str | None:
    """The state in words; None for one that says nothing (running, or still starting)."""
    reason = str(detail.get("reason") or "")
    message = str(detail.get("message") or "").strip()
    if kind == "waiting" and reason in STARTING and not message:
        return f"{reason or 'waiting'}" if reason else None
    if kind == "terminated":
        code = detail.get("exitCode")
        if code == 0:
            return None
        reason = f"{reason or 'Error'}, exit code {code}"
    if kind == "running":
        return None
    return f"{reason}: {message}" if message else reason


def _container_log(
    api_client: ApiClient, pod: JsonDict, container: str, context: dict[str, str], *, previous: bool = False
) -> list[Clue]:
    namespace = str(dig(pod, "metadata", "namespace", default=""))
    log = read_pod_log(api_client, namespace, name_of(pod), container, LOG_TAIL_LINES, previous=previous)
    if not isinstance(log, str) or not log.strip():
        return []
    source = f"container {container} {'previous ' if previous else ''}log"
    return list(log_clues(source, log, CONTAINER_SOURCES, **context))


def _claims(api_client: ApiClient, pod: JsonDict, namespace: str) -> list[Clue]:
    """The pod's ResourceClaims (DRA): allocated where, or not yet."""
    statuses = dig(pod, "status", "resourceClaimStatuses", default=[]) or []
    names = [str(s.get("resourceClaimName") or "") for s in statuses if s.get("resourceClaimName")]
    names += [
        str(c.get("resourceClaimName"))
        for c in dig(pod, "spec", "resourceClaims", default=[]) or []
        if c.get("resourceClaimName")
    ]
    if not names:
        return []
    version = served_version(api_client)
    clues = []
    for name in dict.fromkeys(names):
        claim = read_claim(api_client, version, namespace, name) if version else None
        allocation = allocation_of(claim) if claim else None
        if claim is None:
            text = "not found"
        elif allocation is None:
            text = "not allocated"
        else:
            text = (
                f"allocated on node {allocation.node or '?'}: {', '.join(allocation.devices) or 'no device'}"
            )
        clues.append(clue(f"resourceclaim {namespace}/{name}", text))
    return clues
