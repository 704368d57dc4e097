"""What a migration does to the stacks themselves, around the nodes it moves:

- `hold_old_stack`: every GPU node gets the stack label of the stack serving it now, and the old
  stack's plugin DaemonSets select that label, so relabelling one node moves that node alone;
- `install_new_stack`: the new stack as `bootstrap --phase cluster --stack NEW` installs it,
  rendered to select the new label (so it serves no node until one is moved);
- `serves` / `has_left`: the new stack serves a node (its ResourceSlices published, or its
  `nvidia.com/gpu` allocatable) and the old has left it (no plugin pod, no slice, no capacity);
- `remove_old_stack`: once the last node has moved, the old stack's DaemonSets (device plugin),
  Helm release (DRA driver) or the GPU Operator's device plugin (its ClusterPolicy's switch) go.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.migrate.model import STACK_LABEL
from gpuctl.core.migrate.operator import disable_operator_device_plugin
from gpuctl.core.migrate.plan import stack_daemonsets
from gpuctl.core.render import render_stack
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.registry import stack_for
from gpuctl.defaults import DRA_DRIVER_NAMESPACE, DRA_DRIVER_RELEASE, GPU_RESOURCE
from gpuctl.errors import UnreachableError
from gpuctl.kube import objects
from gpuctl.kube.api_errors import RBAC_HINT
from gpuctl.kube.apply import Applied, Applier
from gpuctl.kube.client import api_call
from gpuctl.kube.daemonsets import daemonset_pods, list_gpu_daemonsets
from gpuctl.kube.dra import read_inventory
from gpuctl.kube.nodes import node_from_json
from gpuctl.kube.raw import JsonDict, dig
from gpuctl.kube.rest_requests import MERGE_PATCH, get_json, request_json
from gpuctl.kube.taints import NodeTaintWriter

if TYPE_CHECKING:
    from gpuctl.core.chart_release import HelmOutcome
    from gpuctl.core.stacks.base import ClusterOptions
    from gpuctl.kube.client import ApiClient

DAEMONSET_PATH = "/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"
POLL_S = 1.0


def label_node(api_client: ApiClient, node: str, stack: Stack, more: dict[str, str] | None = None) -> bool:
    """Set the node's stack label (and `more` labels); False when it has them all already."""
    wanted = {STACK_LABEL: stack.value, **(more or {})}

    def plan(current: JsonDict) -> JsonDict | None:
        labels = dig(current, "metadata", "labels", default={}) or {}
        if all(labels.get(key) == value for key, value in wanted.items()):
            return None
        return {"metadata": {"labels": wanted}}

    current = objects.read_node(api_client, node)
    if current is None:
        raise UnreachableError(f"node {node} not found", hint="`kubectl get nodes` lists the cluster's nodes")
    write = NodeTaintWriter(api_client, dry_run=False).write_fields(current, plan)
    if write.error:
        raise UnreachableError(f"label node {node}: {write.error}", hint=RBAC_HINT)
    return write.written


def hold_old_stack(api_client: ApiClient, source: Stack, unlabelled: list[str]) -> tuple[str, ...]:
    """Label the nodes the old stack serves, then make its plugin DaemonSets select that label
    (their pods restart once, as on any template change; running workloads keep their GPUs).
    What was written, in words."""
    written = [f"node {node}: {STACK_LABEL}={source.value}" for node in unlabelled
               if label_node(api_client, node, source)]  # fmt: skip
    if source is Stack.OPERATOR:
        return tuple(written)  # its DaemonSets are the Operator's: its deploy label moves a node
    for daemonset in stack_daemonsets(list_gpu_daemonsets(api_client), source):
        with api_call("get", f"daemonset {daemonset.namespace}/{daemonset.name}"):
            current = get_json(api_client, DAEMONSET_PATH, namespace=daemonset.namespace, name=daemonset.name)
        if dig(current, "spec", "template", "spec", "nodeSelector", STACK_LABEL, default="") == source.value:
            continue
        patch = {"spec": {"template": {"spec": {"nodeSelector": {STACK_LABEL: source.value}}}}}
        with api_call("patch", f"daemonset {daemonset.namespace}/{daemonset.name}"):
            request_json(
                api_client, "PATCH", DAEMONSET_PATH, body=patch, content_type=MERGE_PATCH,
                namespace=daemonset.namespace, name=daemonset.name,
            )  # fmt: skip
        written.append(f"daemonset {daemonset.namespace}/{daemonset.name}: nodeSelector {STACK_LABEL}")
    return tuple(written)


