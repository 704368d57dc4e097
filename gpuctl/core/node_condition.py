"""The node condition `GPUProven` that `verify --gate` publishes on every GPU node it judges, for
whatever reads node conditions: the Node Readiness Controller (a NodeReadinessRule turns it into a
taint, `render --readiness-rule`), autoscalers, dashboards, `kubectl describe node`.

status True: proven at the level (reason the level, `cuda`); False: a check failed (reason the
failing check's id itself, `cuda.workload`, the id verify's report and `explain` use; a node
condition's reason, unlike a metav1.Condition's, has no pattern to follow; the message starts with
the id too); a node verify could not judge (its workloads hold every GPU, or
its verification pod ran out of --timeout) keeps the status it had, with a fresh
lastHeartbeatTime and the reason `NotJudgedBusy` / `NotJudgedTimedOut` (Unknown when it had none).
lastTransitionTime moves only when the status changes.

Written to `nodes/<name>/status` by server-side apply under its own field manager, so that only
this one condition is gpuctl's: the kubelet's conditions, and any another reporter sets, stay
theirs (conditions are a list keyed by `type`). The name: the Node Readiness Controller's own
examples use `gpu.nvidia.com/DriverReady` (hack/test-workloads/demo-gpu-driver-readiness-rule.yaml)
and the GPU Operator's autoscaler guide (NVIDIA/gpu-operator pull request #2573) has Node Problem
Detector publish `nvidia.com/GPUReady` from an nvidia-smi probe: both are other reporters'
conditions, and two writers of one condition overwrite each other, so gpuctl keeps its own name
(`verify --gate-condition` chooses another).
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuctl.core.proof.verdict import BUSY, judge
from gpuctl.core.taint.apply import CONCURRENCY
from gpuctl.defaults import CONDITION_FIELD_MANAGER, GATE_CONDITION_TYPE
from gpuctl.errors import UnreachableError
from gpuctl.kube.client import pooled_client
from gpuctl.kube.node_status import apply_condition
from gpuctl.kube.raw import JsonDict, dig, name_of
from gpuctl.kube.taints import list_node_objects

if TYPE_CHECKING:
    from gpuctl.core.proof.verdict import NodeVerdict
    from gpuctl.core.verify.model import NodeResult

TIMEOUT_MARK = "before --timeout ran out"  # what a pod check that ran out of --timeout says


@dataclass(frozen=True)
class Verdict:
    """What one node's condition says: status True/False/Unknown, reason and message."""

    status: str
    reason: str
    message: str
    judged: bool = True  # False: verify could not judge the node (the last status is kept)


@dataclass(frozen=True)
class ConditionResult:
    """What was published, by node: (status, reason); the first refused write, if any."""

    condition_type: str
    published: tuple[tuple[str, str, str], ...]  # (node, status, reason)
    refused: str = ""
    refused_hint: str = ""

    def refusal(self) -> UnreachableError | None:
        return UnreachableError(self.refused, hint=self.refused_hint) if self.refused else None


def verdict_of(node: NodeResult) -> Verdict:
    """The condition a node gets under verify's own verdict (gpuctl.core.proof.verdict.judge)."""
    return condition_verdict(node, judge(node))


def condition_verdict(node: NodeResult, verdict: NodeVerdict) -> Verdict:
    """The condition a judged node gets, or (judged False) the cause it could not be judged."""
    if verdict.verdict == BUSY:
        return Verdict("Unknown", "NotJudgedBusy", "not judged: its workloads hold every GPU", judged=False)
    failures = verdict.failures
    if failures and all(TIMEOUT_MARK in check.message for check in failures):
        cause = f"not judged: {failures[0].id}: {failures[0].message}"
        return Verdict("Unknown", "NotJudgedTimedOut", cause[:1000], judged=False)
    if failures:
        first = failures[0]
        return Verdict("False", first.id, f"{first.id}: {first.message}"[:1000])
    return Verdict("True", node.level, f"proven at level {node.level} by gpuctl verify")


def _timestamp(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def condition(verdict: Verdict, previous: JsonDict | None, now: datetime, condition_type: str) -> JsonDict:
    """The condition to apply: a node not judged keeps its previous status (and says why in its
    reason); lastTransitionTime moves only with the status."""
    status = verdict.status
    message = verdict.message
    if not verdict.judged and previous is not None:
        status = str(previous.get("status") or "Unknown")
        message = f"{verdict.message}; status kept from {previous.get('lastTransitionTime', 'before')}"
    kept = previous.get("lastTransitionTime") if previous and previous.get("status") == status else None
    transition = str(kept or _timestamp(now))
    return {
        "type": condition_type,
        "status": status,
        "reason": verdict.reason,
        "message": message[:1000],
        "lastHeartbeatTime": _timestamp(now),
        "lastTransitionTime": transition,
    }


def _previous(node: JsonDict, condition_type: str) -> JsonDict | None:
    conditions = dig(node, "status", "conditions", default=None) or []
    return next((c for c in conditions if c.get("type") == condition_type), None)


def publish_conditions(
    api_client: Any,
    *,
    verdicts: Mapping[str, Verdict],
    condition_type: str = GATE_CONDITION_TYPE,
    keep_refusal: bool = False,
) -> ConditionResult:
    """Apply each node's condition to its status (nodes that no longer exist are left out)."""
    now = datetime.now(tz=UTC)
    refusals: list[UnreachableError] = []

    # One list for every node's previous condition (one GET per node would double the requests).
    nodes = {name_of(node): node for node in list_node_objects(api_client) if name_of(node) in verdicts}

    writer = pooled_client(api_client, CONCURRENCY)  # a keep-alive connection per thread

    def publish(name: str) -> tuple[str, str, str] | None:
        try:
            node = nodes.get(name)
            if node is None:
                return None  # the node went away since verify read it (or never was: a missing one)
            applied = condition(verdicts[name], _previous(node, condition_type), now, condition_type)
            if not apply_condition(writer, name, applied, CONDITION_FIELD_MANAGER):
                return None
        except UnreachableError as error:
            if not keep_refusal:
                raise
            refusals.append(error)
            return None
        return (name, applied["status"], applied["reason"])

    with ThreadPoolExecutor(max_workers=CONCURRENCY, thread_name_prefix="gpuctl-condition") as pool:
        published = [found for found in pool.map(publish, sorted(nodes)) if found is not None]
    return ConditionResult(
        condition_type,
        tuple(published),
        refused=refusals[0].message if refusals else "",
        refused_hint=refusals[0].hint if refusals else "",
    )
