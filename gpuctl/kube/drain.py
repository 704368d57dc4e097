"""Cordon and drain one node the way `kubectl drain` does: through the Eviction API, so every
PodDisruptionBudget is honoured (a 429 is retried with backoff until the drain's own deadline).

What a drain leaves: DaemonSet pods (their controller would put them back at once), mirror pods
(the kubelet's static pods, not the API's to move), gpuctl's own pods (the verification pods that
prove the node next, known by where and how gpuctl creates them, not by a label any workload can
copy) and finished pods. What it refuses unless forced: pods no controller would
recreate, and pods whose emptyDir data would be lost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.defaults import GPUCTL_NAMESPACE, VERIFICATION_PODS_SELECTOR
from gpuctl.errors import UnreachableError
from gpuctl.kube import objects
from gpuctl.kube.api_errors import RBAC_HINT, server_message
from gpuctl.kube.client import api_call
from gpuctl.kube.deadlines import bounded, request_timeout_s
from gpuctl.kube.raw import JsonDict, dig, labels_of, name_of
from gpuctl.kube.taints import NodeTaintWriter, TaintWrite

if TYPE_CHECKING:
    from kubernetes.client import CoreV1Api

MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
# What every verification pod carries and how it is named (gpuctl.core.verify.pod_manifest).
VERIFICATION_LABELS = dict(pair.split("=", 1) for pair in VERIFICATION_PODS_SELECTOR.split(","))
VERIFICATION_POD_PREFIX = "gpuctl-verify-"
FORCE_FLAG = "--force-drain"
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 5.0  # kubectl drain waits 5 s between evictions a budget refused
POLL_S = 0.25  # between two looks at the node while the evicted pods terminate
TOO_MANY_REQUESTS, NOT_FOUND = 429, 404


@dataclass(frozen=True)
class PodRef:
    namespace: str
    name: str
    owner: str  # the controller as kind/name, "" when none

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class DrainPlan:
    node: str
    evict: tuple[PodRef, ...]  # pods the drain will evict
    refused: tuple[tuple[PodRef, str], ...]  # pods it refuses without force, with the reason
    left: tuple[tuple[PodRef, str], ...]  # pods it leaves where they are, with the reason


@dataclass(frozen=True)
class DrainResult:
    node: str
    evicted: tuple[PodRef, ...]
    seconds: float
    error: str  # "" when drained


def _pod_ref(pod: JsonDict) -> PodRef:
    owner = next(
        (ref for ref in dig(pod, "metadata", "ownerReferences", default=[]) if ref.get("controller")), None
    )
    named = f"{owner.get('kind', '')}/{owner.get('name', '')}" if owner else ""
    return PodRef(dig(pod, "metadata", "namespace", default=""), name_of(pod), named)


def _left_because(pod: JsonDict, ref: PodRef) -> str:
    """Why a drain leaves `pod` where it is ("" when it does not)."""
    if dig(pod, "status", "phase") in ("Succeeded", "Failed"):
        return "finished"
    if MIRROR_ANNOTATION in (dig(pod, "metadata", "annotations", default={}) or {}):
        return "mirror pod"
    if _verification_pod(pod, ref):
        return "gpuctl's own pod"
    if ref.owner.startswith("DaemonSet/"):
        return "DaemonSet pod"
    return ""


def _verification_pod(pod: JsonDict, ref: PodRef) -> bool:
    """One of gpuctl's verification pods: in its namespace, with its name and labels, and no
    controller. A workload may copy the labels and the name, but not into gpuctl's namespace
    without the rights there; a copy elsewhere is drained like any other pod, as it must be."""
    labels = labels_of(pod)
    return (
        ref.namespace == GPUCTL_NAMESPACE
        and not ref.owner
        and ref.name.startswith(VERIFICATION_POD_PREFIX)
        and all(labels.get(key) == value for key, value in VERIFICATION_LABELS.items())
    )


def _refused_because(pod: JsonDict, ref: PodRef) -> str:
    """Why a drain refuses `pod` without force ("" when it does not)."""
    if not ref.owner:
        return "no controller"
    if any("emptyDir" in volume for volume in dig(pod, "spec", "volumes", default=[]) or []):
        return "uses emptyDir"
    return ""


def plan_drain(core: CoreV1Api, node: str, *, force: bool) -> DrainPlan:
    """Which pods on `node` a drain evicts, refuses (evicted with `force`) and leaves."""
    evict: list[PodRef] = []
    refused: list[tuple[PodRef, str]] = []
    left: list[tuple[PodRef, str]] = []
    for pod in sorted(objects.pods_on_node(core.api_client, node), key=lambda p: str(_pod_ref(p))):
        ref = _pod_ref(pod)
        if why := _left_because(pod, ref):
            left.append((ref, why))
        elif (why := _refused_because(pod, ref)) and not force:
            refused.append((ref, why))
        else:
            evict.append(ref)
    return DrainPlan(node, tuple(evict), tuple(refused), tuple(left))


# -- cordon ------------------------------------------------------------------------------------


def _write_unschedulable(core: CoreV1Api, node: str, cordoned: bool) -> TaintWrite:
    def plan(current: JsonDict) -> JsonDict | None:
        if bool(dig(current, "spec", "unschedulable")) == cordoned:
            return None
        return {"spec": {"unschedulable": True if cordoned else None}}

    writer = NodeTaintWriter(core.api_client, dry_run=False)
    current = objects.read_node(core.api_client, node)
    if current is None:
        raise UnreachableError(f"node {node} not found", hint="`kubectl get nodes` lists the cluster's nodes")
    write = writer.write_fields(current, plan)
    if write.error:
        verb = "cordon" if cordoned else "uncordon"
        raise UnreachableError(f"{verb} node {node}: {write.error}", hint=RBAC_HINT)
    return write


def cordon(core: CoreV1Api, node: str) -> bool:
    """Mark `node` unschedulable; True when this call cordoned it, False when it already was."""
    return _write_unschedulable(core, node, True).written


def uncordon(core: CoreV1Api, node: str) -> None:
    _write_unschedulable(core, node, False)


# -- evict -------------------------------------------------------------------------------------


class _Refusal(Exception):
    """The API server answered an eviction 429: a budget allows no disruption now."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


