"""The GPU Operator stack: NVIDIA's GPU Operator chart installed with the user's helm and the
values `gpuctl render --stack operator` prints (the driver and toolkit containers off where the
host layer installed them, CDI, the containerd config and socket of k3s/RKE2, tolerations of the
GPU taint and the GPU nodes' selector: templates/gpu-operator-values.yaml.j2). A node is ready
when the Operator's validator reports success and its GPUs are advertised; stuck operands are
diagnosed. Its nodes get their GPUs from the Operator's device plugin, so verify proves them as
the device plugin's and adds the Operator's own validation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.render_options import RenderedFile, RenderOptions, sharing_variables
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import ClusterOptions, Diagnosis, NodeReadiness, StackFindings, StackFlag
from gpuctl.core.stacks.chart import ChartStack
from gpuctl.core.stacks.device_plugin.stack import plugin_readiness
from gpuctl.core.stacks.operator import migration
from gpuctl.core.stacks.operator.checks import gpu_cluster_checks, operator_validation, read_operator
from gpuctl.core.stacks.operator.state import diagnose_operator_node, validator_state, validators_by_node
from gpuctl.core.stacks.settings import OperatorSettings, check_settings, distribution_of
from gpuctl.core.verify.model import OperatorView
from gpuctl.defaults import OPERATOR_NAMESPACE, OPERATOR_RELEASE
from gpuctl.errors import ConfigError
from gpuctl.helm import Chart
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.gpu_operator import (
    OperandPod,
    cluster_policy_states,
    gpu_cluster_states,
    kubelet_versions,
    list_operand_pods,
)
from gpuctl.kube.nodes import GFD_PRESENT_LABEL, list_nodes
from gpuctl.kube.pods import LogUnavailable, read_pod_log
from gpuctl.shell import command_line
from gpuctl.templating import render_template

if TYPE_CHECKING:
    from gpuctl.core.verify.model import Check
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.daemonsets import DaemonSetInfo
    from gpuctl.kube.nodes import NodeInfo

VALUES_FILE = "gpu-operator-values.yaml"  # as the helm command in its header names it
LOG_TAIL = 200
# k3s and RKE2 run their own containerd: the toolkit must edit their config template and reach
# their socket (NVIDIA's GPU Operator docs, "containerd" on K3s/RKE2; RKE2's own docs).
CONTAINERD_ENV: dict[str, tuple[tuple[str, str], ...]] = {
    "k3s": (
        ("CONTAINERD_CONFIG", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
        ("CONTAINERD_SOCKET", "/run/k3s/containerd/containerd.sock"),
    ),
    "rke2": (
        ("CONTAINERD_CONFIG", "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"),
        ("CONTAINERD_SOCKET", "/run/k3s/containerd/containerd.sock"),
    ),
}


def _log_reader(api_client: ApiClient) -> Callable[[OperandPod, str], str]:
    def read(pod: OperandPod, container: str) -> str:
        text = read_pod_log(api_client, pod.namespace, pod.name, container, tail_lines=LOG_TAIL)
        return "" if isinstance(text, LogUnavailable) else text

    return read


class OperatorStack(ChartStack):
    stack = Stack.OPERATOR
    allocation = Stack.DEVICE_PLUGIN
    render_alias = "gpu_operator"  # render's --gpu-operator
    flags = (
        StackFlag(
            "migrate",
            ("bootstrap",),
            "the GPU Operator's nodes are moved by the Operator; --migrate moves gpuctl's device plugin "
            "and DRA driver",
        ),
        *(
            StackFlag(
                parameter, ("render", "bootstrap"), "it configures NVIDIA's GPU Operator chart", only=True
            )
            for parameter in ("distribution", "operator_driver", "operator_toolkit")
        ),
    )
    own_files = (VALUES_FILE,)
    release = OPERATOR_RELEASE
    namespace = OPERATOR_NAMESPACE
    # The inventory's nodes get the GPU label before the chart goes in: NFD's worker runs on them only.
    inventory_node_selector = ((GFD_PRESENT_LABEL, "true"),)
    pinned_by_label = False  # its DaemonSets are the Operator's: its deploy label moves a node

    # -- a migration off its device plugin (migration.py) -----------------------------------------

    def mode_text(self, mode: str) -> str:
        return f"GPU Operator mode: {migration.MODE_TEXT.get(mode, mode)}"

    def installed_mode(self, api_client: ApiClient) -> str:
        return migration.installed_mode(api_client)

    def serves_nodes(self, mode: str) -> bool:
        return migration.serves_nodes(mode)

    def refuse_migration(self, mode: str, source: Stack, target: Stack) -> None:
        migration.refuse_operator(mode, source is self.stack, target)

    def leave_labels(self) -> dict[str, str]:
        return dict(migration.LEAVE_LABELS)

    def kept_on_leaving(self) -> tuple[str, ...]:
        return (migration.OPERATOR_CARRIED,)

    def driver_root_for_move(self, api_client: ApiClient) -> str:
        return migration.operator_driver_root(api_client)

    def remove_after_migration(self, api_client: ApiClient, options: ClusterOptions) -> tuple[str, ...]:
        del options
        return migration.disable_operator_device_plugin(api_client)

    def chart(self, options: RenderOptions) -> Chart:
        return options.operator.chart_ref()

    def render(self, options: RenderOptions) -> list[RenderedFile]:
        """gpu-operator-values.yaml: the device plugin's sharing, MIG and taint settings, and the
        Operator's own."""
        settings = options.operator
        check_settings(settings)
        values = render_template(
            "gpu-operator-values.yaml.j2",
            **sharing_variables(options),
            **self.chart_variables(options),
            driver_enabled=settings.driver_enabled,
            toolkit_enabled=settings.toolkit_enabled,
            distribution=settings.distribution,
            containerd_env=CONTAINERD_ENV.get(settings.distribution, ()),
            cdi=settings.cdi,
        )
        return [RenderedFile(VALUES_FILE, values, helm_values=True)]

    def prepare(self, api_client: ApiClient, options: ClusterOptions) -> ClusterOptions:
        """`--distribution auto`: from the kubelet versions of the cluster's nodes."""
        settings = options.render.operator
        prepared = super().prepare(api_client, options)  # the helm check comes before any read
        refuse_beside_gpu_cluster(api_client)
        if settings.distribution == "auto":
            settings = replace(settings, distribution=distribution_of(kubelet_versions(api_client)))
        return replace(prepared, render=replace(prepared.render, operator=settings))

    def pending(self, node: str, expected: int | None) -> NodeReadiness:
        return NodeReadiness(node, expected, validator="")

    def readiness(self, api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
        """The device plugin's readiness, and the Operator's validator on each node."""
        validators = validators_by_node(list_operand_pods(api_client, OPERATOR_NAMESPACE))
        return [
            replace(state, validator=validator_state(validators.get(state.node)))
            for state in plugin_readiness(api_client, expected)
        ]

    def diagnose(
        self, api_client: ApiClient, stuck: list[NodeReadiness], options: ClusterOptions, fallback: Diagnosis
    ) -> dict[str, Check | None]:
        """The operands that keep a node from validating; a validated node without its GPUs is the
        device plugin's side, which `fallback` (verify's checks) reads."""
        settings: OperatorSettings = options.render.operator
        pods = list_operand_pods(api_client, OPERATOR_NAMESPACE)
        labels = {node.name: node.labels for node in list_nodes(api_client)}
        reader = _log_reader(api_client)
        problems = {
            state.node: diagnose_operator_node(
                state.node,
                labels.get(state.node, {}),
                pods,
                namespace=OPERATOR_NAMESPACE,
                driver_enabled=settings.driver_enabled,
                toolkit_enabled=settings.toolkit_enabled,
                read_log=reader,
            )
            for state in stuck
        }
        rest = [state for state in stuck if problems[state.node] is None]
        return {**problems, **(fallback(rest) if rest else {})}

    def findings(self, api_client: ApiClient) -> StackFindings:
        policies = cluster_policy_states(api_client) or {}
        clusters = gpu_cluster_states(api_client) or {}
        beside = [
            f"GPUCluster {name} (state {state or 'unknown'}) exists beside the ClusterPolicy: the GPU "
            "Operator reconciles neither while both exist"
            for name, state in sorted(clusters.items())
            if policies
        ]
        return StackFindings(tuple(sorted(policies.items())), (*_other_device_plugins(api_client), *beside))

    def validation_checks(self, node: NodeInfo, snapshot: ClusterSnapshot) -> list[Check]:
        """The Operator's validator on the node, wherever the Operator runs (whatever the stack
        that installed it)."""
        view = view_of(snapshot)
        return [operator_validation(node.name, view)] if view else []

    def read_node_facts(
        self, api_client: ApiClient, daemonsets: list[DaemonSetInfo], nodes: list[str]
    ) -> object:
        return read_operator(api_client, daemonsets, nodes)

    def own_cluster_checks(self, snapshot: ClusterSnapshot) -> list[Check]:
        return gpu_cluster_checks(view_of(snapshot))


def view_of(snapshot: ClusterSnapshot) -> OperatorView | None:
    """The Operator's view the snapshot read, where the Operator runs."""
    found = snapshot.facts.get(Stack.OPERATOR)
    return found if isinstance(found, OperatorView) else None


def refuse_beside_gpu_cluster(api_client: ApiClient) -> None:
    """gpuctl's values deploy a ClusterPolicy (the chart's clusterPolicy.deployCR); the GPU
    Operator refuses to reconcile a ClusterPolicy and a GPUCluster side by side
    (controllers/clusterpolicy_controller.go: "ClusterPolicy and GPUCluster cannot co-exist")."""
    clusters = gpu_cluster_states(api_client) or {}
    if not clusters:
        return
    name = sorted(clusters)[0]
    raise ConfigError(
        f"GPUCluster {name} (nvidia.com/v1alpha1) exists: the GPU Operator runs in its DRA-based "
        "GPUCluster mode, and the ClusterPolicy --stack operator would create cannot coexist with it",
        hint="prove the DRA nodes as they are: `gpuctl verify`; or, to switch to ClusterPolicy mode, "
        f"`{command_line('kubectl', 'delete', 'gpuclusters.nvidia.com', name)}` first",
    )


def _other_device_plugins(api_client: ApiClient) -> list[str]:
    """A device plugin beside the Operator's (e.g. the device plugin stack applied before): two
    plugins register nvidia.com/gpu with each kubelet, and the last one to register wins."""
    return [
        f"device plugin DaemonSet {ds.namespace}/{ds.name} runs beside the GPU Operator's; remove it: "
        f"`{command_line('kubectl', '-n', ds.namespace, 'delete', 'daemonset', ds.name)}`"
        for ds in list_gpu_daemonsets(api_client)
        if ds.is_device_plugin and ds.namespace != OPERATOR_NAMESPACE
    ]


OPERATOR = OperatorStack()
