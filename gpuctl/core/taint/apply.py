"""`taint-gpu-nodes`: set (or remove) the GPU taint on GPU nodes, idempotently.

Read every node once, compare, and write only the nodes that differ: a second run makes no write.
The writes themselves (resourceVersion preconditions, conflict retries) are gpuctl.kube.taints'.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.taint.audit import DaemonSetWarning, admission_notes, audit_daemonsets
from gpuctl.core.taint.evictions import EvictedPod, eviction_refusal, pods_evicted_by
from gpuctl.core.taint.rules import check_label_selector
from gpuctl.errors import ConfigError, ExitCode
from gpuctl.kube.client import pooled_client
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.dra import read_inventory
from gpuctl.kube.nodes import Taint, node_from_json
from gpuctl.kube.pods import list_all_pods
from gpuctl.kube.raw import JsonDict, dig, name_of
from gpuctl.kube.taints import NodeTaintWriter, list_node_objects

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

CONCURRENCY = 16  # parallel patches: a real API server answers each in 10-50 ms
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
    evictions: tuple[EvictedPod, ...] = ()  # pods a NoExecute taint evicts (or, dry, would evict)

    @property
    def ok(self) -> bool:
        return bool(self.nodes) and all(change.action != "failed" for change in self.nodes)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK if self.ok else ExitCode.CHECK_FAILED


@dataclass(frozen=True)
class TaintPlan:
    verb: str  # add|update|remove|"" (nothing to do)
    taints: list[JsonDict]
    before: str
    after: str


def plan_taints(current: Sequence[JsonDict], spec: Taint, *, remove: bool) -> TaintPlan:
    """The node's new taint list; taints with another key or effect are kept as they are."""

    def same_slot(taint: JsonDict) -> bool:
        return taint.get("key") == spec.key and taint.get("effect") == spec.effect

    matching = [taint for taint in current if same_slot(taint)]
    before = str(Taint.from_json(matching[0])) if matching else ""
    others = [taint for taint in current if not same_slot(taint)]
    if remove:
        return TaintPlan("remove" if matching else "", others, before, "")
    if len(matching) == 1 and (matching[0].get("value") or "") == spec.value:
        return TaintPlan("", list(current), before, before)
    if not matching:
        return TaintPlan("add", [*current, spec.as_json()], before, str(spec))
    replaced = [spec.as_json() if same_slot(taint) else taint for taint in current]
    deduplicated = [taint for index, taint in enumerate(replaced) if taint not in replaced[:index]]
    return TaintPlan("update", deduplicated, before, str(spec))


def _choose(
    nodes: list[JsonDict], selector: str | None, names: Sequence[str], published: Callable[[], set[str]]
) -> tuple[list[JsonDict], str]:
    """`published`: the nodes with GPUs in DRA ResourceSlices (read only when no node is named)."""
    by_name = {name_of(node): node for node in nodes}
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
    dra_nodes = published()
    gpu_nodes = [node for node in nodes if node_from_json(node).is_gpu_node or name_of(node) in dra_nodes]
    return gpu_nodes, "GPU nodes (nvidia.com/gpu capacity, NFD/GFD labels or DRA ResourceSlices)"


def _taints_of(node: JsonDict) -> list[JsonDict]:
    return list(dig(node, "spec", "taints", default=None) or [])


def _change(writer: NodeTaintWriter, node: JsonDict, spec: Taint, remove: bool) -> NodeTaintChange:
    """Write one node and say what happened, in the words of the run (dry or not)."""
    first = plan_taints(_taints_of(node), spec, remove=remove)

    def planner(current: JsonDict) -> list[JsonDict] | None:
        plan = plan_taints(_taints_of(current), spec, remove=remove)
        return plan.taints if plan.verb else None

    write = writer.write(node, planner)
    last = plan_taints(_taints_of(write.node), spec, remove=remove)
    name, retried = name_of(node), write.conflicts_retried
    if write.error:
        after = "" if retried >= writer.max_attempts else last.before
        return NodeTaintChange(name, "failed", first.before, after, retried, write.error)
    if not write.written:
        return NodeTaintChange(name, "unchanged", first.before, last.after, retried)
    action = f"would {last.verb}" if writer.dry_run else _PAST[last.verb]
    return NodeTaintChange(name, action, first.before, last.after, retried)


def taint_gpu_nodes(
    api_client: ApiClient,
    *,
    taint: Taint,
    remove: bool = False,
    dry_run: bool = False,
    selector: str | None = None,
    node_names: Sequence[str] = (),
    after_read: Callable[[str], None] | None = None,
    allow_evictions: bool = False,
) -> TaintResult:
    """Set (or with `remove`, take off) `taint` on the chosen nodes; see the module docstring.

    Nodes: `node_names` if given, else those matching `selector`, else every GPU node.
    `after_read(node_name)` runs between reading a node and writing it (a seam for tests that
    prove conflict handling with a real concurrent writer).
    A NoExecute taint that would evict running pods is refused (exit 2, the pods named) unless
    `allow_evictions`; dry runs list those pods without refusing.
    """
    if selector is not None:
        check_label_selector(selector)
    nodes, selection = _choose(
        list_node_objects(api_client, selector),
        selector,
        node_names,
        # Which nodes publish GPUs decides which nodes are written: a denied list ends the run
        # (exit 3) rather than leave them untainted; device taints do not change that choice.
        lambda: set(read_inventory(api_client, denied_is_error=True, taint_rules=False).nodes),
    )
    warnings: list[DaemonSetWarning] = []
    notes: list[str] = []
    if not remove:
        warnings = audit_daemonsets(list_gpu_daemonsets(api_client), taint)
        notes = admission_notes(taint)
    evictions = _evictions(api_client, nodes, taint) if not remove else []
    if evictions and not (dry_run or allow_evictions):
        raise eviction_refusal(evictions, taint)
    writer = NodeTaintWriter(pooled_client(api_client, CONCURRENCY), dry_run=dry_run, after_read=after_read)
    ordered = sorted(nodes, key=name_of)
    with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-taint") as pool:
        changes = list(pool.map(lambda node: _change(writer, node, taint, remove), ordered))
    return TaintResult(
        taint=taint,
        remove=remove,
        dry_run=dry_run,
        selection=selection,
        nodes=tuple(changes),
        warnings=tuple(warnings),
        notes=tuple(notes),
        writes=writer.writes,
        evictions=tuple(evictions),
    )


def _evictions(api_client: ApiClient, nodes: list[JsonDict], taint: Taint) -> list[EvictedPod]:
    if taint.effect != "NoExecute" or not nodes:
        return []
    return pods_evicted_by(list_all_pods(api_client), map(name_of, nodes), taint)
