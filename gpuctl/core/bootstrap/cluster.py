"""`bootstrap --phase cluster` (device plugin stack): apply the cluster layer, then wait until
every GPU node advertises the GPUs it must have.

The objects are exactly what `gpuctl render` prints for the same flags (device plugin, sharing
config, MPS daemon, RuntimeClass), applied server-side as field manager `gpuctl`, plus the
`nvidia.com/gpu.present` label on the inventory's nodes and the GPU taint (taint core). Nothing
is sent for an object that already matches, so a second run writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import yaml

from gpuctl.core.render import RenderOptions, render_manifests
from gpuctl.core.taint import DEFAULT_TAINT, TaintResult, taint_gpu_nodes
from gpuctl.core.verify import Check, VerifyOptions, verify
from gpuctl.core.verify.model import Expectations
from gpuctl.core.verify.sharing import physical_allocatable
from gpuctl.diagnose import signature_of
from gpuctl.errors import ExitCode
from gpuctl.kube.apply import Applied, Applier
from gpuctl.kube.daemonsets import device_plugin_pods, list_gpu_daemonsets
from gpuctl.kube.nodes import GFD_PRESENT_LABEL, NodeInfo, list_nodes
from gpuctl.kube.raw import JsonDict

if TYPE_CHECKING:
    from gpuctl.core.chart_release import HelmOutcome
    from gpuctl.helm import Helm
    from gpuctl.kube.client import ApiClient

POLL_S = 1.0
# A diagnosis reads plugin pods and their logs: the nodes still waiting are diagnosed first once
# their plugin pods have had a moment to start, then at intervals doubling from 5 s to 30 s (a
# large cluster rolling its plugin pods out is not read through every 5 s for minutes).
FIRST_DIAGNOSIS_S = 2.0
DIAGNOSIS_EVERY_S = 5.0
DIAGNOSIS_EVERY_MAX_S = 30.0


@dataclass(frozen=True)
class ClusterOptions:
    render: RenderOptions = field(default_factory=RenderOptions)
    check: bool = False
    taint: bool = True
    force_conflicts: bool = False
    timeout_s: float = 300.0
    stack: str = "device-plugin"  # device-plugin | operator (render.operator: the chart's settings)
    helm: Helm | None = None  # the user's helm, for --stack operator


@dataclass(frozen=True)
class NodeReadiness:
    """One GPU node while the cluster layer comes up. `expected`: GPUs it must advertise (None:
    at least one)."""

    node: str
    expected: int | None
    allocatable: int = 0
    plugin_ready: bool = False
    problem: Check | None = None  # why it is stuck, once the wait gave up
    # --stack operator: the Operator's validator on the node (ready, absent, waiting: ...).
    validator: str | None = None

    @property
    def ready(self) -> bool:
        enough = self.allocatable == self.expected if self.expected is not None else self.allocatable > 0
        return self.plugin_ready and enough and self.validator in (None, "ready")

    @property
    def terminal(self) -> bool:
        """Stuck for good: its diagnosis lies beyond the cluster layer (the host's driver, toolkit
        or runtime, or a GPU fault), so waiting longer cannot bring its GPUs."""
        return not self.ready and _beyond_the_cluster(self.problem)

    @property
    def host_layer(self) -> bool:
        """Stuck on what `gpuctl bootstrap --phase host` installs: rerunning the cluster phase
        cannot help, the host phase can."""
        found = signature_of(self.problem.diagnosis) if self.problem is not None else None
        return not self.ready and found is not None and found.host_layer


def _beyond_the_cluster(problem: Check | None) -> bool:
    found = signature_of(problem.diagnosis) if problem is not None else None
    return found is not None and found.beyond_the_cluster


@dataclass(frozen=True)
class ClusterResult:
    check: bool
    objects: tuple[Applied, ...]
    taint: TaintResult | None
    nodes: tuple[NodeReadiness, ...]
    timed_out: bool = False  # the wait ran to --timeout (not: every unready node was terminal)
    duration_s: float = 0.0
    helm: HelmOutcome | None = None  # --stack operator: what helm did
    policy_states: tuple[tuple[str, str], ...] = ()  # --stack operator: ClusterPolicy → state
    stack: str = ""  # "dra" for --stack dra ("": device-plugin, or operator where helm ran)
    warnings: tuple[str, ...] = ()  # e.g. a second device plugin beside the Operator's

    @property
    def writes(self) -> int:
        """Writes sent (server-side dry runs included): applies, taint patches, helm changes."""
        applied = sum(obj.action not in ("unchanged",) for obj in self.objects)
        return applied + (self.taint.writes if self.taint else 0) + (self.helm.writes if self.helm else 0)

    @property
    def conflicts(self) -> tuple[Applied, ...]:
        return tuple(obj for obj in self.objects if obj.action == "conflict")

    @property
    def ok(self) -> bool:
        taint_ok = self.taint is None or self.taint.ok or not self.taint.nodes
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


def cluster_manifests(options: RenderOptions, nodes: list[str]) -> list[JsonDict]:
    """The rendered device plugin stack as objects, then a label for each named GPU node."""
    manifests: list[JsonDict] = []
    for rendered in render_manifests(options).files:
        manifests.extend(doc for doc in yaml.safe_load_all(rendered.content) if doc)
    return manifests + node_labels(nodes)


def readiness(api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
    nodes = {node.name: node for node in list_nodes(api_client)}
    plugin_pods = device_plugin_pods(api_client, list_gpu_daemonsets(api_client))
    states = []
    for name, count in sorted(expected.items()):
        node: NodeInfo | None = nodes.get(name)
        pod = plugin_pods.get(name)
        states.append(
            NodeReadiness(
                name,
                count,
                physical_allocatable(node) if node else 0,
                bool(pod and pod.ready and pod.phase == "Running"),
            )
        )
    return states


def diagnose_with_verify(api_client: ApiClient, stuck: list[NodeReadiness]) -> dict[str, Check | None]:
    """Why each stuck node is stuck: verify's read-only checks (plugin pod, its log, capacity)."""
    gpus = tuple((node.node, node.expected) for node in stuck if node.expected is not None)
    expectations = Expectations(node_patterns=tuple(node.node for node in stuck), gpus_by_pattern=gpus)
    result = verify(api_client, VerifyOptions(run_pods=False, expectations=expectations))
    return {node.name: node.first_problem for node in result.nodes}


