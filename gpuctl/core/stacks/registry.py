"""Every stack gpuctl knows, by `Stack`: adding one is a folder whose stack module implements
base.ClusterStack (and base.GpuAllocation where it hands GPUs out its own way) and an entry here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import ClusterStack, GpuAllocation
from gpuctl.core.stacks.device_plugin.stack import DEVICE_PLUGIN
from gpuctl.core.stacks.dra.stack import DRA
from gpuctl.core.stacks.operator.stack import OPERATOR

if TYPE_CHECKING:
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.kube.nodes import NodeInfo

STACKS: dict[Stack, ClusterStack] = {stack.stack: stack for stack in (DEVICE_PLUGIN, OPERATOR, DRA)}
# The ways a node hands its GPUs to pods; the device plugin's is the default (see allocation_of).
ALLOCATIONS: dict[Stack, GpuAllocation] = {
    allocation.stack: allocation for allocation in (DEVICE_PLUGIN, DRA)
}

# The stacks `--migrate` moves the GPU nodes from, for each stack it moves them to: the first that
# serves the nodes (ClusterStack.serves_nodes), else the last.
MIGRATIONS: dict[Stack, tuple[Stack, ...]] = {
    Stack.DRA: (Stack.OPERATOR, Stack.DEVICE_PLUGIN),
    Stack.DEVICE_PLUGIN: (Stack.DRA,),
    Stack.OPERATOR: (Stack.DRA,),
}

# The stack a refused flag's example names, of those the flag has an effect on: the first here.
FLAG_EXAMPLES: tuple[Stack, ...] = (Stack.OPERATOR, Stack.DRA, Stack.DEVICE_PLUGIN)


def stack_for(stack: Stack) -> ClusterStack:
    return STACKS[stack]


def allocation_of(node: NodeInfo, snapshot: ClusterSnapshot) -> GpuAllocation:
    """How `node` hands out its GPUs: the allocation that claims it, else the device plugin's."""
    claiming = (allocation for allocation in ALLOCATIONS.values() if allocation.claims(node, snapshot))
    return next(claiming, ALLOCATIONS[Stack.DEVICE_PLUGIN])
