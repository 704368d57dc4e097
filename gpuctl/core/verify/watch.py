"""`gpuctl verify --watch`: what changed between two verify runs, node by node and check by check.

A node's state is its verdict and the check a person should read first; a change in either is
one change. Nodes that appear or disappear are changes too, as are cluster checks changing status.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuctl.core.verify.model import Check, NodeResult, VerifyResult


@dataclass(frozen=True)
class Change:
    """One thing that is different from the previous run."""

    subject: str  # a node name, or `cluster` for a cluster check
    before: str  # "" when the subject is new
    after: str  # "" when the subject is gone
    ok: bool  # the subject's verdict now (True when gone)


def _node_state(node: NodeResult) -> str:
    problem = node.first_problem
    verdict = "ok" if node.ok else "FAILED"
    return f"{verdict} ({problem.id}: {problem.message})" if problem is not None else verdict


def _check_state(check: Check) -> str:
    return f"{check.status.value}: {check.message}"


def changes(previous: VerifyResult, current: VerifyResult) -> list[Change]:
    """The changes from `previous` to `current`, nodes first (by name), then cluster checks."""
    found = []
    before = {node.name: _node_state(node) for node in previous.nodes}
    after = {node.name: (_node_state(node), node.ok) for node in current.nodes}
    for name in sorted(before.keys() | after.keys()):
        now, ok = after.get(name, ("", True))
        if before.get(name, "") != now:
            found.append(Change(name, before.get(name, ""), now, ok))
    old_checks = {check.id: check for check in previous.cluster_checks}
    for check in current.cluster_checks:
        old = old_checks.get(check.id)
        if old is None or old.status is not check.status:
            state = _check_state(check)
            found.append(
                Change(f"cluster {check.id}", _check_state(old) if old else "", state, not check.failed)
            )
    return found
