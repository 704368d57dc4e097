"""The device plugin stack: gpuctl's own manifests of NVIDIA's device plugin (sharing config, the
MPS control daemon for MPS, RuntimeClass), applied server-side; a node is ready when its plugin pod
runs and it advertises its GPUs as allocatable nvidia.com/gpu. verify requests those GPUs (as the
node's sharing plan allows) and judges the plugin's pod and log. It is the default allocation:
the GPU Operator's nodes get their GPUs from NVIDIA's device plugin too."""

from __future__ import annotations

import functools
import hashlib
from typing import TYPE_CHECKING

import yaml

from gpuctl.core.render_options import RenderedFile, RenderOptions, sharing_variables
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import (
    CarriedSharing,
    ClusterStack,
    GpuAllocation,
    NodeReadiness,
    StackFlag,
    VerificationRun,
)
from gpuctl.core.stacks.device_plugin.sharing import (
    expected_seen,
    physical_allocatable,
    physical_checks,
    sharing_check,
)
from gpuctl.core.verify import cluster_checks
from gpuctl.core.verify import node_checks as checks
from gpuctl.core.verify.model import IN_USE_SKIP, Held
from gpuctl.core.verify.pod_manifest import verification_pod, verification_pod_name
from gpuctl.core.verify.pod_run import PlannedPod
from gpuctl.defaults import DEVICE_PLUGIN_VERSION, DRA_DRIVER_NAMESPACE, OPERATOR_NAMESPACE
from gpuctl.kube.daemonsets import device_plugin_pods, list_gpu_daemonsets
from gpuctl.kube.nodes import list_nodes
from gpuctl.templating import render_template

if TYPE_CHECKING:
    from gpuctl.core.verify.model import Check, PodEvaluation, VerifyOptions
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.raw import JsonDict

# Set by GPU feature discovery on nodes whose GPUs are configured for MPS; NVIDIA's chart runs the
# control daemon only there.
MPS_CAPABLE_LABEL = "nvidia.com/mps.capable"


def _mps_control_daemon_file(
    options: RenderOptions, variables: dict[str, object], checksum: str
) -> RenderedFile:
    """NVIDIA's MPS control daemon, which `sharing.mps` needs on every node that shares GPUs."""
    daemonset = render_template(
        "nvidia-device-plugin-mps-control-daemon.yaml.j2",
        **variables,
        image=options.image,
        plugin_version=DEVICE_PLUGIN_VERSION,
        config_checksum=checksum,
        node_selector={**dict(options.node_selector), MPS_CAPABLE_LABEL: "true"},
    )
    return RenderedFile("nvidia-device-plugin-mps-control-daemon.yaml", daemonset)


def plugin_running(pod: PluginPod | None) -> bool:
    """A GPU plugin pod that runs and is ready: what every stack's readiness waits for."""
    return bool(pod and pod.ready and pod.phase == "Running")


