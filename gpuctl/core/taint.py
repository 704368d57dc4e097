"""`taint-gpu-nodes`: set (or remove) the GPU taint on GPU nodes, idempotently.

Read every node once, compare, and write only the nodes that differ: a second run makes no write.
`spec.taints` has no strategic-merge key, so a patch replaces the whole list; the patch therefore
carries the resourceVersion it was computed from, and a 409 Conflict (someone else changed the
node meanwhile) is retried from a fresh read instead of overwriting their change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.taint_audit import DaemonSetWarning, admission_notes, audit_daemonsets
from gpuctl.core.taint_rules import check_label_selector
from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call, pooled_client
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.nodes import Taint, node_from_json
from gpuctl.kube.raw import JsonDict, call_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

SCHEMA = "gpuctl.taint/v1"
MAX_ATTEMPTS = 5
CONCURRENCY = 16  # parallel patches: a real API server answers each in 10-50 ms
STRATEGIC_MERGE = "application/strategic-merge-patch+json"
_PAST = {"add": "added", "update": "updated", "remove": "removed"}


@dataclass(frozen=True)
class NodeTaintChange:
    """What happened (or, in a dry run, would happen) to one node."""

    node: str
    action: str  # added|updated|removed|unchanged|would add|would update|would remove|failed
    before: str  # the node's taint with the same key and effect before the run ("" if none)
    after: str  # that taint afterwards ("" if none)
    conflicts_retried: int = 0
    message: str = ""


@dataclass(frozen=True)
class TaintResult:
    taint: Taint
    remove: bool
    dry_run: bool
    selection: str  # how the nodes were chosen, for people
    nodes: tuple[NodeTaintChange, ...]
    warnings: tuple[DaemonSetWarning, ...]
    notes: tuple[str, ...]
    writes: int  # PATCH requests sent (dry runs included)

    @property
    def ok(self) -> bool:
        return bool(self.nodes) and all(change.action != "failed" for change in self.nodes)


@dataclass(frozen=True)
class _Plan:
    verb: str  # add|update|remove|"" (nothing to do)
    taints: list[JsonDict]
    before: str
    after: str


def plan_taints(current: Sequence[JsonDict], spec: Taint, *, remove: bool) -> _Plan:
    """The node's new taint list; taints with another key or effect are kept as they are."""

    def same_slot(taint: JsonDict) -> bool:
        return taint.get("key") == spec.key and taint.get("effect") == spec.effect

    matching = [taint for taint in current if same_slot(taint)]
    before = str(Taint.from_json(matching[0])) if matching else ""
    others = [taint for taint in current if not same_slot(taint)]
    if remove:
        return _Plan("remove" if matching else "", others, before, "")
    if len(matching) == 1 and (matching[0].get("value") or "") == spec.value:
        return _Plan("", list(current), before, before)
    if not matching:
        return _Plan("add", [*current, spec.as_json()], before, str(spec))
    replaced = [spec.as_json() if same_slot(taint) else taint for taint in current]
    deduplicated = [taint for index, taint in enumerate(replaced) if taint not in replaced[:index]]
    return _Plan("update", deduplicated, before, str(spec))


def _list_nodes(api_client: ApiClient, selector: str | None) -> list[JsonDict]:
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException

    kwargs = {"label_selector": selector} if selector else {}
    try:
        with api_call("list", "nodes"):
            body = call_json(CoreV1Api(api_client).list_node, **kwargs)
    except ApiException as error:
        if error.status == 400:
            raise ConfigError(
                f"--selector {selector!r}: rejected by the API server ({error.reason})",
                hint="check the selector syntax with `kubectl get nodes -l SELECTOR`",
            ) from error
        raise
    items: list[JsonDict] = body.get("items") or []
    return items


def _choose(nodes: list[JsonDict], selector: str | None, names: Sequence[str]) -> tuple[list[JsonDict], str]:
    by_name = {node["metadata"]["name"]: node for node in nodes}
    if names:
        unknown = [name for name in names if name not in by_name]
        if unknown:
            where = f" matching --selector {selector!r}" if selector else ""
            raise ConfigError(
                f"--nodes: unknown node(s){where}: {', '.join(unknown)}",
                hint="list the nodes with `kubectl get nodes` (or `gpuctl status`)",
            )
        return [by_name[name] for name in dict.fromkeys(names)], "the nodes named by --nodes"
    if selector:
        return nodes, f"nodes matching {selector!r}"
    gpu_nodes = [node for node in nodes if node_from_json(node).is_gpu_node]
    return gpu_nodes, "GPU nodes (nvidia.com/gpu capacity or NFD/GFD labels)"


