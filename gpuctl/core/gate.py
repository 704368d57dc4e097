"""The gate: GPU nodes not proven at a level carry `gpuctl.io/unproven=<level>:NoSchedule`, so
that nothing but gpuctl's verification pods (and DaemonSets that tolerate it) lands on them.

`apply_gate` puts the taint on the nodes that failed at `level` (or updates its value to it) and
takes it off those that passed; a passing node also gets the annotation `gpuctl.io/proven-level`
("<level> <RFC 3339 time>"), a failing one loses it. `gate_new_nodes` (bootstrap's cluster phase)
gates the nodes that carry neither the taint nor that annotation: nodes never proven.
Only the gate's own taint and annotation are ever changed: every other taint stays as it is. The
writes (resourceVersion preconditions, conflict retries, server-side dry runs) are
gpuctl.kube.taints'; a node already right is not written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any

from gpuctl.core.taint.apply import CONCURRENCY, plan_taints
from gpuctl.defaults import GATE_TAINT_EFFECT, GATE_TAINT_KEY, PROVEN_ANNOTATION
from gpuctl.errors import UnreachableError
from gpuctl.kube.client import pooled_client
from gpuctl.kube.nodes import Taint
from gpuctl.kube.raw import JsonDict, dig, name_of
from gpuctl.kube.taints import NodeTaintWriter, TaintWrite, list_node_objects

# Given a node as read, the fields to patch (None: the node is right already).
_Planner = Callable[[JsonDict], "JsonDict | None"]


@dataclass(frozen=True)
class GateResult:
    """What the gate did (in a dry run: would do) to each node, by name; plain strings throughout,
    so `dataclasses.asdict` is its JSON."""

    level: str
    dry_run: bool
    gated: tuple[str, ...]  # the taint put on, or its level changed to `level`
    ungated: tuple[str, ...]  # the taint taken off
    unchanged: tuple[str, ...]  # already right (an annotation-only write counts here too)
    failed: tuple[str, ...] = ()  # the write failed (the node kept changing, or the server refused)
    writes: int = 0  # PATCH requests sent (dry runs included)
    # with keep_refusal: the first write the API server refused or never answered (`not authorised:
    # patch node ...`), and its hint; "" when none was
    refused: str = ""
    refused_hint: str = ""
    # `verify --gate`: the taint key and mode it gated with, the GPUProven condition it published
    # (node, status, reason) and, where a node's stack gates its GPUs one by one, the per-GPU
    # rules it created and deleted ("node/device"); see gpuctl.core.proof.gate.
    taint_key: str = GATE_TAINT_KEY
    mode: str = "taint"
    condition_type: str = ""
    conditions: tuple[tuple[str, str, str], ...] = ()
    devices_gated: tuple[str, ...] = ()
    devices_lifted: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.failed

    def refusal(self) -> UnreachableError | None:
        """The error (exit 3) of the refused write, for the caller to raise once it has reported."""
        return UnreachableError(self.refused, hint=self.refused_hint) if self.refused else None


def gate_taint(level: str, key: str = GATE_TAINT_KEY) -> Taint:
    return Taint(key=key, value=level, effect=GATE_TAINT_EFFECT)


def gate_level(taints: Iterable[Taint], key: str = GATE_TAINT_KEY) -> str | None:
    """The level a node is gated at (its gate taint's value), None when it is not gated."""
    return next((t.value for t in taints if t.key == key and t.effect == GATE_TAINT_EFFECT), None)


def proven_annotation(level: str, when: datetime) -> str:
    return f"{level} {when.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"


def _taints_of(node: JsonDict) -> list[JsonDict]:
    return list(dig(node, "spec", "taints", default=None) or [])


def _gated_at(node: JsonDict, key: str = GATE_TAINT_KEY) -> str | None:
    return gate_level((Taint.from_json(taint) for taint in _taints_of(node)), key)


def _proven_level(node: JsonDict) -> str | None:
    """The level of the node's proven-level annotation, None without one."""
    text = dig(node, "metadata", "annotations", PROVEN_ANNOTATION, default=None)
    return str(text).split(" ", 1)[0] if text is not None else None


def _has_annotation(node: JsonDict) -> bool:
    return dig(node, "metadata", "annotations", PROVEN_ANNOTATION, default=None) is not None


def verdict_fields(
    node: JsonDict, *, passed: bool, level: str, proven: str, key: str = GATE_TAINT_KEY
) -> JsonDict | None:
    """The patch that makes `node` right for its verdict at `level` (None: it is right already).
    `proven`: the annotation a passing node gets when its annotation names another level; `key`:
    the gate taint's key (`verify --gate-taint`)."""
    plan = plan_taints(_taints_of(node), gate_taint(level, key), remove=passed)
    fields: JsonDict = {"spec": {"taints": plan.taints}} if plan.verb else {}
    if passed and _proven_level(node) != level:
        fields["metadata"] = {"annotations": {PROVEN_ANNOTATION: proven}}
    if not passed and _has_annotation(node):
        fields["metadata"] = {"annotations": {PROVEN_ANNOTATION: None}}
    return fields or None


def new_node_fields(node: JsonDict, *, level: str) -> JsonDict | None:
    """The patch that gates a node never proven (None: it is proven, or gated already)."""
    if _has_annotation(node) or _gated_at(node) is not None:
        return None
    return {"spec": {"taints": plan_taints(_taints_of(node), gate_taint(level), remove=False).taints}}


def _run(
    api_client: Any,
    planners: Mapping[str, _Planner],
    gated_after: Mapping[str, bool],
    *,
    level: str,
    dry_run: bool,
    keep_refusal: bool = False,
    key: str = GATE_TAINT_KEY,
) -> GateResult:
    """Write every named node that exists with its planner; sort the outcomes by what the gate did.
    A write the API server refuses (403) or does not answer raises, or with `keep_refusal` fails
    that node and is kept in the result, so the caller can report the verdicts before it exits 3."""
    nodes = sorted((node for node in list_node_objects(api_client) if name_of(node) in planners), key=name_of)
    writer = NodeTaintWriter(pooled_client(api_client, CONCURRENCY), dry_run=dry_run)
    refusals: list[UnreachableError] = []

    def write_one(node: JsonDict) -> TaintWrite:
        try:
            return writer.write_fields(node, planners[name_of(node)])
        except UnreachableError as error:
            if not keep_refusal:
                raise
            refusals.append(error)
            return TaintWrite(node, False, 0, error.message)

    with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-gate") as pool:
        writes = list(pool.map(write_one, nodes))
    outcome: dict[str, list[str]] = {"gated": [], "ungated": [], "unchanged": [], "failed": []}
    for write in writes:
        outcome[_outcome(write, gated_after[name_of(write.node)], level, key)].append(name_of(write.node))
    return GateResult(
        level=level,
        dry_run=dry_run,
        gated=tuple(outcome["gated"]),
        ungated=tuple(outcome["ungated"]),
        unchanged=tuple(outcome["unchanged"]),
        failed=tuple(outcome["failed"]),
        writes=writer.writes,
        refused=refusals[0].message if refusals else "",
        refused_hint=refusals[0].hint if refusals else "",
    )


def _outcome(write: TaintWrite, gated: bool, level: str, key: str = GATE_TAINT_KEY) -> str:
    """`write.node` is the node as last read before the write, so its taint is the one before."""
    if write.error:
        return "failed"
    before = _gated_at(write.node, key)
    if write.written and gated and before != level:
        return "gated"
    if write.written and not gated and before is not None:
        return "ungated"
    return "unchanged"


def apply_gate(
    api_client: Any,
    *,
    verdicts: Mapping[str, bool],
    level: str,
    dry_run: bool = False,
    keep_refusal: bool = False,
    taint_key: str = GATE_TAINT_KEY,
) -> GateResult:
    """Gate the GPU nodes that failed at `level`, ungate those that passed; `verdicts`: GPU node
    name → passed at that level. Nodes that no longer exist are left out. `keep_refusal`: a refused
    write is kept in the result (GateResult.refusal) instead of raised. `taint_key`: the gate
    taint's key (`verify --gate-taint`, e.g. a readiness.k8s.io/ key)."""
    proven = proven_annotation(level, datetime.now(tz=UTC))
    planners: dict[str, _Planner] = {
        name: partial(verdict_fields, passed=ok, level=level, proven=proven, key=taint_key)
        for name, ok in verdicts.items()
    }
    gated_after = {name: not ok for name, ok in verdicts.items()}
    return _run(
        api_client,
        planners,
        gated_after,
        level=level,
        dry_run=dry_run,
        keep_refusal=keep_refusal,
        key=taint_key,
    )


def gate_new_nodes(api_client: Any, *, nodes: Iterable[str], level: str, dry_run: bool = False) -> GateResult:
    """Gate, at `level`, the named GPU nodes that were never proven (bootstrap's cluster phase)."""
    names = list(nodes)
    planners: dict[str, _Planner] = dict.fromkeys(names, partial(new_node_fields, level=level))
    return _run(api_client, planners, dict.fromkeys(names, True), level=level, dry_run=dry_run)