def _budget_cause(error: object) -> str:
    """The budget's own words from a 429 (its name, what it needs and has), else the message."""
    import json

    try:
        causes = json.loads(getattr(error, "body", "") or "{}").get("details", {}).get("causes") or []
    except ValueError:
        causes = []
    words = [str(cause.get("message", "")) for cause in causes if cause.get("message")]
    return "; ".join(words) or server_message(error) or "the API server refused the eviction (429)"


def _evict_once(core: CoreV1Api, pod: PodRef, seconds_left: float) -> None:
    """One eviction (a pod already gone is as good as evicted); _Refusal on a 429."""
    from kubernetes.client import V1Eviction, V1ObjectMeta
    from kubernetes.client.exceptions import ApiException

    body = V1Eviction(metadata=V1ObjectMeta(name=pod.name, namespace=pod.namespace))
    # The client's own retries of a 429 stop at the drain's deadline (the outer bound holds).
    with (
        api_call("create", f"pods/eviction {pod}"),
        bounded(min(request_timeout_s(), max(seconds_left, 1.0))),
    ):
        try:
            core.create_namespaced_pod_eviction(pod.name, pod.namespace, body)
        except ApiException as error:
            if error.status == TOO_MANY_REQUESTS:
                raise _Refusal(_budget_cause(error)) from None
            if error.status != NOT_FOUND:
                raise


def _sleep(seconds: float, should_stop: Callable[[], bool]) -> None:
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0 and not should_stop():
        time.sleep(min(left, 0.1))


def _evict(core: CoreV1Api, node: str, pod: PodRef, deadline: float, should_stop: Callable[[], bool]) -> str:
    """Evict `pod`, retrying while a budget refuses; the error ("" when evicted or gone)."""
    backoff = FIRST_BACKOFF_S
    while True:
        try:
            _evict_once(core, pod, deadline - time.monotonic())
            return ""
        except _Refusal as refusal:
            if should_stop():
                return f"drain {node}: stopped while pod {pod} waited for its budget ({refusal.cause})"
            if time.monotonic() >= deadline:
                return f"drain {node}: pod {pod} could not be evicted in time: {refusal.cause}"
            _sleep(min(backoff, deadline - time.monotonic()), should_stop)
            backoff = min(backoff * 2, MAX_BACKOFF_S)


def _wait_gone(core: CoreV1Api, node: str, evicted: list[PodRef], deadline: float) -> str:
    """Wait until none of `evicted` is on `node` any more; the error ("" when they are gone)."""
    wanted = {(pod.namespace, pod.name) for pod in evicted}
    while True:
        still = sorted(
            f"{dig(p, 'metadata', 'namespace')}/{name_of(p)}"
            for p in objects.pods_on_node(core.api_client, node)
            if (dig(p, "metadata", "namespace"), name_of(p)) in wanted
        )
        if not still:
            return ""
        if time.monotonic() >= deadline:
            return f"drain {node}: pod {', '.join(still)} still terminating when the drain timed out"
        time.sleep(POLL_S)


def _refusal_error(plan: DrainPlan) -> str:
    pods = ", ".join(f"{pod} ({why})" for pod, why in plan.refused)
    return f"drain {plan.node}: refusing to evict {pods}; pass {FORCE_FLAG} to evict them anyway"


def drain(
    core: CoreV1Api,
    node: str,
    *,
    force: bool,
    timeout_s: float,
    should_stop: Callable[[], bool] = lambda: False,
) -> DrainResult:
    """Cordon `node` (if it is not yet), evict what plan_drain says one pod at a time, each as
    soon as its budget allows, then wait until the evicted pods are gone, all within `timeout_s`.
    A refusal, a timeout or a stop is the result's `error`; API failures raise (exit 3)."""
    started = time.monotonic()
    deadline = started + timeout_s

    def result(evicted: list[PodRef], error: str) -> DrainResult:
        return DrainResult(node, tuple(evicted), round(time.monotonic() - started, 3), error)

    cordon(core, node)
    plan = plan_drain(core, node, force=force)
    if plan.refused:
        return result([], _refusal_error(plan))
    evicted: list[PodRef] = []
    for pod in plan.evict:
        if should_stop():
            return result(evicted, f"drain {node}: stopped before evicting pod {pod}")
        error = _evict(core, node, pod, deadline, should_stop)
        if error:
            return result(evicted, error)
        evicted.append(pod)
    return result(evicted, _wait_gone(core, node, evicted, deadline))