def wait_until_serving(
    api_client: ApiClient, stack: Stack, nodes: dict[str, int | None], timeout_s: float
) -> str:
    """Wait until `stack` serves each of `nodes` with its GPUs (after its plugin pods restarted);
    the nodes it still does not serve once `timeout_s` has passed ("" when none)."""
    deadline = time.monotonic() + timeout_s
    while True:
        waiting = [state.node for state in stack_for(stack).readiness(api_client, nodes) if not state.ready]
        if not waiting or time.monotonic() >= deadline:
            return ", ".join(waiting)
        time.sleep(POLL_S)


def new_stack_options(
    options: ClusterOptions, target: Stack, dra_gates: tuple[str, ...] = (), dra_driver_root: str = ""
) -> ClusterOptions:
    """The new stack's options: its pods run only on the nodes labelled for it; on DRA, with the
    feature gates that carry the old stack's sharing over, and the driver root the GPU Operator's
    driver lives under."""
    selector = (*(pair for pair in options.render.node_selector if pair[0] != STACK_LABEL),
                (STACK_LABEL, target.value))  # fmt: skip
    dra = options.render.dra
    gates = (*dra.feature_gates, *(gate for gate in dra_gates if gate not in dra.feature_gates))
    dra = replace(dra, driver_root=dra_driver_root) if dra_driver_root else dra
    render = replace(
        options.render, stack=target, node_selector=selector, dra=replace(dra, feature_gates=gates)
    )
    return replace(options, render=render)


def install_new_stack(
    api_client: ApiClient, options: ClusterOptions
) -> tuple[tuple[Applied, ...], HelmOutcome | None]:
    """Apply the new stack's objects and install its chart, as the cluster phase does."""
    stack = stack_for(options.stack)
    options = stack.prepare(api_client, options)
    rendered = render_stack(options.render)
    applier = Applier(api_client, dry_run=options.check, force_conflicts=options.force_conflicts)
    applied = tuple(applier.apply(manifest) for manifest in stack.manifests(rendered))
    if any(obj.action == "conflict" for obj in applied):
        return applied, None
    return applied, stack.install(options, rendered)


def extended_resource_problem(api_client: ApiClient, target: Stack) -> str:
    """Why pods asking for nvidia.com/gpu would not be served on DRA nodes ("" when they would)."""
    if target is not Stack.DRA:
        return ""
    mapped = read_inventory(api_client).extended_resource
    if mapped == GPU_RESOURCE:
        return ""
    return (
        f"the DRA driver's GPU DeviceClass maps {mapped or 'no extended resource'}, not {GPU_RESOURCE}: "
        "pods that request it would not schedule on moved nodes"
    )


def has_left(api_client: ApiClient, stack: Stack, node: str) -> str:
    """What of `stack` still serves `node` ("" when nothing does)."""
    plugins = stack_daemonsets(list_gpu_daemonsets(api_client), stack)
    pod = daemonset_pods(api_client, plugins).get(node)
    if pod is not None:
        return f"its {stack.value} pod {pod.namespace}/{pod.name} is still there ({pod.phase})"
    if stack is Stack.DRA:
        if node in read_inventory(api_client).nodes:
            return "its ResourceSlice is still published"
        return ""
    raw = objects.read_node(api_client, node)
    allocatable = node_from_json(raw).gpu_allocatable if raw is not None else 0
    return f"it still advertises {allocatable} allocatable {GPU_RESOURCE}" if allocatable else ""


def remove_old_stack(api_client: ApiClient, source: Stack, options: ClusterOptions) -> tuple[str, ...]:
    """The old stack, gone: its DRA driver release uninstalled, or its device plugin DaemonSets
    (and the MPS control daemon) deleted. What was removed, in words."""
    if source is Stack.OPERATOR:
        return disable_operator_device_plugin(api_client)
    if source is Stack.DRA:
        helm = options.helm
        if helm is None or helm.release(DRA_DRIVER_RELEASE, DRA_DRIVER_NAMESPACE) is None:
            return ()
        helm.uninstall(DRA_DRIVER_RELEASE, DRA_DRIVER_NAMESPACE)
        return (f"helm release {DRA_DRIVER_NAMESPACE}/{DRA_DRIVER_RELEASE}",)
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
