"""One pod or node explained: its clues gathered in order of precedence, the node's host joined
when an inventory is given, the first diagnosis as the one cause."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from gpuctl.core.explain import ExplainMatch, ExplainResult
from gpuctl.core.explain_subject.evidence import Clue, Evidence, Subject, first_cause
from gpuctl.core.explain_subject.host import host_clues, inventory_host, joined, probe_host_state
from gpuctl.core.explain_subject.node import node_clues, node_state_clues
from gpuctl.core.explain_subject.pod import pod_clues
from gpuctl.errors import ConfigError
from gpuctl.kube.dra import read_inventory
from gpuctl.kube.nodes import node_from_json
from gpuctl.kube.objects import read_node, read_pod
from gpuctl.kube.raw import JsonDict, dig
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

MAX_EVIDENCE = 40


def explain_subject(api_client: ApiClient, subject: Subject, inventory: Path | None = None) -> ExplainResult:
    """The one cause of what `subject` shows, with the evidence (ConfigError when it does not exist)."""
    if subject.kind == "pod":
        pod = _pod(api_client, subject)
        clues = pod_clues(api_client, pod)
        node_name = str(dig(pod, "spec", "nodeName", default="") or "")
        node = read_node(api_client, node_name) if node_name and inventory else None
    else:
        node = _node(api_client, subject)
        if inventory is None and not _has_gpus(api_client, node):
            return _without_gpus(subject, node)
        clues = node_clues(api_client, node)
    cause = first_cause(clues)
    if inventory is not None and node is not None:
        host = _host_clues(node, inventory)
        clues += host
        cause = joined(cause, host)
    return _result(subject, cause, clues)


def _pod(api_client: ApiClient, subject: Subject) -> JsonDict:
    pod = read_pod(api_client, subject.namespace, subject.name)
    if pod is None:
        listing = command_line("kubectl", "get", "pods", "-n", subject.namespace)
        raise ConfigError(
            f"pod {subject.name} not found in namespace {subject.namespace}", hint=f"`{listing}` lists them"
        )
    return pod


def _node(api_client: ApiClient, subject: Subject) -> JsonDict:
    node = read_node(api_client, subject.name)
    if node is None:
        raise ConfigError(f"node {subject.name} not found", hint="`kubectl get nodes` lists them")
    return node


def _has_gpus(api_client: ApiClient, node: JsonDict) -> bool:
    """Whether anything in the cluster says `node` has NVIDIA GPUs: a device plugin resource, an
    NFD/GFD label, a DRA GPU device; a DRA listing RBAC denies counts as maybe."""
    info = node_from_json(node)
    if info.is_gpu_node or any(count > 0 for _, count in info.device_capacity):
        return True
    dra = read_inventory(api_client, taint_rules=False)
    return bool(dra.denied) or info.name in dra.nodes


def _without_gpus(subject: Subject, node: JsonDict) -> ExplainResult:
    """A node nothing says has GPUs: the device plugin's NVML errors there are what a CPU node
    shows, not a GPU stack to diagnose. Its host may still have GPUs no driver made visible."""
    name = node_from_json(node).name
    look = command_line("gpuctl", "explain", f"node/{name}", "--inventory", "INVENTORY")
    note = (
        f"node {name} has no GPUs (no nvidia.com/gpu capacity, no NVIDIA GPU label, no DRA GPU device): "
        f"nothing to explain; if its host has GPUs, `{look}` looks at it over SSH"
    )
    evidence = tuple(clue.evidence for clue in node_state_clues(node))
    return ExplainResult((), subject=subject, evidence=evidence, note=note)


def _host_clues(node: JsonDict, inventory: Path) -> list[Clue]:
    info = node_from_json(node)
    host = inventory_host(inventory, info.name, info.addresses)
    state = probe_host_state(host)
    if isinstance(state, str):
        return [Clue(Evidence(f"host {host.name} probe", state))]
    return host_clues(state, host.name, info.name, str(inventory))


def _result(subject: Subject, cause: Clue | None, clues: list[Clue]) -> ExplainResult:
    matches: tuple[ExplainMatch, ...] = ()
    ordered = [clue.evidence for clue in clues]
    if cause is not None and cause.diagnosis is not None:
        found = cause.diagnosis
        matches = (ExplainMatch(found.signature_id, found.category, found.cause, found.hint, found.evidence),)
        ordered.insert(0, cause.evidence)
    evidence = tuple(dict.fromkeys(ordered))[:MAX_EVIDENCE]
    return ExplainResult(matches, subject=subject, evidence=evidence)
