"""The disruption controller: each PodDisruptionBudget's status (currentHealthy, desiredHealthy,
expectedPods, disruptionsAllowed, disruptedPods, observedGeneration and the DisruptionAllowed
condition), computed as kube-controller-manager's pkg/controller/disruption does. The Eviction
API (gpuctl/sim/api/evictions.py) reads that status and records the pods it lets go."""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.predicates import matches_label_selector
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]
PDBS = "poddisruptionbudgets.policy"
PASS = "disruption"
# How long an eviction's pod may stay undeleted before the budget counts it again (DeletionTimeout).
DELETION_TIMEOUT_S = 120.0


class NoController(Exception):
    """A pod the budget selects has a controller the sim does not know the scale of."""


def watch(cluster: ClusterState) -> None:
    """What the controller reads: the budgets and the pods (their readiness and deletion)."""
    cluster.store.watch(PDBS, lambda _: cluster.controller_soon(PASS))
    cluster.store.watch("pods", lambda _: _pod_changed(cluster))


def _pod_changed(cluster: ClusterState) -> None:
    if cluster.store.count(PDBS):  # thousands of pod writes, and usually no budget at all
        cluster.controller_soon(PASS)


def is_ready(pod: Obj) -> bool:
    conditions = pod.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def selected_pods(cluster: ClusterState, budget: Obj) -> list[Obj]:
    selector = budget.get("spec", {}).get("selector")
    pods = cluster.store.items("pods", budget["metadata"]["namespace"])
    return [pod for pod in pods if matches_label_selector(selector, pod["metadata"].get("labels") or {})]


def reconcile(cluster: ClusterState) -> None:
    for budget in cluster.store.items(PDBS):
        status = _status(cluster, budget)
        if budget.get("status") != status:
            cluster.store.put(PDBS, dict(budget, status=status))


def _status(cluster: ClusterState, budget: Obj) -> Obj:
    pods = selected_pods(cluster, budget)
    previous = budget.get("status") or {}
    generation = budget["metadata"].get("generation", 1)
    try:
        expected, desired = _expected_and_desired(cluster, budget, pods)
    except NoController as error:  # failSafe: no disruption until the budget can be computed
        return dict(
            previous,
            disruptionsAllowed=0,
            conditions=[
                _condition(previous, False, "SyncFailed", str(error), previous.get("observedGeneration"))
            ],
        )
    disrupted = _disrupted_pods(pods, previous.get("disruptedPods") or {})
    healthy = sum(
        1
        for pod in pods
        if not pod["metadata"].get("deletionTimestamp")
        and pod["metadata"]["name"] not in disrupted
        and is_ready(pod)
    )
    allowed = healthy - desired if expected > 0 and healthy > desired else 0
    status: Obj = {
        "observedGeneration": generation,
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    status["conditions"] = [allowed_condition(previous, allowed, generation)]
    return status


def allowed_condition(previous: Obj, allowed: int, generation: int | None) -> Obj:
    """The DisruptionAllowed condition for `allowed` (pdbhelper.UpdateDisruptionAllowedCondition)."""
    reason = "SufficientPods" if allowed > 0 else "InsufficientPods"
    return _condition(previous, allowed > 0, reason, "", generation)


def _condition(previous: Obj, allowed: bool, reason: str, message: str, generation: int | None) -> Obj:
    """SetStatusCondition: the transition time moves only when the status does."""
    status = "True" if allowed else "False"
    old = next((c for c in previous.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None)
    since = old["lastTransitionTime"] if old is not None and old.get("status") == status else rfc3339()
    condition: Obj = {"type": "DisruptionAllowed", "status": status}
    if generation:
        condition["observedGeneration"] = generation
    condition.update(lastTransitionTime=since, reason=reason, message=message)
    return condition


def _expected_and_desired(cluster: ClusterState, budget: Obj, pods: list[Obj]) -> tuple[int, int]:
    """getExpectedPodCount: an integer minAvailable counts the selected pods; a percentage or a
    maxUnavailable counts what the pods' controllers want (rounded up, as intstr does)."""
    spec = budget.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        expected = _expected_scale(cluster, pods)
        return expected, max(expected - scaled(spec["maxUnavailable"], expected), 0)
    minimum = spec.get("minAvailable")
    if isinstance(minimum, int):
        return len(pods), minimum
    if isinstance(minimum, str):
        expected = _expected_scale(cluster, pods)
        return expected, scaled(minimum, expected)
    return 0, 0


def scaled(value: int | str, total: int) -> int:
    """intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def _expected_scale(cluster: ClusterState, pods: list[Obj]) -> int:
    """The sum of the replicas wanted by the controllers of the pods (pods with none are left out)."""
    scales: dict[str, int] = {}
    for pod in pods:
        owner = controller_of(pod)
        if owner is None or owner.get("uid") in scales:
            continue
        found = _controller_scale(cluster, pod["metadata"]["namespace"], owner)
        if found is None:
            raise NoController(f'found no controllers for pod "{pod["metadata"]["name"]}"')
        scales[found[0]] = found[1]
    return sum(scales.values())


def controller_of(obj: Obj) -> Obj | None:
    return next((ref for ref in obj["metadata"].get("ownerReferences") or [] if ref.get("controller")), None)


def _controller_scale(cluster: ClusterState, namespace: str, owner: Obj) -> tuple[str, int] | None:
    """(uid, replicas) of the ReplicaSet's Deployment, else of the ReplicaSet."""
    if owner.get("kind") != "ReplicaSet":
        return None
    replica_set = cluster.store.get("replicasets.apps", namespace, owner.get("name", ""))
    if replica_set is None or replica_set["metadata"]["uid"] != owner.get("uid"):
        return None
    parent = controller_of(replica_set)
    if parent is not None and parent.get("kind") == "Deployment":
        deployment = cluster.store.get("deployments.apps", namespace, parent.get("name", ""))
        if deployment is not None and deployment["metadata"]["uid"] == parent.get("uid"):
            return parent["uid"], int(deployment.get("spec", {}).get("replicas", 1))
    return owner["uid"], int(replica_set.get("spec", {}).get("replicas", 1))


def _disrupted_pods(pods: list[Obj], recorded: dict[str, str]) -> dict[str, str]:
    """buildDisruptedPodMap: evicted pods not yet deleting, for DELETION_TIMEOUT_S at most."""
    now = time.time()
    kept = {}
    for pod in pods:
        name = pod["metadata"]["name"]
        if pod["metadata"].get("deletionTimestamp") or name not in recorded:
            continue
        if _epoch(recorded[name]) + DELETION_TIMEOUT_S >= now:
            kept[name] = recorded[name]
    return kept


def _epoch(timestamp: str) -> float:
    try:
        return datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0
