"""Which GPU nodes a migration moves, in which batches, and whether the cluster can move at all.

A node has moved when it carries the stack label (model.STACK_LABEL) of the new stack and no
unfinished mark of an earlier run (gpuctl.kube.upgrade_marks); every other GPU node moves, in name
order, the first a batch of its own (the canary), then `max_unavailable` at a time, as the
upgrade's batches. The GPU Operator's device plugin (ClusterPolicy mode) is an old stack too
(operator.py). Refused before anything is written (exit 2): the Operator's GPUCluster mode, a
move to gpuctl's device plugin beside the Operator, a cluster where no stack serves the nodes
yet, and a move to DRA on a cluster older than 1.37, whose scheduler cannot serve a pod's
`nvidia.com/gpu` from DRA devices.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gpuctl.core.migrate.model import STACK_LABEL, MigrationPlan
from gpuctl.core.migrate.operator import operator_driver_root, refuse_operator
from gpuctl.core.migrate.sharing import carried_sharing
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.dra.checks import kubelet_minor
from gpuctl.core.upgrade.model import NodePlan, UpgradeOptions
from gpuctl.core.upgrade.plan import batch_number
from gpuctl.defaults import DRA_DEVICE_CLASS, GPU_RESOURCE
from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.dra import served_version
from gpuctl.kube.drain import plan_drain
from gpuctl.kube.gpu_operator import operator_mode
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.kube.rest_requests import get_json
from gpuctl.kube.upgrade_marks import CORDONED_BEFORE, UPGRADE_ANNOTATION, core_api
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.daemonsets import DaemonSetInfo

# DRAExtendedResource is GA in 1.37: kube-scheduler serves an extended resource request from a
# DeviceClass's extendedResourceName, and the kubelet reads the claim it made for the pod.
EXTENDED_RESOURCE_MINOR = (1, 37)
WORKLOAD_CHANGE = (
    f"or change the workloads first: replace `resources.limits: {{{GPU_RESOURCE}: N}}` with a "
    f"ResourceClaim (spec.resourceClaims naming a ResourceClaimTemplate whose request has "
    f"deviceClassName {DRA_DEVICE_CLASS} and count N), then run "
    f"`gpuctl bootstrap --phase cluster --stack dra`"
)


def source_of(target: Stack, operator: str = "") -> Stack:
    """The stack the nodes move from; `operator`: the GPU Operator's mode ("" when absent)."""
    if target is Stack.DRA and operator == "ClusterPolicy":
        return Stack.OPERATOR
    return Stack.DEVICE_PLUGIN if target is Stack.DRA else Stack.DRA


def stack_daemonsets(daemonsets: list[DaemonSetInfo], stack: Stack) -> list[DaemonSetInfo]:
    """The DaemonSets that serve a node's GPUs the `stack` way (the device plugin's or DRA's plugin)."""
    if stack is Stack.DRA:
        return [ds for ds in daemonsets if ds.is_dra_plugin]
    return [ds for ds in daemonsets if ds.is_device_plugin]


def _minor(version: str) -> tuple[int, int]:
    found = re.match(r"^v?(\d+)\.(\d+)", version)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def refuse_unsupported(api_client: ApiClient, target: Stack, to_move: list[NodeInfo], mode: str = "") -> None:
    """Exit 2 before any write where the workloads could not keep running as they are;
    `mode`: the GPU Operator's (gpuctl.kube.gpu_operator.operator_mode)."""
    refuse_operator(mode, target)
    if target is not Stack.DRA or not to_move:
        return
    if not served_version(api_client):
        raise ConfigError(
            "--stack dra --migrate: the API server does not serve resource.k8s.io (DRA)",
            hint="upgrade the cluster to Kubernetes 1.37 or later, then rerun",
        )
    with api_call("get", "the server's version"):
        server = str(get_json(api_client, "/version").get("gitVersion", ""))
    old = [f"kubelet of {node.name} is {node.system.get('kubeletVersion', '?')}"
           for node in to_move if kubelet_minor(node) < EXTENDED_RESOURCE_MINOR]  # fmt: skip
    if _minor(server) < EXTENDED_RESOURCE_MINOR:
        old.insert(0, f"the API server is {server or 'of unknown version'}")
    if old:
        raise ConfigError(
            f"--stack dra --migrate needs Kubernetes 1.37 or later, where a DeviceClass's "
            f"extendedResourceName serves pods that request {GPU_RESOURCE} from DRA devices "
            f"(DRA extended resources), so running workloads keep their requests: {'; '.join(old)}",
            hint=f"upgrade the control plane and the GPU nodes' kubelets to 1.37, {WORKLOAD_CHANGE}",
        )


def refuse_nothing_serving(source: Stack, target: Stack, present: bool, unlabelled: list[str]) -> None:
    if present or not unlabelled:
        return
    names = ", ".join(unlabelled[:5])
    raise ConfigError(
        f"--migrate: no {source.value} serves the GPU nodes ({names}) to move them from",
        hint="install the stack without --migrate: "
        f"`gpuctl bootstrap --phase cluster --stack {target.value}`",
    )


def plan_migration(
    api_client: ApiClient,
    target: Stack,
    expected: dict[str, int | None],
    options: UpgradeOptions,
) -> MigrationPlan:
    """The plan for moving every expected GPU node to `target`; ConfigError (exit 2) where it cannot."""
    mode = operator_mode(api_client)
    source = source_of(target, mode)
    nodes = {node.name: node for node in list_nodes(api_client) if node.name in expected}
    to_move = [
        node
        for name, node in sorted(nodes.items())
        if node.labels.get(STACK_LABEL) != target.value or UPGRADE_ANNOTATION in node.annotations
    ]
    present = bool(stack_daemonsets(list_gpu_daemonsets(api_client), source))
    refuse_unsupported(api_client, target, to_move, mode)
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
    sharing = carried_sharing(to_move, source, physical)
    return MigrationPlan(
        source, target, tuple(planned), moved, options.max_unavailable, sharing.carried,
        sharing.not_carried, present, dra_feature_gates=sharing.feature_gates,
        dra_driver_root=operator_driver_root(api_client) if source is Stack.OPERATOR and to_move else "",
    )  # fmt: skip


def _advertised(node: NodeInfo) -> int | None:
    return node.gpu_allocatable or None


def resume_command(target: Stack, flags: tuple[str, ...]) -> str:
    stack = ("--stack", target.value)
    return command_line("gpuctl", "bootstrap", "--phase", "cluster", *stack, "--migrate", *flags)
