"""`bootstrap --phase cluster`: install the chosen stack, then wait until every GPU node has the
GPUs it must have. One sequence for every stack (gpuctl.core.stacks, as kind's create actions):

1. the stack's options completed from the cluster and checked (a bad --chart: exit 2, no write);
2. its objects (the device plugin's manifests, exactly what `gpuctl render` prints for the same
   flags) and the `nvidia.com/gpu.present` label of the inventory's nodes, applied server-side as
   field manager `gpuctl` (nothing is sent for an object that already matches, so a second run
   writes nothing); the labels go in before a chart, whose node selectors need them;
3. what the stack installs besides (its Helm release: skipped when it already matches);
4. the GPU taint (taint core), only once that succeeded: a failed helm (HelmError) then leaves no
   GPU node tainted against workloads with nothing installed to serve them; then the gate on the
   GPU nodes never proven (gpuctl.core.gate), which the verify phase lifts from those that pass;
5. the wait: the stack's readiness polled until every node is ready or stuck for good, the nodes
   still waiting diagnosed by the stack (verify's read-only checks where it has nothing better);
6. what the stack reports of itself (the Operator's ClusterPolicies, a second device plugin).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.gate import GateResult, gate_new_nodes
from gpuctl.core.proof.readiness import diagnose_with_verify, poll_until_ready
from gpuctl.core.render import render_stack
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import ClusterOptions, NodeReadiness
from gpuctl.core.stacks.registry import stack_for
from gpuctl.core.taint import DEFAULT_TAINT, TaintResult, taint_gpu_nodes
from gpuctl.errors import ExitCode
from gpuctl.kube.apply import Applied, Applier
from gpuctl.kube.nodes import GFD_PRESENT_LABEL
from gpuctl.kube.raw import JsonDict

if TYPE_CHECKING:
    from gpuctl.core.chart_release import HelmOutcome
    from gpuctl.kube.client import ApiClient

# diagnose_with_verify and poll_until_ready: the migration reads them from here too.
__all__ = [
    "ClusterOptions",
    "ClusterResult",
    "NodeReadiness",
    "apply_cluster_layer",
    "diagnose_with_verify",
    "poll_until_ready",
]


@dataclass(frozen=True)
class ClusterResult:
    check: bool
    objects: tuple[Applied, ...]
    taint: TaintResult | None
    nodes: tuple[NodeReadiness, ...]
    stack: Stack
    timed_out: bool = False  # the wait ran to --timeout (not: every unready node was terminal)
    duration_s: float = 0.0
    helm: HelmOutcome | None = None  # a stack installed from a chart: what helm did
    policy_states: tuple[tuple[str, str], ...] = ()  # the stack's policies → state (StackFindings)
    warnings: tuple[str, ...] = ()  # e.g. a second device plugin beside the Operator's
    gate: GateResult | None = None  # the gate put on the GPU nodes never proven

    @property
    def writes(self) -> int:
        """Writes sent (server-side dry runs included): applies, taint and gate patches, helm changes."""
        applied = sum(obj.action not in ("unchanged",) for obj in self.objects)
        patches = (self.taint.writes if self.taint else 0) + (self.gate.writes if self.gate else 0)
        return applied + patches + (self.helm.writes if self.helm else 0)

    @property
    def conflicts(self) -> tuple[Applied, ...]:
        return tuple(obj for obj in self.objects if obj.action == "conflict")

    @property
    def ok(self) -> bool:
        taint_ok = (self.taint is None or self.taint.ok or not self.taint.nodes) and (
            self.gate is None or self.gate.ok
        )
        nodes_ok = self.check or all(node.ready for node in self.nodes)
        return not self.conflicts and taint_ok and nodes_ok and bool(self.nodes)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK if self.ok else ExitCode.CHECK_FAILED


def node_labels(nodes: list[str]) -> list[JsonDict]:
    """The nvidia.com/gpu.present label of each named GPU node, as objects to apply."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {GFD_PRESENT_LABEL: "true"}},
        }
        for name in nodes
    ]


def apply_gpu_taint(api_client: ApiClient, options: ClusterOptions, nodes: list[str]) -> TaintResult | None:
    """The GPU taint on these nodes (None with --no-taint or no node)."""
    if not options.taint or not nodes:
        return None
    return taint_gpu_nodes(api_client, taint=DEFAULT_TAINT, node_names=nodes, dry_run=options.check)


def gate_unproven(api_client: ApiClient, options: ClusterOptions, nodes: list[str]) -> GateResult | None:
    """The gate on the nodes never proven (None with --no-gate or no node)."""
    if options.gate_level is None or not nodes:
        return None
    return gate_new_nodes(api_client, nodes=nodes, level=options.gate_level, dry_run=options.check)


def apply_cluster_layer(
    api_client: ApiClient,
    options: ClusterOptions,
    expected: dict[str, int | None],
    *,
    label_nodes: bool,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> ClusterResult:
    """Install, taint, wait. `expected`: GPU node name → GPUs it must advertise (None: >= 1)."""
    started = time.monotonic()
    stack = stack_for(options.stack)
    options = stack.prepare(api_client, options)
    rendered = render_stack(options.render)
    applier = Applier(api_client, dry_run=options.check, force_conflicts=options.force_conflicts)
    labels = node_labels(sorted(expected) if label_nodes else [])
    objects = tuple(applier.apply(manifest) for manifest in [*stack.manifests(rendered), *labels])
    conflicted = any(obj.action == "conflict" for obj in objects)
    helm = None if conflicted else stack.install(options, rendered)
    taint = None if conflicted else apply_gpu_taint(api_client, options, sorted(expected))
    gate = None if conflicted else gate_unproven(api_client, options, sorted(expected))
    states = [stack.pending(name, count) for name, count in sorted(expected.items())]
    timed_out = False
    if not options.check and not conflicted:
        states, timed_out = poll_until_ready(
            lambda: stack.readiness(api_client, expected),
            lambda stuck: stack.diagnose(
                api_client, stuck, options, lambda rest: diagnose_with_verify(api_client, rest)
            ),
            options.timeout_s,
            on_progress,
        )
    findings = stack.findings(api_client)
    return ClusterResult(
        options.check, objects, taint, tuple(states), options.stack, timed_out,
        round(time.monotonic() - started, 2), helm, findings.policy_states, findings.warnings, gate,
    )  # fmt: skip
