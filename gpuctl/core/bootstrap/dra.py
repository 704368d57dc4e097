"""`bootstrap --phase cluster --stack dra`: install NVIDIA's DRA driver chart with the user's helm
and the values `gpuctl render --stack dra` prints, then wait until every GPU node publishes its
GPUs in a ResourceSlice and runs the driver's kubelet plugin, diagnosing the nodes that do not
(verify's read-only DRA checks). Helm is handled as for the GPU Operator: the upgrade is skipped
when the release already runs the chart with these values, a pending release is put back first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.bootstrap.cluster import (
    ClusterOptions,
    ClusterResult,
    NodeReadiness,
    apply_gpu_taint,
    apply_node_labels,
    diagnose_with_verify,
    poll_until_ready,
)
from gpuctl.core.chart_release import chart_identity, install_release
from gpuctl.core.dra_values import DraSettings
from gpuctl.core.render import render_manifests
from gpuctl.core.verify.dra import claimable
from gpuctl.defaults import DRA_DRIVER_NAMESPACE, DRA_DRIVER_RELEASE
from gpuctl.kube.daemonsets import daemonset_pods, list_gpu_daemonsets
from gpuctl.kube.dra import read_inventory

if TYPE_CHECKING:
    from gpuctl.helm import Helm
    from gpuctl.kube.client import ApiClient


def dra_readiness(api_client: ApiClient, expected: dict[str, int | None]) -> list[NodeReadiness]:
    """Per node: the GPUs its ResourceSlices offer claims, and whether its kubelet plugin is ready."""
    published = read_inventory(api_client).nodes
    plugins = [ds for ds in list_gpu_daemonsets(api_client) if ds.is_dra_plugin]
    pods = daemonset_pods(api_client, plugins)
    states = []
    for name, count in sorted(expected.items()):
        pod = pods.get(name)
        node = published.get(name)
        ready = bool(pod and pod.ready and pod.phase == "Running")
        states.append(NodeReadiness(name, count, claimable(node) if node else 0, ready))
    return states


def wait_for_dra(
    api_client: ApiClient,
    expected: dict[str, int | None],
    timeout_s: float,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> tuple[list[NodeReadiness], bool]:
    """Poll until every node publishes its GPUs in ResourceSlices, or `timeout_s` passes."""
    return poll_until_ready(
        lambda: dra_readiness(api_client, expected),
        lambda stuck: diagnose_with_verify(api_client, stuck),
        timeout_s,
        on_progress,
    )


def apply_dra_layer(
    api_client: ApiClient,
    helm: Helm,
    options: ClusterOptions,
    expected: dict[str, int | None],
    *,
    label_nodes: bool,
    on_progress: Callable[[list[NodeReadiness]], None] | None = None,
) -> ClusterResult:
    """Label the GPU nodes, install the DRA driver's chart, taint the nodes (only once helm has
    succeeded, as for the GPU Operator), wait for the ResourceSlices."""
    started = time.monotonic()
    settings = options.render.dra or DraSettings()
    chart = settings.chart_ref()
    chart_identity(chart)  # a local --chart that is no chart: exit 2 before any write
    render = replace(options.render, gpu_operator=False, rbac=False, verify_cronjob=False, dra=settings)
    values_yaml = render_manifests(render).files[0].content
    objects = apply_node_labels(api_client, options, expected, label_nodes=label_nodes)
    conflicted = any(obj.action == "conflict" for obj in objects)
    outcome, taint = None, None
    if not conflicted:
        outcome = install_release(
            helm, DRA_DRIVER_RELEASE, DRA_DRIVER_NAMESPACE, chart, values_yaml, check=options.check
        )
        taint = apply_gpu_taint(api_client, options, sorted(expected))
    states = [NodeReadiness(name, count) for name, count in sorted(expected.items())]
    timed_out = False
    if not options.check and not conflicted:
        states, timed_out = wait_for_dra(api_client, expected, options.timeout_s, on_progress)
    return ClusterResult(
        options.check, objects, taint, tuple(states), timed_out,
        round(time.monotonic() - started, 2), helm=outcome, stack="dra",
    )  # fmt: skip