def plugin_readiness(api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
    """Per node: the physical GPUs it advertises allocatable, and whether its device plugin runs."""
    nodes = {node.name: node for node in list_nodes(api_client)}
    plugin_pods = device_plugin_pods(api_client, list_gpu_daemonsets(api_client))
    states = []
    for name, count in sorted(expected.items()):
        node = nodes.get(name)
        allocatable = physical_allocatable(node) if node else 0
        states.append(NodeReadiness(name, count, allocatable, plugin_running(plugin_pods.get(name))))
    return states


_NO_CHART = "the device plugin stack applies gpuctl's own manifests, no Helm chart"


class DevicePluginStack(ClusterStack, GpuAllocation):
    stack = Stack.DEVICE_PLUGIN
    allocation = Stack.DEVICE_PLUGIN
    title = "device plugin"
    flags = (
        *(
            StackFlag(parameter, commands, _NO_CHART, also=also)
            for parameter, commands, also in (
                ("chart", ("bootstrap",), ()),
                # --migrate back to the device plugin removes the DRA driver's release with the user's helm
                ("helm", ("bootstrap",), ("migrate",)),
                ("chart_version", ("render", "bootstrap"), ()),
            )
        ),
        # render's options of the device plugin manifests, which the charts of the other stacks decide
        *(
            StackFlag(parameter, ("render",), why, only=True, example=False)
            for parameter, why in (
                (
                    "namespace",
                    f"the GPU Operator installs into {OPERATOR_NAMESPACE}, the DRA driver into "
                    f"{DRA_DRIVER_NAMESPACE}",
                ),
                ("image", "the GPU Operator's and the DRA driver's charts bring their own images"),
                ("runtime_class", "the GPU Operator creates its own RuntimeClass, and DRA needs none"),
            )
        ),
    )
    own_files = (
        "nvidia-device-plugin.yaml",
        "nvidia-device-plugin-config.yaml",
        "nvidia-device-plugin-mps-control-daemon.yaml",
    )
    log_check_id = "device-plugin.log"

    # -- render and bootstrap ---------------------------------------------------------------------

    def render(self, options: RenderOptions) -> list[RenderedFile]:
        variables = sharing_variables(options)
        files: list[RenderedFile] = []
        checksum = ""
        if options.sharing != "none":
            config = render_template("nvidia-device-plugin-config.yaml.j2", **variables)
            checksum = hashlib.sha256(config.encode()).hexdigest()[:16]
            files.append(RenderedFile("nvidia-device-plugin-config.yaml", config))
        daemonset = render_template(
            "nvidia-device-plugin.yaml.j2",
            **variables,
            image=options.image,
            plugin_version=DEVICE_PLUGIN_VERSION,
            config_checksum=checksum,
            node_selector=dict(options.node_selector),
        )
        files.append(RenderedFile("nvidia-device-plugin.yaml", daemonset))
        if options.sharing == "mps":
            files.append(_mps_control_daemon_file(options, variables, checksum))
        runtime_class = render_template(
            "runtimeclass-nvidia.yaml.j2",
            runtime_class_name=options.runtime_class,
            runtime_handler="nvidia",
        )
        files.append(RenderedFile(f"runtimeclass-{options.runtime_class}.yaml", runtime_class))
        return files

    def plugin_namespace(self, options: RenderOptions) -> str:
        return options.namespace

    def manifests(self, rendered: list[RenderedFile]) -> list[JsonDict]:
        return [doc for file in rendered for doc in yaml.safe_load_all(file.content) if doc]

    def readiness(self, api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
        return plugin_readiness(api_client, expected)

    def carry_over(self, nodes: list[NodeInfo], physical: dict[str, int | None]) -> CarriedSharing:
        """A move onto the device plugin: the command's own flags decide its sharing."""
        del nodes, physical
        return CarriedSharing(
            ("the device plugin is rendered with this command's --sharing and --mig-strategy",)
        )

    # -- verify -------------------------------------------------------------------------------------

    def gpus(self, node: NodeInfo, snapshot: ClusterSnapshot) -> tuple[int, int]:
        del snapshot  # the node's own status says it
        return node.gpu_capacity, node.gpu_allocatable

    def plugins(self, snapshot: ClusterSnapshot) -> list[DaemonSetInfo]:
        return snapshot.plugins

    def plugin_pod(self, node: NodeInfo, snapshot: ClusterSnapshot) -> PluginPod | None:
        return snapshot.plugin_pods.get(node.name)

    def plugin_log(self, node: NodeInfo, pod: PluginPod | None, log: str | None) -> Check:
        return checks.device_plugin_log(node, pod, log)

    def gpu_checks(self, node: NodeInfo, snapshot: ClusterSnapshot, expected: int | None) -> list[Check]:
        plugin_pod = snapshot.plugin_pods.get(node.name)
        plugin_log = snapshot.plugin_checks.get(node.name) or checks.device_plugin_log(node, plugin_pod, None)
        return [
            checks.gpu_capacity(node, expected, plugin_log),
            checks.gpu_allocatable(node),
            checks.device_plugin_pod(node, plugin_pod, bool(snapshot.plugins)),
            plugin_log,
        ]

    def held(self, node: NodeInfo, snapshot: ClusterSnapshot) -> Held:
        plan = snapshot.plan(node)
        use = snapshot.use.get(node.name)
        return Held(plan.held, plan.advertised, use.pods if use is not None and plan.held else ())

    def why_no_pod(self, node: NodeInfo, snapshot: ClusterSnapshot) -> str:
        if self.held(node, snapshot).busy:
            return IN_USE_SKIP
        return "no allocatable GPU to request" if snapshot.plan(node).advertised <= 0 else ""

    def planned_pods(
        self,
        node: NodeInfo,
        run_id: str,
        options: VerifyOptions,
        snapshot: ClusterSnapshot,
        run: VerificationRun | None,
    ) -> list[PlannedPod]:
        """What the node's sharing allows: one pod with all its devices, or (MPS) one per GPU."""
        del run  # the pods request the GPUs: nothing else to create
        plan = snapshot.plan(node)
        build = functools.partial(verification_pod, node, plan.requests, run_id, options, mig=plan.mig)
        return [
            PlannedPod(
                verification_pod_name(node, run_id, part, options.workload),
                node,
                functools.partial(build, part=part),
            )
            for part in range(plan.pods)
        ]

    def pod_gpus(self, node: NodeInfo, snapshot: ClusterSnapshot) -> int | None:
        return expected_seen(snapshot.plan(node))

    def allocation_checks(
        self, node: NodeInfo, snapshot: ClusterSnapshot, evaluation: PodEvaluation
    ) -> tuple[Check, ...]:
        plan = snapshot.plan(node)
        others = snapshot.sharing_besides(node.name)
        return (sharing_check(node, plan, others), *physical_checks(plan, evaluation))

    def physical_gpus(
        self, node: NodeInfo, snapshot: ClusterSnapshot, evaluation: PodEvaluation
    ) -> int | None:
        plan = snapshot.plan(node)
        return plan.physical if plan.physical is not None else (evaluation.seen if plan.mig else None)

    def cluster_checks(self, snapshot: ClusterSnapshot, nodes: list[NodeInfo]) -> list[Check]:
        return [cluster_checks.device_plugin_present(snapshot.plugins, nodes)]

    def runtime_class_users(self, snapshot: ClusterSnapshot, nodes: list[NodeInfo]) -> list[DaemonSetInfo]:
        return snapshot.plugins if nodes else []


DEVICE_PLUGIN = DevicePluginStack()
