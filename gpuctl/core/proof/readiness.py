"""The one wait for a stack to serve its GPU nodes: the stack's readiness polled until every node
is ready or stuck for good, the nodes still waiting diagnosed by verify's read-only checks
(bootstrap's cluster phase, the upgrade's ready step)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.proof.options import node_options
from gpuctl.core.verify.run import verify

if TYPE_CHECKING:
    from gpuctl.core.stacks.base import NodeReadiness
    from gpuctl.core.verify.model import Check
    from gpuctl.kube.client import ApiClient

POLL_S = 1.0
# A diagnosis reads plugin pods and their logs: the nodes still waiting are diagnosed first once
# their plugin pods have had a moment to start, then at intervals doubling from 5 s to 30 s (a
# large cluster rolling its plugin pods out is not read through every 5 s for minutes).
FIRST_DIAGNOSIS_S = 2.0
DIAGNOSIS_EVERY_S = 5.0
DIAGNOSIS_EVERY_MAX_S = 30.0


def diagnose_with_verify(api_client: ApiClient, stuck: list[NodeReadiness]) -> dict[str, Check | None]:
    """Why each stuck node is stuck: verify's read-only checks (plugin pod, its log, capacity)."""
    result = verify(api_client, node_options({node.node: node.expected for node in stuck}, run_pods=False))
    return {node.name: node.first_problem for node in result.nodes}


def poll_until_ready(
    read: Callable[[], list[NodeReadiness]],
    diagnose: Callable[[list[NodeReadiness]], dict[str, Check | None]],
    timeout_s: float,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
    *,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[list[NodeReadiness], bool]:
    """Poll `read` until every node is ready or terminal (diagnosed beyond the cluster layer:
    waiting cannot help it), or `timeout_s` passes, or `should_stop` says so (the upgrade's
    Ctrl-C); (states, timed out or stopped). The nodes still waiting are diagnosed every few
    seconds, and those not ready at the end carry `diagnose`'s reason."""
    started = time.monotonic()
    deadline = started + timeout_s
    next_diagnosis, interval = started + FIRST_DIAGNOSIS_S, DIAGNOSIS_EVERY_S
    problems: dict[str, Check | None] = {}
    while True:
        states = _with_problems(read(), problems)
        if _waiting(states) and time.monotonic() >= next_diagnosis:
            problems.update(diagnose(_waiting(states)))
            states = _with_problems(states, problems)
            next_diagnosis = time.monotonic() + interval
            interval = min(2 * interval, DIAGNOSIS_EVERY_MAX_S)
        if on_progress is not None:
            on_progress(states)
        if not _waiting(states):
            return states, False
        if time.monotonic() >= deadline or (should_stop is not None and should_stop()):
            break
        time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
    problems.update(diagnose(_waiting(states)))
    return _with_problems(states, problems), True


def _waiting(states: list[NodeReadiness]) -> list[NodeReadiness]:
    """The nodes the wait is for: neither ready nor known to be stuck for good."""
    return [state for state in states if not state.ready and not state.terminal]


def _with_problems(states: list[NodeReadiness], problems: dict[str, Check | None]) -> list[NodeReadiness]:
    """Each node with its latest diagnosis; a node that became ready has none."""
    return [replace(state, problem=None if state.ready else problems.get(state.node)) for state in states]
