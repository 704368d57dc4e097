"""The DRA stack: NVIDIA's DRA driver chart installed with the user's helm and the values
`gpuctl render --stack dra` prints (templates/dra-driver-nvidia-gpu-values.yaml.j2). A node is
ready when it publishes its GPUs in a ResourceSlice and runs the driver's kubelet plugin. verify
claims every GPU of such a node through a ResourceClaimTemplate, so the scheduler's allocation is
proven too; the checks themselves are in checks.py beside it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.render_options import GATE_TOLERATION_VARIABLES, RenderedFile, RenderOptions
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import (
    CarriedSharing,
    ClusterOptions,
    DeviceGateResult,
    GpuAllocation,
    NodeReadiness,
    PublishedGpus,
    StackFlag,
    VerificationRun,
)
from gpuctl.core.stacks.chart import ChartStack
from gpuctl.core.stacks.device_plugin.stack import plugin_running
from gpuctl.core.stacks.dra import checks as dra
from gpuctl.core.stacks.dra import migration, status
from gpuctl.core.stacks.dra.device_gate import apply_device_gate
from gpuctl.core.stacks.dra.run import DraRun
from gpuctl.core.verify.model import CheckStatus
from gpuctl.core.verify.pod_manifest import verification_pod, verification_pod_name
from gpuctl.core.verify.pod_run import PlannedPod
from gpuctl.defaults import DRA_DRIVER_NAMESPACE, DRA_DRIVER_RELEASE, GPU_RESOURCE
from gpuctl.helm import Chart
from gpuctl.kube.daemonsets import daemonset_pods, list_gpu_daemonsets
from gpuctl.kube.dra import read_inventory
from gpuctl.templating import render_template

if TYPE_CHECKING:
    from gpuctl.core.verify.model import Check, Held, NodeResult, PodEvaluation, VerifyOptions
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.raw import JsonDict

VALUES_FILE = "dra-driver-nvidia-gpu-values.yaml"


class DraStack(ChartStack, GpuAllocation):
    stack = Stack.DRA
    allocation = Stack.DRA
    flags = (
        StackFlag(
            "sharing",
            ("render", "bootstrap"),
            "DRA shares a GPU through one ResourceClaim that several pods reference, not through the "
            "device plugin's replicas",
        ),
        StackFlag(
            "mig_strategy",
            ("render", "bootstrap"),
            "the DRA driver publishes MIG devices as they are; --mig-strategy configures the device plugin",
        ),
    )
    own_files = (VALUES_FILE,)
    release = DRA_DRIVER_RELEASE
    namespace = DRA_DRIVER_NAMESPACE
    log_check_id = "dra.plugin-log"
    kept_kinds = ("resourceclaimtemplates",)  # the run's claim template (its claims go with the pods)

    unserved = "published no ResourceSlice"
    title = "DRA"
    publishes = True
    gpu_resource_unserved = "the multi-node workers request nvidia.com/gpu, which DRA nodes do not serve"

    # -- render and bootstrap ---------------------------------------------------------------------

    def chart(self, options: RenderOptions) -> Chart:
        return options.dra.chart_ref()

    def render(self, options: RenderOptions) -> list[RenderedFile]:
        values = render_template(
            VALUES_FILE + ".j2",
            **self.chart_variables(options),
            driver_root=options.dra.driver_root,
            feature_gates=options.dra.feature_gates,
            taint_key=options.taint_key,
            taint_effect=options.taint_effect,
            **GATE_TOLERATION_VARIABLES,
        )
        return [RenderedFile(VALUES_FILE, values, helm_values=True)]

    def readiness(self, api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
        """Per node: the GPUs its ResourceSlices offer claims, and whether its kubelet plugin is ready."""
        published = read_inventory(api_client).nodes
        plugins = [ds for ds in list_gpu_daemonsets(api_client) if ds.is_dra_plugin]
        pods = daemonset_pods(api_client, plugins)
        states = []
        for name, count in sorted(expected.items()):
            node = published.get(name)
            claimable = dra.claimable(node) if node else 0
            states.append(NodeReadiness(name, count, claimable, plugin_running(pods.get(name))))
        return states

    # -- verify -------------------------------------------------------------------------------------

    # -- a migration onto DRA, or off it (migration.py) -------------------------------------------

    def refuse_moving_onto(self, api_client: ApiClient, to_move: list[NodeInfo]) -> None:
        migration.refuse_unsupported(api_client, to_move)

    def plugin_daemonsets(self, daemonsets: list[DaemonSetInfo]) -> list[DaemonSetInfo]:
        return [daemonset for daemonset in daemonsets if daemonset.is_dra_plugin]

    def carry_over(self, nodes: list[NodeInfo], physical: dict[str, int | None]) -> CarriedSharing:
        return migration.carried_to_dra(nodes, physical)

    def moved_onto(
        self, render: RenderOptions, feature_gates: tuple[str, ...], driver_root: str
    ) -> RenderOptions:
        """With the feature gates that carry the old stack's sharing over, and the driver root the
        old stack's driver lives under."""
        settings = render.dra
        gates = (
            *settings.feature_gates,
            *(gate for gate in feature_gates if gate not in settings.feature_gates),
        )
        settings = replace(settings, driver_root=driver_root) if driver_root else settings
        return replace(render, dra=replace(settings, feature_gates=gates))

    def extended_resource_problem(self, api_client: ApiClient) -> str:
        return migration.extended_resource_problem(api_client)

    def still_serving(self, api_client: ApiClient, node: str) -> str:
        return migration.still_published(api_client, node)

    def remove_after_migration(self, api_client: ApiClient, options: ClusterOptions) -> tuple[str, ...]:
        """Its release, uninstalled with the user's helm."""
        del api_client
        helm = options.helm
        if helm is None or helm.release(self.release, self.namespace) is None:
            return ()
        helm.uninstall(self.release, self.namespace)
        return (f"helm release {self.namespace}/{self.release}",)

    # -- status -----------------------------------------------------------------------------------

    def published_gpus(self, api_client: ApiClient) -> dict[str, PublishedGpus]:
        return status.published_gpus(api_client)

    # -- verify -----------------------------------------------------------------------------------

    def read_facts(
        self, api_client: ApiClient, daemonsets: list[DaemonSetInfo], options: VerifyOptions
    ) -> object:
        return dra.read_facts(api_client, daemonsets, claims=options.run_pods)

    def gpu_node_names(self, facts: object) -> Iterable[str]:
        return facts.inventory.nodes if isinstance(facts, dra.DraFacts) else ()

    def claims(self, node: NodeInfo, snapshot: ClusterSnapshot) -> bool:
        return facts_of(snapshot).uses_dra(node)

    def gpus(self, node: NodeInfo, snapshot: ClusterSnapshot) -> tuple[int, int]:
        published = facts_of(snapshot).published(node)
        return published.gpus or published.mig_devices, dra.claimable(published)

    def plugins(self, snapshot: ClusterSnapshot) -> list[DaemonSetInfo]:
        return list(facts_of(snapshot).plugins)

    def plugin_pod(self, node: NodeInfo, snapshot: ClusterSnapshot) -> PluginPod | None:
        return facts_of(snapshot).plugin_pods.get(node.name)

    def plugin_log(self, node: NodeInfo, pod: PluginPod | None, log: str | None) -> Check:
        return dra.plugin_log(node, pod, log)

    def gpu_checks(self, node: NodeInfo, snapshot: ClusterSnapshot, expected: int | None) -> list[Check]:
        log = snapshot.plugin_checks.get(node.name)
        return dra.node_checks(node, facts_of(snapshot), expected, log, snapshot.plugin_pods.get(node.name))

    def device_taints(self, node: NodeInfo, snapshot: ClusterSnapshot) -> tuple[tuple[str, str], ...]:
        return facts_of(snapshot).published(node).unhealthy

    def apply_device_gate(
        self, api_client: ApiClient, nodes: list[NodeResult], level: str, taint_key: str
    ) -> DeviceGateResult:
        return apply_device_gate(api_client, nodes=nodes, level=level, taint_key=taint_key)

    def held(self, node: NodeInfo, snapshot: ClusterSnapshot) -> Held:
        return dra.held(node, facts_of(snapshot))

    def why_no_pod(self, node: NodeInfo, snapshot: ClusterSnapshot) -> str:
        return dra.why_no_pod(node, facts_of(snapshot))

    def verification_run(
        self, api_client: ApiClient, snapshot: ClusterSnapshot, namespace: str, run_id: str
    ) -> VerificationRun | None:
        """The run's ResourceClaimTemplate and the watch on its claims (where nvidia.com/gpu is
        mapped, also on the unlabelled claims the scheduler creates for its pods)."""
        inventory = facts_of(snapshot).inventory
        watch_all = inventory.extended_resource == GPU_RESOURCE
        gates = tuple(
            device.gate_key for node in inventory.nodes.values() for device in node.devices if device.gate_key
        )
        return DraRun(api_client, inventory.version, namespace, run_id, watch_all=watch_all, tolerated=gates)

    def planned_pods(
        self,
        node: NodeInfo,
        run_id: str,
        options: VerifyOptions,
        snapshot: ClusterSnapshot,
        run: VerificationRun | None,
    ) -> list[PlannedPod]:
        """One pod that claims all the node's GPUs through the run's claim template; where the
        DeviceClass maps nvidia.com/gpu (Kubernetes 1.37), one that asks for nvidia.com/gpu, so the
        scheduler's extended-resource mapping is proven as workloads use it."""
        if not isinstance(run, DraRun):
            raise TypeError("a DRA node's verification pod needs the run's claim template")
        template = run.template
        name = verification_pod_name(node, run_id, workload=options.workload)
        if _via_extended_resource(node, snapshot):
            gpus = dra.claimable(facts_of(snapshot).published(node))
            return [PlannedPod(name, node, lambda: verification_pod(node, gpus, run_id, options))]

        def claiming() -> JsonDict:
            return dra.claim_pod(verification_pod(node, 0, run_id, options), template)

        return [PlannedPod(name, node, claiming)]

    def pod_gpus(self, node: NodeInfo, snapshot: ClusterSnapshot) -> int | None:
        """The published GPUs a claim can get."""
        return dra.claimable(facts_of(snapshot).published(node))

    def judged(self, evaluation: PodEvaluation, node: NodeInfo, snapshot: ClusterSnapshot) -> PodEvaluation:
        """nvidia-smi's GPUs against the published devices' uuid, productName and driverVersion."""
        return dra.matched_to_published(evaluation, facts_of(snapshot).published(node))

    def allocation_checks(
        self, node: NodeInfo, snapshot: ClusterSnapshot, evaluation: PodEvaluation
    ) -> tuple[Check, ...]:
        del evaluation  # a placeholder of skips where no pod ran: dra.claim wants what ran
        ran = snapshot.evaluations.get(node.name)
        allocation = snapshot.claims.get(node.name)
        claim = dra.claim_check(node, facts_of(snapshot), allocation, ran)
        if ran is None or claim.status is CheckStatus.SKIP or not _via_extended_resource(node, snapshot):
            return (claim,)
        return (claim, dra.extended_resource_check(node, facts_of(snapshot), allocation))

    def physical_gpus(
        self, node: NodeInfo, snapshot: ClusterSnapshot, evaluation: PodEvaluation
    ) -> int | None:
        del evaluation
        return self.gpus(node, snapshot)[0]

    def cluster_checks(self, snapshot: ClusterSnapshot, nodes: list[NodeInfo]) -> list[Check]:
        return dra.cluster_checks(facts_of(snapshot), nodes)


def facts_of(snapshot: ClusterSnapshot) -> dra.DraFacts:
    """What the snapshot read for DRA (nothing published where it read none)."""
    found = snapshot.facts.get(Stack.DRA)
    return found if isinstance(found, dra.DraFacts) else dra.DraFacts()


def _via_extended_resource(node: NodeInfo, snapshot: ClusterSnapshot) -> bool:
    """The verification pod asks for nvidia.com/gpu (Kubernetes 1.37's mapping), except on a node
    with GPUs gpuctl's gate keeps out: the claim kube-scheduler creates for such a pod tolerates no
    device taint, so the run's own claim template (which tolerates the gate) proves them again."""
    gated = any(device.gated for device in facts_of(snapshot).published(node).devices)
    return dra.extended_resource_mapped(node, facts_of(snapshot)) and not gated


DRA = DraStack()
