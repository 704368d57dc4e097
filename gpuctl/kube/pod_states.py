"""How a verification pod stands: the outcome of following it, read from its status and events."""

from __future__ import annotations

from dataclasses import dataclass

from gpuctl.kube.raw import JsonDict, dig, name_of

IMAGE_PULL_REASONS = frozenset(
    {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"}
)
START_ERROR_REASONS = frozenset({"CreateContainerError", "CreateContainerConfigError", "RunContainerError"})


@dataclass(frozen=True)
class PodOutcome:
    """How one pod ended. `state`: succeeded | failed | unschedulable | image-pull | start-error |
    stuck | timeout | create-failed. `node_name`: where it was bound ("" while unscheduled).

    `stuck`: still Pending, but its events show a failure that waiting will not clear. `events`:
    the (reason, message) of the Warning events about the pod itself (not one of its
    containers), oldest first, as seen while following it.
    """

    name: str
    state: str
    phase: str = ""
    exit_code: int | None = None
    reason: str = ""
    message: str = ""
    log: str = ""
    node_name: str = ""
    events: tuple[tuple[str, str], ...] = ()


def _terminated(pod: JsonDict) -> JsonDict:
    for status in dig(pod, "status", "containerStatuses", default=[]):
        terminated = dig(status, "state", "terminated")
        if terminated:
            return dict(terminated)
    return {}


def _waiting(pod: JsonDict) -> JsonDict:
    for status in dig(pod, "status", "containerStatuses", default=[]):
        waiting = dig(status, "state", "waiting")
        if waiting:
            return dict(waiting)
    return {}


def _unschedulable(pod: JsonDict) -> JsonDict | None:
    for condition in dig(pod, "status", "conditions", default=[]):
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return dict(condition) if condition.get("reason") == "Unschedulable" else None
    return None


def classify(pod: JsonDict) -> PodOutcome | None:
    """The final outcome of `pod` if it reached one we need not wait past, else None."""
    name, phase = name_of(pod), str(dig(pod, "status", "phase", default="Pending"))
    if phase in ("Succeeded", "Failed"):
        term = _terminated(pod)
        state = "succeeded" if phase == "Succeeded" else "failed"
        reason = str(term.get("reason") or dig(pod, "status", "reason", default="") or "")
        if reason == "DeadlineExceeded":
            state = "timeout"
        message = str(term.get("message") or dig(pod, "status", "message", default="") or "")
        exit_code = term.get("exitCode")
        return PodOutcome(name, state, phase, exit_code, reason, message)
    waiting = _waiting(pod)
    waiting_reason = str(waiting.get("reason") or "")
    if waiting_reason in IMAGE_PULL_REASONS:
        return PodOutcome(name, "image-pull", phase, None, waiting_reason, str(waiting.get("message") or ""))
    if waiting_reason in START_ERROR_REASONS:
        return PodOutcome(name, "start-error", phase, None, waiting_reason, str(waiting.get("message") or ""))
    condition = _unschedulable(pod)
    if condition is not None:
        return PodOutcome(
            name, "unschedulable", phase, None, "Unschedulable", str(condition.get("message") or "")
        )
    return None
