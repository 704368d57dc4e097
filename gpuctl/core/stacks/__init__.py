"""The cluster stacks gpuctl installs and proves: NVIDIA's device plugin (gpuctl's manifests), the
GPU Operator (Helm) and the DRA driver (Helm).

base.py is the interface every stack implements (render, install, readiness, diagnosis, node
checks, the verification pod's GPUs and its judgement, the flags it takes, the facts verify reads
for it, its per-GPU gate, and what a migration onto it or off it does), one folder per stack
implements it (its stack.py, beside the modules only that stack uses), and registry.py names them;
core/bootstrap/cluster.py runs any stack through one sequence, core/verify/run.py asks a node's
stack instead of branching on it, core/migrate moves nodes between any two stacks and the CLI's
flag rules derive from the stacks' declarations. A new stack is one folder, one entry in
registry.py and its member below.

This file holds only the `Stack` enum and the default, so the CLI and the result objects can name
a stack without importing any stack.
"""

from enum import Enum


class Stack(str, Enum):
    """A cluster stack; the values are `--stack`'s and the JSON output's."""

    DEVICE_PLUGIN = "device-plugin"
    OPERATOR = "operator"
    DRA = "dra"


# `--stack`'s default, and how a node hands its GPUs to pods unless another stack claims it.
DEFAULT_STACK = Stack.DEVICE_PLUGIN
