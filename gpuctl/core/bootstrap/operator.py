"""`bootstrap --phase cluster --stack operator`: install NVIDIA's GPU Operator chart with the user's
helm and the values `gpuctl render --stack operator` prints, then wait until the Operator's
validator reports success on every GPU node and the GPUs are advertised, diagnosing stuck operands.

The release is brought to the wanted chart and values by gpuctl.core.chart_release (skipped when
it already matches, so a second run writes nothing; a pending release put back first).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gpuctl.core.bootstrap.cluster import (
    ClusterOptions,
    ClusterResult,
    NodeReadiness,
    apply_gpu_taint,
    apply_node_labels,
    diagnose_with_verify,
    poll_until_ready,
    readiness,
)
from gpuctl.core.chart_release import HelmOutcome, chart_identity, install_release
from gpuctl.core.operator_values import OperatorSettings, distribution_of
from gpuctl.core.render import render_manifests
from gpuctl.core.verify.operator_state import diagnose_operator_node, validator_state, validators_by_node
from gpuctl.defaults import OPERATOR_NAMESPACE, OPERATOR_RELEASE
from gpuctl.helm import Helm
from gpuctl.kube.daemonsets import list_gpu_daemonsets
from gpuctl.kube.gpu_operator import OperandPod, cluster_policy_states, kubelet_versions, list_operand_pods
from gpuctl.kube.nodes import list_nodes
from gpuctl.kube.pods import LogUnavailable, read_pod_log
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

LOG_TAIL = 200


def install_operator_chart(
    helm: Helm, settings: OperatorSettings, values_yaml: str, *, check: bool
) -> HelmOutcome:
    """`helm upgrade --install` the Operator chart unless the release already matches."""
    return install_release(
        helm, OPERATOR_RELEASE, OPERATOR_NAMESPACE, settings.chart_ref(), values_yaml, check=check
    )


def _operator_readiness(api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
    validators = validators_by_node(list_operand_pods(api_client, OPERATOR_NAMESPACE))
    return [
        replace(state, validator=validator_state(validators.get(state.node)))
        for state in readiness(api_client, expected)
    ]


def _log_reader(api_client: ApiClient) -> Callable[[OperandPod, str], str]:
    def read(pod: OperandPod, container: str) -> str:
        text = read_pod_log(api_client, pod.namespace, pod.name, container, tail_lines=LOG_TAIL)
        return "" if isinstance(text, LogUnavailable) else text

    return read


def _diagnose(
    api_client: ApiClient, stuck: list[NodeReadiness], settings: OperatorSettings
) -> dict[str, Any]:
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
    # Validated but without its GPUs: the device plugin's side, which verify's checks read.
    rest = [state for state in stuck if problems[state.node] is None]
    return {**problems, **(diagnose_with_verify(api_client, rest) if rest else {})}


def wait_for_operator(
    api_client: ApiClient,
    expected: dict[str, int | None],
    settings: OperatorSettings,
    timeout_s: float,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> tuple[list[NodeReadiness], bool]:
    """Poll until every node's validator reports success and its GPUs are advertised."""
    return poll_until_ready(
        lambda: _operator_readiness(api_client, expected),
        lambda stuck: _diagnose(api_client, stuck, settings),
        timeout_s,
        on_progress,
    )


def resolved_settings(api_client: ApiClient, settings: OperatorSettings) -> OperatorSettings:
    """`--distribution auto`: from the kubelet versions of the cluster's nodes."""
    if settings.distribution != "auto":
        return settings
    return replace(settings, distribution=distribution_of(kubelet_versions(api_client)))


def apply_operator_layer(
    api_client: ApiClient,
    helm: Helm,
    options: ClusterOptions,
    expected: dict[str, int | None],
    *,
    label_nodes: bool,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> ClusterResult:
    """Label the GPU nodes, install the chart, taint the nodes, wait for the Operator's validation.

    The taint goes on only once helm has succeeded: a failed install (HelmError) then leaves no
    GPU node tainted against workloads with nothing installed to serve them, and a rerun starts
    from the same state. The labels go first, as the chart's node selectors need them; they only
    mark the nodes as GPU nodes."""
    started = time.monotonic()
    settings = resolved_settings(api_client, options.render.operator)
    chart_identity(settings.chart_ref())  # a local --chart that is no chart: exit 2 before any write
    render = replace(options.render, gpu_operator=True, operator=settings)
    values_yaml = render_manifests(render).files[0].content
    objects = apply_node_labels(api_client, options, expected, label_nodes=label_nodes)
    conflicted = any(obj.action == "conflict" for obj in objects)
    outcome = None if conflicted else install_operator_chart(helm, settings, values_yaml, check=options.check)
    taint = None if conflicted else apply_gpu_taint(api_client, options, sorted(expected))
    states = [NodeReadiness(name, count, validator="") for name, count in sorted(expected.items())]
    timed_out = False
    if not options.check and not conflicted:
        states, timed_out = wait_for_operator(api_client, expected, settings, options.timeout_s, on_progress)
    policies = cluster_policy_states(api_client) or {}
    return ClusterResult(
        options.check, objects, taint, tuple(states), timed_out,
        round(time.monotonic() - started, 2), helm=outcome, policy_states=tuple(sorted(policies.items())),
        warnings=tuple(_other_device_plugins(api_client)),
    )  # fmt: skip


def _other_device_plugins(api_client: ApiClient) -> list[str]:
    """A device plugin beside the Operator's (e.g. the device plugin stack applied before): two
    plugins register nvidia.com/gpu with each kubelet, and the last one to register wins."""
    return [
        f"device plugin DaemonSet {ds.namespace}/{ds.name} runs beside the GPU Operator's; remove it: "
        f"`{command_line('kubectl', '-n', ds.namespace, 'delete', 'daemonset', ds.name)}`"
        for ds in list_gpu_daemonsets(api_client)
        if ds.is_device_plugin and ds.namespace != OPERATOR_NAMESPACE
    ]