class _NodePatcher:
    """Applies one plan per node with optimistic concurrency, counting writes."""

    def __init__(
        self,
        api_client: ApiClient,
        spec: Taint,
        *,
        remove: bool,
        dry_run: bool,
        after_read: Callable[[str], None] | None,
    ) -> None:
        from kubernetes.client import CoreV1Api

        self.core = CoreV1Api(api_client)
        self.spec, self.remove, self.dry_run = spec, remove, dry_run
        self.after_read = after_read
        self.writes = 0
        self._lock = threading.Lock()

    def _read(self, name: str) -> JsonDict:
        with api_call("get", f"node {name}"):
            return call_json(self.core.read_node, name)

    def _patch(self, node: JsonDict, taints: list[JsonDict]) -> JsonDict:
        name = node["metadata"]["name"]
        body = {
            "metadata": {"resourceVersion": node["metadata"].get("resourceVersion", "")},
            "spec": {"taints": taints},
        }
        kwargs = {"dry_run": "All"} if self.dry_run else {}
        with self._lock:
            self.writes += 1
        with api_call("patch", f"node {name}"):
            return call_json(self.core.patch_node, name, body, _content_type=STRATEGIC_MERGE, **kwargs)

    def apply(self, node: JsonDict) -> NodeTaintChange:
        from kubernetes.client.exceptions import ApiException

        name = node["metadata"]["name"]
        first = plan_taints((node.get("spec") or {}).get("taints") or [], self.spec, remove=self.remove)
        for attempt in range(MAX_ATTEMPTS):
            plan = plan_taints((node.get("spec") or {}).get("taints") or [], self.spec, remove=self.remove)
            if not plan.verb:
                return NodeTaintChange(name, "unchanged", first.before, plan.after, attempt)
            if self.after_read is not None:
                self.after_read(name)
            try:
                self._patch(node, plan.taints)
            except ApiException as error:
                if error.status != 409:
                    return NodeTaintChange(
                        name,
                        "failed",
                        first.before,
                        plan.before,
                        attempt,
                        f"patch node {name}: {error.status} {error.reason}",
                    )
                node = self._read(name)
                continue
            action = f"would {plan.verb}" if self.dry_run else _PAST[plan.verb]
            return NodeTaintChange(name, action, first.before, plan.after, attempt)
        return NodeTaintChange(
            name,
            "failed",
            first.before,
            "",
            MAX_ATTEMPTS,
            f"node {name} kept changing: {MAX_ATTEMPTS} conflicting writes in a row; rerun the command",
        )


def taint_gpu_nodes(
    api_client: ApiClient,
    *,
    taint: Taint,
    remove: bool = False,
    dry_run: bool = False,
    selector: str | None = None,
    node_names: Sequence[str] = (),
    after_read: Callable[[str], None] | None = None,
) -> TaintResult:
    """Set (or with `remove`, take off) `taint` on the chosen nodes; see the module docstring.

    Nodes: `node_names` if given, else those matching `selector`, else every GPU node.
    `after_read(node_name)` runs between reading a node and writing it (a seam for tests that
    prove conflict handling with a real concurrent writer).
    """
    if selector is not None:
        check_label_selector(selector)
    nodes, selection = _choose(_list_nodes(api_client, selector), selector, node_names)
    warnings: list[DaemonSetWarning] = []
    notes: list[str] = []
    if not remove:
        warnings = audit_daemonsets(list_gpu_daemonsets(api_client), taint)
        notes = admission_notes(taint)
    patcher = _NodePatcher(
        pooled_client(api_client, CONCURRENCY), taint, remove=remove, dry_run=dry_run, after_read=after_read
    )
    ordered = sorted(nodes, key=lambda node: node["metadata"]["name"])
    with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-taint") as pool:
        changes = list(pool.map(patcher.apply, ordered))
    return TaintResult(
        taint=taint,
        remove=remove,
        dry_run=dry_run,
        selection=selection,
        nodes=tuple(changes),
        warnings=tuple(warnings),
        notes=tuple(notes),
        writes=patcher.writes,
    )