def poll_until_ready(
    read: Callable[[], list[NodeReadiness]],
    diagnose: Callable[[list[NodeReadiness]], dict[str, Check | None]],
    timeout_s: float,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> tuple[list[NodeReadiness], bool]:
    """Poll `read` until every node is ready or terminal (diagnosed beyond the cluster layer:
    waiting cannot help it), or `timeout_s` passes; (states, timed out). The nodes still waiting
    are diagnosed every few seconds, and those not ready at the end carry `diagnose`'s reason.
    Every stack waits this way."""
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
        if time.monotonic() >= deadline:
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


def wait_for_gpus(
    api_client: ApiClient,
    expected: dict[str, int | None],
    timeout_s: float,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> tuple[list[NodeReadiness], bool]:
    """Poll until every node in `expected` advertises its GPUs through the device plugin."""
    return poll_until_ready(
        lambda: readiness(api_client, expected),
        lambda stuck: diagnose_with_verify(api_client, stuck),
        timeout_s,
        on_progress,
    )


def apply_gpu_taint(api_client: ApiClient, options: ClusterOptions, nodes: list[str]) -> TaintResult | None:
    """The GPU taint on these nodes (None with --no-taint or no node)."""
    if not options.taint or not nodes:
        return None
    return taint_gpu_nodes(api_client, taint=DEFAULT_TAINT, node_names=nodes, dry_run=options.check)


def apply_node_labels(
    api_client: ApiClient, options: ClusterOptions, expected: dict[str, int | None], *, label_nodes: bool
) -> tuple[Applied, ...]:
    """The GPU label on the inventory's nodes, which a chart's node selectors need before it goes
    in (the GPU taint comes last, once the stack is installed: see apply_operator_layer)."""
    applier = Applier(api_client, dry_run=options.check, force_conflicts=options.force_conflicts)
    return tuple(applier.apply(label) for label in node_labels(sorted(expected) if label_nodes else []))


def apply_cluster_layer(
    api_client: ApiClient,
    options: ClusterOptions,
    expected: dict[str, int | None],
    *,
    label_nodes: bool,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> ClusterResult:
    """Apply, taint, wait. `expected`: GPU node name → GPUs it must advertise (None: >= 1)."""
    if options.stack == "dra":
        from gpuctl.core.bootstrap.dra import apply_dra_layer

        if options.helm is None:
            raise ValueError("--stack dra needs a helm")  # the CLI always passes one
        return apply_dra_layer(
            api_client, options.helm, options, expected, label_nodes=label_nodes, on_progress=on_progress
        )
    if options.stack == "operator":
        from gpuctl.core.bootstrap.operator import apply_operator_layer

        if options.helm is None:
            raise ValueError("--stack operator needs a helm")  # the CLI always passes one
        return apply_operator_layer(
            api_client, options.helm, options, expected, label_nodes=label_nodes, on_progress=on_progress
        )
    started = time.monotonic()
    applier = Applier(api_client, dry_run=options.check, force_conflicts=options.force_conflicts)
    names = sorted(expected) if label_nodes else []
    objects = tuple(applier.apply(manifest) for manifest in cluster_manifests(options.render, names))
    conflicted = any(obj.action == "conflict" for obj in objects)
    taint = None if conflicted else apply_gpu_taint(api_client, options, sorted(expected))
    states = [NodeReadiness(name, count) for name, count in sorted(expected.items())]
    timed_out = False
    if not options.check and not conflicted:
        states, timed_out = wait_for_gpus(api_client, expected, options.timeout_s, on_progress)
    return ClusterResult(
        options.check, objects, taint, tuple(states), timed_out, round(time.monotonic() - started, 2)
    )
