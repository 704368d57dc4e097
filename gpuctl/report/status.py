"""Render a StatusResult: a rich table for people, a `gpuctl.status/v1` JSON envelope for tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuctl.core.stacks import DEFAULT_STACK
from gpuctl.core.stacks.registry import ALLOCATIONS, STACKS
from gpuctl.core.status import GpuNodeSummary, StatusResult
from gpuctl.report.safe_text import literal
from gpuctl.report.tables import emit_table, keep_words_whole, product_name

if TYPE_CHECKING:
    from rich.console import Console

    from gpuctl.core.stacks import Stack


SCHEMA = "gpuctl.status/v1"


def to_json(result: StatusResult) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them."""
    return {
        "schema": SCHEMA,
        "cluster_nodes": result.cluster_nodes,
        # `<stack>_mode`, only where the stack runs and says how (ClusterStack.installed_mode).
        **{f"{stack.value}_mode": mode for stack, mode in result.modes if mode},
        "totals": result.totals,
        "nodes": [
            {
                "name": node.name,
                "product": node.product,
                "gpus": {
                    "capacity": node.gpu_capacity,
                    "allocatable": node.gpu_allocatable,
                    "in_use": node.gpu_in_use,
                },
                "driver": node.driver,
                "sharing": _sharing_json(node),
                "taints": list(node.taints),
                "gate": node.gate,
                "ready": node.ready,
                "schedulable": node.schedulable,
                "gpu_memory_mib": node.gpu_memory_mib or None,
                "kubelet_version": node.kubelet_version or None,
                "container_runtime": node.container_runtime or None,
                "kernel_version": node.kernel_version or None,
                "os_image": node.os_image or None,
                "gpu_allocation": node.gpu_allocation,
                # the GPUs each publishing stack publishes, under its own key (null: none)
                **{
                    allocation.stack.value: _published_json(node, allocation.stack)
                    for allocation in ALLOCATIONS.values()
                    if allocation.publishes
                },
                "unhealthy_gpus": [
                    {"device": device, "reason": reason}
                    for device, reason in (node.published.unhealthy if node.published else ())
                ],
                # the GPUs `verify --gate` keeps out (a per-GPU rule) until they are proven again
                "gated_devices": [
                    {"device": device, "rule": rule, "taint_key": key}
                    for device, rule, key in (node.published.gated if node.published else ())
                ],
            }
            for node in result.nodes
        ],
    }


def _gate_text(node: GpuNodeSummary) -> str:
    """The node's gate level, then the GPUs gated alone (`gpu-2 gated`)."""
    devices = [f"{device} gated" for device, _, _ in (node.published.gated if node.published else ())]
    return ", ".join([*([node.gate] if node.gate else []), *devices]) or "-"


def _published_json(node: GpuNodeSummary, stack: Stack) -> dict[str, int] | None:
    published = node.published
    if published is None or published.stack is not stack:
        return None
    return {
        "published": published.published,
        "claimable": published.claimable,
        "allocated": published.allocated,
        "tainted": published.tainted,
    }


def _ready_text(ready: bool, schedulable: bool) -> str:
    text = "Ready" if ready else "NotReady"
    return text if schedulable else f"{text},SchedulingDisabled"


def _sharing_json(node: GpuNodeSummary) -> dict[str, Any] | None:
    plan = node.sharing
    if plan is None:
        return None
    return {
        "mode": plan.mode,
        "replicas": plan.replicas,
        "mig_strategy": plan.mig_strategy,
        "mig_devices": plan.mig_devices,
        "physical_gpus": plan.physical,
    }


def _sharing_text(node: GpuNodeSummary) -> str:
    if node.published is not None:
        tainted = f", {node.published.tainted} tainted" if node.published.tainted else ""
        also = f" + {ALLOCATIONS[DEFAULT_STACK].title}" if node.gpu_allocation == "both" else ""
        return f"{ALLOCATIONS[node.published.stack].title}{also}{tainted}"
    plan = node.sharing
    if plan is None or (plan.mode == "exclusive" and not plan.mig):
        return "-"
    if plan.mig:
        return f"MIG {plan.mig_strategy}: {plan.mig_devices} dev"
    return f"{plan.mode} x{plan.replicas}"


def print_wide(result: StatusResult, console: Console) -> None:
    """`-o wide`: also each node's GPU memory, kubelet, container runtime, kernel and OS image."""
    print_table(result, console, wide=True)


_COLUMNS = ("NODE", "PRODUCT", "GPUS CAP/ALLOC/USED", "SHARING", "DRIVER", "TAINTS", "GATE", "STATUS")
_WIDE_COLUMNS = ("GPU MEMORY", "KUBELET", "RUNTIME", "KERNEL", "OS IMAGE")
_ONE_WORD = frozenset({"DRIVER", "GATE", "STATUS", "KUBELET"})  # short values that never wrap
# Free text, folded inside a word when one alone is wider than what is left; the other columns
# (names, versions) are never cut inside a word (docs/commands.md, "Output").
_FOLDABLE = frozenset({"TAINTS"})


def _wide_cells(node: GpuNodeSummary) -> tuple[str, ...]:
    memory = f"{node.gpu_memory_mib} MiB" if node.gpu_memory_mib else "-"
    software = (node.kubelet_version, node.container_runtime, node.kernel_version, node.os_image)
    return (memory, *(value or "-" for value in software))


def print_table(result: StatusResult, console: Console, *, wide: bool = False) -> None:
    from rich.table import Table

    if not result.nodes:
        console.print(f"no GPU node found among {result.cluster_nodes} node(s)")
        console.print(
            "hint: install the NVIDIA device plugin (`gpuctl render`) or NVIDIA's DRA driver, "
            "or check the node labels with `kubectl get nodes --show-labels`"
        )
        return
    table = Table(box=None, pad_edge=False)
    for column in (*_COLUMNS, *(_WIDE_COLUMNS if wide else ())):
        table.add_column(
            column, overflow="fold" if column in _FOLDABLE else "ellipsis", no_wrap=column in _ONE_WORD
        )
    for node in result.nodes:
        degraded = not node.ready or node.gpu_allocatable < node.gpu_capacity or not node.gpu_capacity
        cells = (
            node.name,
            product_name(node.product),
            f"{node.gpu_capacity}/{node.gpu_allocatable}/{node.gpu_in_use}",
            _sharing_text(node),
            node.driver,
            ", ".join(node.taints) or "-",
            _gate_text(node),
            _ready_text(node.ready, node.schedulable),
            *(_wide_cells(node) if wide else ()),
        )
        table.add_row(*(literal(cell) for cell in cells), style="yellow" if degraded else None)
    emit_table(console, keep_words_whole(table, console.width))
    totals = result.totals
    console.print(
        f"{totals['gpu_nodes']} GPU node(s) of {result.cluster_nodes}: {totals['capacity']} GPUs, "
        f"{totals['allocatable']} allocatable, {totals['in_use']} in use",
        soft_wrap=True,
    )
    for stack, mode in result.modes:
        if mode:
            console.print(STACKS[stack].mode_text(mode))
