"""Which nodes a host-phase run must take out of service, in which batches, and what their drains do.

A host goes node by node when it is a node of the cluster that serves GPUs now (its stack says it
is ready, or it advertises GPUs): a node that serves nothing yet is bootstrapped as before, and the
cluster and verify phases prove it. Of those, a host is upgraded when the host phase in check mode
would change it (or could not tell: its check failed), or when an earlier run left its upgrade
unfinished (gpuctl.kube.upgrade_marks); the others are not touched. The first node is the canary,
a batch of its own; then `max_unavailable` nodes at a time, in inventory order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.registry import stack_for
from gpuctl.core.upgrade.model import NodePlan, UpgradeOptions, UpgradePlan
from gpuctl.errors import UnreachableError
from gpuctl.kube.drain import plan_drain
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.kube.upgrade_marks import CORDONED_BEFORE, UPGRADE_ANNOTATION, core_api
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.bootstrap.host import BootstrapResult, HostOutcome
    from gpuctl.kube.client import ApiClient


def serving_nodes(
    api_client: ApiClient, pairs: Iterable[tuple[str, str]], stack: Stack
) -> dict[str, tuple[str, int | None]]:
    """host → (node, GPUs it advertises now) for the hosts whose nodes serve GPUs now, or carry an
    unfinished upgrade."""
    pairs = tuple(pairs)
    nodes = {node.name: node for node in list_nodes(api_client)}
    states = {s.node: s for s in stack_for(stack).readiness(api_client, {node: None for _, node in pairs})}
    serving: dict[str, tuple[str, int | None]] = {}
    for host, name in pairs:
        info, state = nodes.get(name), states.get(name)
        if info is None:
            continue
        advertised = max(state.allocatable if state else 0, info.gpu_allocatable)
        if (state is not None and state.ready) or advertised > 0 or UPGRADE_ANNOTATION in info.annotations:
            serving[host] = (name, advertised or None)
    return serving


def _change_of(outcome: HostOutcome | None, check_run: BootstrapResult) -> tuple[tuple[str, ...], str]:
    """(tasks that would change the host, why the check could not tell); both empty: unchanged."""
    inventory = check_run.inventory
    if outcome is None:
        return (), "the check run did not reach this host"
    if outcome.unreachable:
        probe = command_line("gpuctl", "preflight", "-i", inventory, "--limit", outcome.name)
        raise UnreachableError(
            f"host {outcome.name} unreachable in the check run: no node was touched",
            hint=f"check SSH to the host: `{probe}`",
        )
    if outcome.failed:
        failed = next((task for task in check_run.failed_tasks if task.host == outcome.name), None)
        task = f"{failed.task!r} ({failed.message})" if failed else "a task"
        return outcome.changed_tasks, f"check mode failed at {task}: the real run decides"
    if not outcome.completed:
        return outcome.changed_tasks, "the check run stopped before its recap"
    return outcome.changed_tasks, ""


def plan_upgrade(
    api_client: ApiClient,
    check_run: BootstrapResult,
    serving: dict[str, tuple[str, int | None]],
    options: UpgradeOptions,
) -> UpgradePlan:
    """The plan for the serving hosts (serving_nodes), in inventory order, from the check run."""
    outcomes = {host.name: host for host in check_run.hosts}
    nodes = {node.name: node for node in list_nodes(api_client)}
    core = core_api(api_client)
    planned: list[NodePlan] = []
    unchanged: list[tuple[str, str]] = []
    for host, (node, gpus) in serving.items():
        changes, note = _change_of(outcomes.get(host), check_run)
        mark = nodes[node].annotations.get(UPGRADE_ANNOTATION, "") if node in nodes else ""
        if not changes and not note and not mark:
            unchanged.append((host, node))
            continue
        drain = plan_drain(core, node, force=options.force_drain)
        planned.append(
            NodePlan(
                host=host,
                node=node,
                batch=batch_number(len(planned), options.max_unavailable),
                changes=changes,
                evict=tuple(str(pod) for pod in drain.evict),
                refused=tuple((str(pod), why) for pod, why in drain.refused),
                cordoned_before=_cordoned_before(nodes.get(node), mark),
                expected_gpus=gpus,
                check_note=note or ("unfinished by an earlier run" if mark and not changes else ""),
                resuming=bool(mark),
            )
        )
    return UpgradePlan(tuple(planned), tuple(unchanged), options.max_unavailable, check_run)


def batch_number(index: int, max_unavailable: int) -> int:
    """The 1-based batch of the index-th node: the canary alone, then max_unavailable at a time."""
    return 1 if index == 0 else 2 + (index - 1) // max(1, max_unavailable)


def _cordoned_before(node: NodeInfo | None, mark: str) -> bool:
    if mark:
        return mark == CORDONED_BEFORE
    return node is not None and node.unschedulable
