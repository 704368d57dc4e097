"""The interface of a cluster stack, and the types it speaks.

A stack has two faces. `ClusterStack` is what `gpuctl render` and `bootstrap --phase cluster` need:
its files, how it is installed, how its nodes become ready and why one is stuck. `GpuAllocation` is
what `gpuctl verify` needs of the way a node hands its GPUs to pods: its read-only checks, the
verification pod's GPUs and the judgement of what the pod saw. A stack that hands GPUs out its own
way (the device plugin, DRA) is both; the GPU Operator installs NVIDIA's device plugin, so its nodes
are proven as the device plugin's and it adds its own validation on top.

Proof levels (smi, cuda, nccl) bring the workload and its judgement; a stack only says how the
pod gets the GPUs (`planned_pods`), how many it must see (`pod_gpus`) and what it adds to the
level's verdict (`judged`), so a level needs no branch per stack.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from gpuctl.core.render_options import RenderOptions
from gpuctl.core.stacks import Stack
from gpuctl.defaults import GPU_RESOURCE
from gpuctl.diagnose import signature_of
from gpuctl.kube import objects
from gpuctl.kube.client import api_call
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.nodes import node_from_json
from gpuctl.kube.rest_requests import request_json

if TYPE_CHECKING:
    from gpuctl.core.chart_release import HelmOutcome
    from gpuctl.core.render_options import RenderedFile
    from gpuctl.core.verify.model import Check, GpuDevice, Held, NodeResult, PodEvaluation, VerifyOptions
    from gpuctl.core.verify.pod_run import PlannedPod
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.helm import Helm
    from gpuctl.kube.claims import ClaimAllocation
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.raw import JsonDict


DAEMONSET_PATH = "/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"


@dataclass(frozen=True)
class ClusterOptions:
    render: RenderOptions = field(default_factory=RenderOptions)  # render.stack: the stack to install
    check: bool = False
    taint: bool = True
    # The gate's level for the GPU nodes never proven (gpuctl.core.gate); None: they are not gated.
    gate_level: str | None = None
    force_conflicts: bool = False
    timeout_s: float = 300.0
    helm: Helm | None = None  # the user's helm, for the stacks installed from a chart

    @property
    def stack(self) -> Stack:
        return self.render.stack


@dataclass(frozen=True)
class StackFlag:
    """A flag of `gpuctl render` or `gpuctl bootstrap` that configures some stacks and not the
    others, as a stack declares it; the CLI's flag rules (gpuctl.cli.flag_rules) are derived from
    these declarations, so a flag given for a stack it has no effect on is refused with `why`."""

    parameter: str  # the commands' parameter (Typer's name: mig_strategy)
    commands: tuple[str, ...]  # the commands that have it: "render", "bootstrap"
    why: str  # why it has no effect on the stacks it does not configure
    # True: it configures only the stacks that declare it; False: every stack but those that do
    only: bool = False
    # flags (typed on) under which it has an effect whatever the stack
    also: tuple[str, ...] = ()
    example: bool = True  # the refusal shows a command line where it has an effect


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
        found = signature_of(self.problem.diagnosis) if self.problem is not None else None
        return not self.ready and found is not None and found.beyond_the_cluster

    @property
    def host_layer(self) -> bool:
        """Stuck on what `gpuctl bootstrap --phase host` installs: rerunning the cluster phase
        cannot help, the host phase can."""
        found = signature_of(self.problem.diagnosis) if self.problem is not None else None
        return not self.ready and found is not None and found.host_layer


@dataclass(frozen=True)
class StackFindings:
    """What a stack reports of itself once installed, besides its nodes."""

    policy_states: tuple[tuple[str, str], ...] = ()  # --stack operator: ClusterPolicy → state
    warnings: tuple[str, ...] = ()  # e.g. a second device plugin beside the Operator's


@dataclass(frozen=True)
class DeviceGateResult:
    """What the device gate did; `confined`: nodes whose failure was confined to some GPUs (their
    node taint is not wanted)."""

    devices: tuple[tuple[str, tuple[GpuDevice, ...]], ...] = ()  # node → its GPUs
    gated: tuple[str, ...] = ()  # "node/device" of rules created in this run
    lifted: tuple[str, ...] = ()  # "node/device" of rules deleted in this run
    confined: tuple[str, ...] = ()

    def of(self, node: str) -> tuple[GpuDevice, ...]:
        return dict(self.devices).get(node, ())

    def plus(self, other: DeviceGateResult) -> DeviceGateResult:
        """Both results: what each way of handing out GPUs gated of its own nodes."""
        return DeviceGateResult(
            self.devices + other.devices,
            self.gated + other.gated,
            self.lifted + other.lifted,
            self.confined + other.confined,
        )


@dataclass(frozen=True)
class PublishedGpus:
    """`gpuctl status`: a node's GPUs as a way of handing them out publishes them through its own
    API (GpuAllocation.published_gpus), beside the `nvidia.com/gpu` the node object advertises."""

    stack: Stack
    published: int  # full GPUs (MIG devices where the node publishes only those)
    claimable: int  # without a NoSchedule/NoExecute device taint
    allocated: int  # held by allocated claims
    tainted: int
    # (device, taint with its source: the slice or a DeviceTaintRule): the GPUs counted unhealthy
    unhealthy: tuple[tuple[str, str], ...] = ()
    # (device, DeviceTaintRule, taint key): the GPUs `verify --gate` keeps out until proven again
    gated: tuple[tuple[str, str, str], ...] = ()
    product: str = ""  # "" when it does not say
    driver_version: str = ""


@dataclass(frozen=True)
class CarriedSharing:
    """What a move onto a stack keeps of the old stack's GPU sharing on the nodes it moves, in
    words; `feature_gates`: the new stack's gates it is rendered with to keep it."""

    carried: tuple[str, ...] = ()
    not_carried: tuple[str, ...] = ()
    feature_gates: tuple[str, ...] = ()


