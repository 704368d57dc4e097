"""Which GPU nodes a migration moves, in which batches, and whether the cluster can move at all.

A node has moved when it carries the stack label (model.STACK_LABEL) of the new stack and no
unfinished mark of an earlier run (gpuctl.kube.upgrade_marks); every other GPU node moves, in name
order, the first a batch of its own (the canary), then `max_unavailable` at a time, as the
upgrade's batches. The old stack is the first of those the new one takes nodes from
(registry.MIGRATIONS) that serves them. Refused before anything is written (exit 2): what a stack
refuses as it runs (ClusterStack.refuse_migration), what the new stack cannot serve of the running
workloads (ClusterStack.refuse_moving_onto), and a cluster where no stack serves the nodes yet.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.migrate.model import STACK_LABEL, MigrationPlan
from gpuctl.core.stacks.base import CarriedSharing
from gpuctl.core.stacks.registry import MIGRATIONS, STACKS, stack_for
from gpuctl.core.upgrade.model import NodePlan, UpgradeOptions
from gpuctl.core.upgrade.plan import batch_number
from gpuctl.errors import ConfigError
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.drain import plan_drain
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.kube.upgrade_marks import CORDONED_BEFORE, UPGRADE_ANNOTATION, core_api
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gpuctl.core.stacks import Stack
    from gpuctl.kube.client import ApiClient


def installed_modes(api_client: ApiClient) -> dict[Stack, str]:
    """How each stack runs in the cluster, as a migration must know (ClusterStack.installed_mode)."""
    return {stack: cluster_stack.installed_mode(api_client) for stack, cluster_stack in STACKS.items()}


def source_of(target: Stack, modes: Mapping[Stack, str] | None = None) -> Stack:
    """The stack the nodes move from: of those `target` takes nodes from (registry.MIGRATIONS), the
    first that serves them as it runs (`modes`, installed_modes), else the last."""
    candidates = MIGRATIONS.get(target, ())
    if not candidates:
        raise ConfigError(
            f"--migrate: gpuctl does not move GPU nodes onto {target.value}",
            hint="remove the stack serving the nodes, then install this one without --migrate: "
            f"`gpuctl bootstrap --phase cluster --stack {target.value}`",
        )
    serving = (
        stack for stack in candidates[:-1] if stack_for(stack).serves_nodes((modes or {}).get(stack, ""))
    )
    return next(serving, candidates[-1])


def refuse_unsupported(
    api_client: ApiClient, source: Stack, target: Stack, to_move: list[NodeInfo], modes: Mapping[Stack, str]
) -> None:
    """Exit 2 before any write where a stack, as it runs, stands in the way (`modes`), or the
    workloads could not keep running as they are on the target."""
    for stack, mode in modes.items():
        stack_for(stack).refuse_migration(mode, source, target)
    stack_for(target).refuse_moving_onto(api_client, to_move)


def refuse_nothing_serving(source: Stack, target: Stack, present: bool, unlabelled: list[str]) -> None:
    if present or not unlabelled:
        return
    names = ", ".join(unlabelled[:5])
    raise ConfigError(
        f"--migrate: no {source.value} serves the GPU nodes ({names}) to move them from",
        hint="install the stack without --migrate: "
        f"`gpuctl bootstrap --phase cluster --stack {target.value}`",
    )


def carried_sharing(
    nodes: list[NodeInfo], source: Stack, target: Stack, physical: dict[str, int | None]
) -> CarriedSharing:
    """What the move from `source` to `target` keeps of the sharing on `nodes` (the nodes it moves)."""
    if not nodes:
        return CarriedSharing()
    carried = stack_for(target).carry_over(nodes, physical)
    return replace(carried, carried=(*carried.carried, *stack_for(source).kept_on_leaving()))


def plan_migration(
    api_client: ApiClient,
    target: Stack,
    expected: dict[str, int | None],
    options: UpgradeOptions,
) -> MigrationPlan:
    """The plan for moving every expected GPU node to `target`; ConfigError (exit 2) where it cannot."""
    modes = installed_modes(api_client)
    source = source_of(target, modes)
    nodes = {node.name: node for node in list_nodes(api_client) if node.name in expected}
    to_move = [
        node
        for name, node in sorted(nodes.items())
        if node.labels.get(STACK_LABEL) != target.value or UPGRADE_ANNOTATION in node.annotations
    ]
    present = bool(stack_for(source).plugin_daemonsets(list_gpu_daemonsets(api_client)))
    refuse_unsupported(api_client, source, target, to_move, modes)
    refuse_nothing_serving(
        source, target, present, [node.name for node in to_move if STACK_LABEL not in node.labels]
    )
    core = core_api(api_client)
    planned: list[NodePlan] = []
    for node in to_move:
        drain = plan_drain(core, node.name, force=options.force_drain)
        mark = node.annotations.get(UPGRADE_ANNOTATION, "")
        planned.append(
            NodePlan(
                host=node.name,
                node=node.name,
                batch=batch_number(len(planned), options.max_unavailable),
                changes=(f"{source.value} -> {target.value}",),
                evict=tuple(str(pod) for pod in drain.evict),
                refused=tuple((str(pod), why) for pod, why in drain.refused),
                cordoned_before=mark == CORDONED_BEFORE if mark else node.unschedulable,
                expected_gpus=expected.get(node.name) or _advertised(node),
                check_note="unfinished by an earlier run" if mark else "",
                resuming=bool(mark),
            )
        )
    moved = tuple(name for name in sorted(nodes) if name not in {node.name for node in to_move})
    physical = {node.node: node.expected_gpus for node in planned}
    sharing = carried_sharing(to_move, source, target, physical)
    return MigrationPlan(
        source, target, tuple(planned), moved, options.max_unavailable, sharing.carried,
        sharing.not_carried, present, feature_gates=sharing.feature_gates,
        driver_root=stack_for(source).driver_root_for_move(api_client) if to_move else "",
    )  # fmt: skip


def _advertised(node: NodeInfo) -> int | None:
    return node.gpu_allocatable or None


def resume_command(target: Stack, flags: tuple[str, ...]) -> str:
    stack = ("--stack", target.value)
    return command_line("gpuctl", "bootstrap", "--phase", "cluster", *stack, "--migrate", *flags)
