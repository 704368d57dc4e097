"""What verify's read-only phase learns of the cluster (nodes, GPU DaemonSets and their pods,
RuntimeClasses, and what each stack reads for itself: its facts), and later what the pods proved."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.device_plugin.sharing import SharingPlan, plan_for
from gpuctl.core.verify import node_checks as checks
from gpuctl.core.verify.expectations import all_patterns, is_expected, matches
from gpuctl.core.verify.model import Check, PodEvaluation, VerifyOptions
from gpuctl.kube.claims import ClaimAllocation
from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod, device_plugin_pods, list_gpu_daemonsets
from gpuctl.kube.gpu_use import NodeUse, read_use
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.kube.runtime_classes import list_runtime_classes

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

PLUGIN_START_WAIT_S = 30.0
PLUGIN_START_POLL_S = 1.0


@dataclass
class ClusterSnapshot:
    """What the read-only phase learnt about the cluster, and later what the pods proved."""

    nodes: list[NodeInfo]
    gpu_nodes: list[NodeInfo]
    missing: list[str]
    daemonsets: list[DaemonSetInfo]
    plugins: list[DaemonSetInfo]
    plugin_pods: dict[str, PluginPod]
    runtime_classes: set[str]
    # What each stack read of the cluster for itself (FactReader), by stack; a stack with nothing
    # to read is absent.
    facts: dict[Stack, object] = field(default_factory=dict)
    plugin_checks: dict[str, Check] = field(default_factory=dict)
    evaluations: dict[str, PodEvaluation] = field(default_factory=dict)
    claims: dict[str, ClaimAllocation] = field(default_factory=dict)  # node name → its claim's allocation
    # node name → one evaluation per deeper level it was held to (levels/rounds.py)
    levels: dict[str, tuple[PodEvaluation, ...]] = field(default_factory=dict)
    use: dict[str, NodeUse] = field(default_factory=dict)  # node → what its pods hold of its GPUs
    _sharing: list[tuple[str, SharingPlan]] | None = None
    _plans: dict[str, SharingPlan] = field(default_factory=dict)

    def plan(self, node: NodeInfo) -> SharingPlan:
        """The node's sharing plan, worked out once (every phase of a run asks for it)."""
        plan = self._plans.get(node.name)
        if plan is None:
            plan = self._plans[node.name] = plan_for(node, self.use.get(node.name))
        return plan

    def sharing_besides(self, name: str) -> list[SharingPlan]:
        """The first other GPU node's plan that shares its GPUs: all that gpu.sharing reads of
        the other nodes. Found once, not once per node (quadratic at thousands of nodes)."""
        if self._sharing is None:
            plans = ((node.name, self.plan(node)) for node in self.gpu_nodes)
            self._sharing = list(itertools.islice(((n, p) for n, p in plans if p.mode != "exclusive"), 2))
        return [plan for other, plan in self._sharing if other != name][:1]


class FactReader(Protocol):
    """What the snapshot asks of each stack (gpuctl.core.stacks.base.ClusterStack): its facts."""

    stack: Stack

    def read_facts(
        self, api_client: ApiClient, daemonsets: list[DaemonSetInfo], options: VerifyOptions
    ) -> object:
        """Read before the GPU nodes are known (None: nothing to read then)."""
        ...

    def gpu_node_names(self, facts: object) -> Iterable[str]:
        """The nodes its facts show to have GPUs, besides those the node objects show."""
        ...

    def read_node_facts(
        self, api_client: ApiClient, daemonsets: list[DaemonSetInfo], nodes: list[str]
    ) -> object:
        """Read once the GPU nodes (`nodes`, at least one) are known (None: nothing to read)."""
        ...


def _select_gpu_nodes(
    nodes: list[NodeInfo], options: VerifyOptions, published: set[str]
) -> tuple[list[NodeInfo], list[str]]:
    expectations = options.expectations
    selected = [n for n in nodes if n.is_gpu_node or n.name in published or is_expected(expectations, n.name)]
    names = [node.name for node in nodes]
    missing = [
        pattern for pattern in all_patterns(expectations) if not any(matches(pattern, name) for name in names)
    ]
    return sorted(selected, key=lambda node: node.name), missing


def read_snapshot(
    api_client: ApiClient, options: VerifyOptions, stacks: Sequence[FactReader]
) -> ClusterSnapshot:
    nodes = list_nodes(api_client)
    daemonsets = list_gpu_daemonsets(api_client)
    facts = {stack.stack: stack.read_facts(api_client, daemonsets, options) for stack in stacks}
    published = {name for stack in stacks for name in stack.gpu_node_names(facts[stack.stack])}
    gpu_nodes, missing = _select_gpu_nodes(nodes, options, published)
    plugins = [ds for ds in daemonsets if ds.is_device_plugin]
    plugin_pods = device_plugin_pods(api_client, plugins) if gpu_nodes else {}
    runtime_classes = list_runtime_classes(api_client) if gpu_nodes or options.runtime_class else set()
    names = [node.name for node in gpu_nodes]
    for stack in stacks:
        if gpu_nodes and facts[stack.stack] is None:
            facts[stack.stack] = stack.read_node_facts(api_client, daemonsets, names)
    snapshot = ClusterSnapshot(nodes, gpu_nodes, missing, daemonsets, plugins, plugin_pods, runtime_classes)
    snapshot.facts = {stack: found for stack, found in facts.items() if found is not None}
    # What workloads hold: the verification pods ask only for the rest.
    snapshot.use = read_use(api_client) if gpu_nodes and options.run_pods else {}
    return snapshot


def _plugin_starting(snapshot: ClusterSnapshot) -> list[str]:
    """GPU nodes whose device plugin pod is still starting: they advertise nothing yet, and are
    not broken for that (a cluster verified right after the plugin was deployed)."""
    starting = []
    rolling_out = any(plugin.rolling_out for plugin in snapshot.plugins)
    for node in snapshot.gpu_nodes:
        pod = snapshot.plugin_pods.get(node.name)
        if pod is None:
            if rolling_out:  # its pod is not created yet
                starting.append(node.name)
            continue
        if pod.ready or pod.restarts:
            continue
        if pod.phase == "Pending" or pod.waiting_reason in checks.STARTING:
            starting.append(node.name)
    return starting


def settled_snapshot(
    api_client: ApiClient, options: VerifyOptions, started: float, stacks: Sequence[FactReader]
) -> ClusterSnapshot:
    """The read-only snapshot, with each of `stacks`' facts, re-read while device plugin pods are
    starting (at most PLUGIN_START_WAIT_S, within --timeout)."""
    snapshot = read_snapshot(api_client, options, stacks)
    deadline = started + min(PLUGIN_START_WAIT_S, options.timeout_s / 2)
    while _plugin_starting(snapshot) and time.monotonic() < deadline:
        time.sleep(PLUGIN_START_POLL_S)
        snapshot = read_snapshot(api_client, options, stacks)
    return snapshot
