"""The Eviction API: `POST .../pods/NAME/eviction` with a policy/v1 Eviction deletes the pod
gracefully unless the PodDisruptionBudget selecting it allows no disruption now. The checks, their
order and their words are the API server's (pkg/registry/core/pod/storage/eviction.go): a pod
that is finished, Pending or already deleting goes without a budget check; a budget the
disruption controller has not seen yet, or one with no disruption left, answers 429."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from gpuctl.sim.api.api_errors import ApiError, bad_request, not_found
from gpuctl.sim.api.messages import Response, encode
from gpuctl.sim.runtime.disruption import PDBS, allowed_condition, is_ready
from gpuctl.sim.runtime.predicates import matches_label_selector
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.cluster import Cluster

Obj = dict[str, Any]
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
SUCCESS = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def evict(cluster: Cluster, namespace: str, name: str, body: Obj, dry_run: bool) -> Response:
    """The answer to one eviction (caller holds the store lock)."""
    if (body.get("metadata") or {}).get("name") != name:
        raise bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions") or {}
    dry_run = dry_run or "All" in (options.get("dryRun") or [])
    pod = cluster.store.get("pods", namespace, name)
    if pod is None:
        raise not_found("pods", name)
    if not _can_ignore_budget(pod):
        budgets = _budgets_of(cluster, pod)
        if len(budgets) > 1:
            failure = {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction "
                "subresource does not support.",
                "code": 500,
            }
            return Response(500, encode(failure))
        if budgets and not _unready_within_budget(pod, budgets[0]):
            _take_disruption(cluster, budgets[0], name, dry_run)
    if not dry_run:
        cluster.delete_pod(pod, _grace(options))
    return Response(201, encode(SUCCESS))


def _can_ignore_budget(pod: Obj) -> bool:
    """canIgnorePDB: a finished or Pending pod, or one already deleting, disrupts nothing more."""
    phase = pod.get("status", {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _budgets_of(cluster: Cluster, pod: Obj) -> list[Obj]:
    """The budgets of the pod's namespace whose selector matches it; an empty selector matches
    nothing here (unlike in the controller), as in the API server."""
    labels = pod["metadata"].get("labels") or {}
    return [
        budget
        for budget in cluster.store.items(PDBS, pod["metadata"]["namespace"])
        if (selector := budget.get("spec", {}).get("selector"))
        and (selector.get("matchLabels") or selector.get("matchExpressions"))
        and matches_label_selector(selector, labels)
    ]


def _unready_within_budget(pod: Obj, budget: Obj) -> bool:
    """An unready pod is not counted healthy: evicting it takes nothing from a satisfied budget."""
    status = budget.get("status") or {}
    desired = int(status.get("desiredHealthy", 0))
    return not is_ready(pod) and int(status.get("currentHealthy", 0)) >= desired > 0


def _take_disruption(cluster: Cluster, budget: Obj, pod_name: str, dry_run: bool) -> None:
    """checkAndDecrement: 429 unless the budget is current and allows a disruption; else record
    the pod as disrupted so the controller stops counting it healthy."""
    name = budget["metadata"]["name"]
    status = dict(budget.get("status") or {})
    if int(status.get("observedGeneration", 0)) < int(budget["metadata"].get("generation", 1)):
        raise _too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise ApiError(
            403,
            "Forbidden",
            f'poddisruptionbudgets.policy "{name}" is forbidden: pdb disruptions allowed is negative',
            {"name": name, "group": "policy", "kind": "poddisruptionbudgets"},
        )
    if allowed == 0:
        raise _too_many_requests(
            f"The disruption budget {name} needs {status.get('desiredHealthy', 0)} healthy pods "
            f"and has {status.get('currentHealthy', 0)} currently"
        )
    status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        status["conditions"] = [allowed_condition(status, 0, status.get("observedGeneration"))]
    if dry_run:
        return
    status["disruptedPods"] = dict(status.get("disruptedPods") or {}, **{pod_name: rfc3339(time.time())})
    cluster.store.put(PDBS, dict(budget, status=status))


def _too_many_requests(cause: str, retry_after_s: int = 0) -> ApiError:
    details: Obj = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    if retry_after_s:
        details["retryAfterSeconds"] = retry_after_s
    return ApiError(429, "TooManyRequests", VIOLATION, details)


def _grace(options: Obj) -> int | None:
    value = options.get("gracePeriodSeconds")
    return int(value) if isinstance(value, int) else None