# Why each stuck node is stuck, by verify's read-only checks: the diagnosis every stack can fall
# back on (the shared sequence passes it in, so no stack imports verify's run).
Diagnosis = Callable[[list[NodeReadiness]], dict[str, "Check | None"]]


class ClusterStack(ABC):
    """What `render` and `bootstrap --phase cluster` ask of a stack; the sequence that runs it is
    core/bootstrap/cluster.py's apply_cluster_layer."""

    stack: Stack
    allocation: Stack  # the GpuAllocation (registry.ALLOCATIONS) that proves its nodes
    own_files: tuple[str, ...]  # every file name `render` may write for it (--out cleans them up)
    flags: tuple[StackFlag, ...] = ()  # the flags it alone takes, or alone has no use for
    render_alias: str = ""  # a boolean parameter of `gpuctl render` that picks it, as --stack does
    from_chart: bool = False  # installed from a Helm chart with the user's helm
    # bootstrap with an inventory: the node selector it is rendered with (the inventory's nodes)
    inventory_node_selector: tuple[tuple[str, str], ...] = ()

    @abstractmethod
    def render(self, options: RenderOptions) -> list[RenderedFile]:
        """Its files: manifests to apply, or the Helm values of its chart."""

    @abstractmethod
    def plugin_namespace(self, options: RenderOptions) -> str:
        """Where its GPU plugin pods run (the namespace whose logs verify may read)."""

    def prepare(self, api_client: ApiClient, options: ClusterOptions) -> ClusterOptions:
        """The options with what is found in the cluster filled in; refuses bad ones before any write."""
        del api_client  # the stacks with nothing to look up
        return options

    def manifests(self, rendered: list[RenderedFile]) -> list[JsonDict]:
        """The objects to apply server-side (none for a stack installed from a chart)."""
        del rendered
        return []

    def install(self, options: ClusterOptions, rendered: list[RenderedFile]) -> HelmOutcome | None:
        """Install what `manifests` does not (its chart); None when there is nothing to install."""
        del options, rendered
        return None

    def pending(self, node: str, expected: int | None) -> NodeReadiness:
        """A node not waited for yet (check mode, or a conflict stopped the run)."""
        return NodeReadiness(node, expected)

    @abstractmethod
    def readiness(self, api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
        """Each expected node's state now."""

    def diagnose(
        self, api_client: ApiClient, stuck: list[NodeReadiness], options: ClusterOptions, fallback: Diagnosis
    ) -> dict[str, Check | None]:
        """Why each stuck node is stuck; `fallback` is verify's read-only diagnosis."""
        del api_client, options
        return fallback(stuck)

    def findings(self, api_client: ApiClient) -> StackFindings:
        """What it reports of itself once the wait is over."""
        del api_client
        return StackFindings()

    def validation_checks(self, node: NodeInfo, snapshot: ClusterSnapshot) -> list[Check]:
        """verify: what its own validation says of `node` (asked of every stack on every node)."""
        del node, snapshot
        return []

    # verify's snapshot keeps what each stack reads of the cluster for itself (ClusterSnapshot.facts,
    # by stack; gpuctl.core.verify.snapshot.FactReader); only the stack reads its own facts.

    def read_facts(
        self, api_client: ApiClient, daemonsets: list[DaemonSetInfo], options: VerifyOptions
    ) -> object:
        """Its facts, read before the GPU nodes are known (None: nothing to read then)."""
        del api_client, daemonsets, options
        return None

    def gpu_node_names(self, facts: object) -> Iterable[str]:
        """The nodes its facts show to have GPUs, besides those the node objects show."""
        del facts
        return ()

    def read_node_facts(
        self, api_client: ApiClient, daemonsets: list[DaemonSetInfo], nodes: list[str]
    ) -> object:
        """Its facts, read once the GPU nodes (`nodes`) are known, where `read_facts` read none."""
        del api_client, daemonsets, nodes
        return None

    def own_cluster_checks(self, snapshot: ClusterSnapshot) -> list[Check]:
        """verify: cluster-wide checks of its own facts (asked of every stack)."""
        del snapshot
        return []

    # -- a migration (`bootstrap --phase cluster --migrate`, gpuctl.core.migrate) ------------------
    # The generic sequence moves the nodes one batch at a time; what it asks of the stack the nodes
    # leave (the source) and of the one they go to (the target) is here. The defaults are those of
    # a stack whose plugin DaemonSets serve `nvidia.com/gpu` and can be pinned to labelled nodes.

    # The source's plugin DaemonSets select the stack label while the cluster moves; False where
    # they are someone else's (its `leave_labels` move a node instead).
    pinned_by_label: bool = True
    # What its target's readiness misses on a node it does not serve yet, in words.
    unserved: str = f"advertises no {GPU_RESOURCE}"

    def mode_text(self, mode: str) -> str:
        """`gpuctl status`: its `installed_mode` in words, a line of its own."""
        return f"{self.stack.value} mode: {mode}"

    def installed_mode(self, api_client: ApiClient) -> str:
        """How it runs in the cluster as a migration must know ("" where that does not matter);
        read once per plan and handed back to `serves_nodes` and `refuse_migration`."""
        del api_client
        return ""

    def serves_nodes(self, mode: str) -> bool:
        """Source: whether it serves the GPU nodes a move would take, given its `installed_mode`."""
        del mode
        return True

    def refuse_migration(self, mode: str, source: Stack, target: Stack) -> None:
        """Exit 2 (ConfigError) where running like this (`mode`) it stands in the way of a move
        from `source` to `target` (asked of every stack, before any write)."""
        del mode, source, target

    def refuse_moving_onto(self, api_client: ApiClient, to_move: list[NodeInfo]) -> None:
        """Target: exit 2 where the cluster cannot serve the running workloads' GPUs its way."""
        del api_client, to_move

    def plugin_daemonsets(self, daemonsets: list[DaemonSetInfo]) -> list[DaemonSetInfo]:
        """Source: the DaemonSets that serve a node's GPUs its way."""
        return [daemonset for daemonset in daemonsets if daemonset.is_device_plugin]

    def leave_labels(self) -> dict[str, str]:
        """Source: the node labels that take a node off it, besides the stack label."""
        return {}

    def kept_on_leaving(self) -> tuple[str, ...]:
        """Source: what of it stays on a moved node, in words."""
        return ()

    def driver_root_for_move(self, api_client: ApiClient) -> str:
        """Source: where the NVIDIA driver lives on its nodes for the target ("": the host's root)."""
        del api_client
        return ""

    def carry_over(self, nodes: list[NodeInfo], physical: dict[str, int | None]) -> CarriedSharing:
        """Target: what it keeps of the GPU sharing on `nodes`; `physical`: node → its GPUs."""
        del nodes, physical
        return CarriedSharing()

    def moved_onto(
        self, render: RenderOptions, feature_gates: tuple[str, ...], driver_root: str
    ) -> RenderOptions:
        """Target: its render options for the moved nodes, with what carries the old sharing over."""
        del feature_gates, driver_root
        return render

    def extended_resource_problem(self, api_client: ApiClient) -> str:
        """Target: why pods asking for `nvidia.com/gpu` would not be served on its nodes ("")."""
        del api_client
        return ""

    def still_serving(self, api_client: ApiClient, node: str) -> str:
        """Source, besides its plugin pod: what of it still serves `node` ("" when nothing does)."""
        raw = objects.read_node(api_client, node)
        allocatable = node_from_json(raw).gpu_allocatable if raw is not None else 0
        return f"it still advertises {allocatable} allocatable {GPU_RESOURCE}" if allocatable else ""

    def remove_after_migration(self, api_client: ApiClient, options: ClusterOptions) -> tuple[str, ...]:
        """Source, once its last node has moved: remove it; what was removed, in words."""
        del options
        removed = []
        for daemonset in list_gpu_daemonsets(api_client):
            if not (daemonset.is_device_plugin or "MPS" in daemonset.component):
                continue
            with api_call("delete", f"daemonset {daemonset.namespace}/{daemonset.name}"):
                request_json(
                    api_client, "DELETE", DAEMONSET_PATH, namespace=daemonset.namespace, name=daemonset.name
                )
            removed.append(f"daemonset {daemonset.namespace}/{daemonset.name}")
        return tuple(removed)


class VerificationRun(Protocol):
    """What one verify run creates for an allocation besides its pods, and always deletes."""

    def start(self) -> None: ...

    def finish(self) -> dict[str, ClaimAllocation]:
        """Stop following; verification pod name → what its claim was allocated."""
        ...

    def clean_up(self) -> None: ...


class GpuAllocation(ABC):
    """How a node hands its GPUs to pods, as `gpuctl verify` proves it."""

    stack: Stack
    title: str  # how `gpuctl status` names it
    kept_kinds: tuple[str, ...] = ()  # what a --keep-pods run leaves besides its pods (kubectl's names)
    # `gpuctl status` JSON: it publishes GPUs through its own API (published_gpus), under its key
    publishes: bool = False

    def published_gpus(self, api_client: ApiClient) -> dict[str, PublishedGpus]:
        """`gpuctl status`: each node's GPUs as it publishes them, by node (none of its own: {})."""
        del api_client
        return {}

    def claims(self, node: NodeInfo, snapshot: ClusterSnapshot) -> bool:
        """`node` gives its GPUs this way (the device plugin's is the default: it claims none)."""
        del node, snapshot
        return False

    @abstractmethod
    def gpus(self, node: NodeInfo, snapshot: ClusterSnapshot) -> tuple[int, int]:
        """(offered, usable): the GPUs the node offers, and those a pod can get now."""

    @abstractmethod
    def plugins(self, snapshot: ClusterSnapshot) -> list[DaemonSetInfo]:
        """The DaemonSets that hand the GPUs out (they must tolerate the GPU taint)."""

    @abstractmethod
    def plugin_pod(self, node: NodeInfo, snapshot: ClusterSnapshot) -> PluginPod | None:
        """The plugin pod on `node`, whose log explains its problems."""

    @abstractmethod
    def plugin_log(self, node: NodeInfo, pod: PluginPod | None, log: str | None) -> Check:
        """The plugin log check (its id is `log_check_id`); `log` None: not read."""

    log_check_id: str

    @abstractmethod
    def gpu_checks(self, node: NodeInfo, snapshot: ClusterSnapshot, expected: int | None) -> list[Check]:
        """The read-only checks of the node's GPUs and plugin (gpu.capacity ... the plugin log)."""

    def apply_device_gate(
        self, api_client: ApiClient, nodes: list[NodeResult], level: str, taint_key: str
    ) -> DeviceGateResult:
        """The per-GPU gate of `nodes` (its own, judged in this run; gpuctl.core.proof.gate calls
        it): GPUs whose failure is confined to them kept from pods, GPUs proven again let back. A
        way of handing out GPUs that cannot keep one GPU from pods gates nothing here."""
        del api_client, nodes, level, taint_key
        return DeviceGateResult()

    # Why a pod that requests `nvidia.com/gpu` is not served on its nodes ("" where it is): the
    # fabric level's workers request it.
    gpu_resource_unserved: str = ""

    def device_taints(self, node: NodeInfo, snapshot: ClusterSnapshot) -> tuple[tuple[str, str], ...]:
        """(device, taint with its source) of the node's GPUs a device taint keeps from pods (DRA)."""
        del node, snapshot
        return ()

    @abstractmethod
    def held(self, node: NodeInfo, snapshot: ClusterSnapshot) -> Held:
        """What the node's workloads hold of its GPUs, and what is left for verification."""

    @abstractmethod
    def why_no_pod(self, node: NodeInfo, snapshot: ClusterSnapshot) -> str:
        """Why no verification pod can get the node's GPUs ("" when one can)."""

    def verification_run(
        self, api_client: ApiClient, snapshot: ClusterSnapshot, namespace: str, run_id: str
    ) -> VerificationRun | None:
        """What the run needs besides its pods (created by its `start`), None when nothing."""
        del api_client, snapshot, namespace, run_id
        return None

    @abstractmethod
    def planned_pods(
        self,
        node: NodeInfo,
        run_id: str,
        options: VerifyOptions,
        snapshot: ClusterSnapshot,
        run: VerificationRun | None,
    ) -> list[PlannedPod]:
        """The node's verification pods, each given its GPUs this way."""

    @abstractmethod
    def pod_gpus(self, node: NodeInfo, snapshot: ClusterSnapshot) -> int | None:
        """The GPUs a verification pod on `node` must see (None: not known)."""

    def judged(self, evaluation: PodEvaluation, node: NodeInfo, snapshot: ClusterSnapshot) -> PodEvaluation:
        """The pod's evaluation with this allocation's own checks of what it saw."""
        del node, snapshot
        return evaluation

    @abstractmethod
    def allocation_checks(
        self, node: NodeInfo, snapshot: ClusterSnapshot, evaluation: PodEvaluation
    ) -> tuple[Check, ...]:
        """How the GPUs were handed to the pod: sharing as advertised, or the claim's allocation."""

    @abstractmethod
    def physical_gpus(
        self, node: NodeInfo, snapshot: ClusterSnapshot, evaluation: PodEvaluation
    ) -> int | None:
        """The physical GPUs behind the node's counts (None: not known)."""

    @abstractmethod
    def cluster_checks(self, snapshot: ClusterSnapshot, nodes: list[NodeInfo]) -> list[Check]:
        """Cluster-wide checks for the `nodes` that get their GPUs this way."""

    def runtime_class_users(self, snapshot: ClusterSnapshot, nodes: list[NodeInfo]) -> list[DaemonSetInfo]:
        """Its DaemonSets whose RuntimeClass must exist, given the `nodes` it serves."""
        del snapshot, nodes
        return []
