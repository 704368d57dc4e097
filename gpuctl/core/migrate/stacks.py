"""What a migration does to the stacks themselves, around the nodes it moves:

- `hold_old_stack`: every GPU node gets the stack label of the stack serving it now, and the old
  stack's plugin DaemonSets select that label, so relabelling one node moves that node alone;
- `install_new_stack`: the new stack as `bootstrap --phase cluster --stack NEW` installs it,
  rendered to select the new label (so it serves no node until one is moved);
- `serves` / `has_left`: the new stack serves a node (its readiness) and the old has left it (no
  plugin pod, and nothing else of it: ClusterStack.still_serving);
- `remove_old_stack`: once the last node has moved, the old stack goes as it says
  (ClusterStack.remove_after_migration).

What each stack does on leaving or taking a node is its own (the migration part of
gpuctl.core.stacks.base.ClusterStack); this module runs it for whichever stacks the plan names.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.migrate.model import STACK_LABEL
from gpuctl.core.render import render_stack
from gpuctl.core.stacks.base import DAEMONSET_PATH
from gpuctl.core.stacks.registry import stack_for
from gpuctl.errors import UnreachableError
from gpuctl.kube import objects
from gpuctl.kube.api_errors import RBAC_HINT
from gpuctl.kube.apply import Applied, Applier
from gpuctl.kube.client import api_call
from gpuctl.kube.daemonsets import daemonset_pods, list_gpu_daemonsets
from gpuctl.kube.raw import JsonDict, dig
from gpuctl.kube.rest_requests import MERGE_PATCH, get_json, request_json
from gpuctl.kube.taints import NodeTaintWriter

if TYPE_CHECKING:
    from gpuctl.core.chart_release import HelmOutcome
    from gpuctl.core.stacks import Stack
    from gpuctl.core.stacks.base import ClusterOptions
    from gpuctl.kube.client import ApiClient

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
    old = stack_for(source)
    if not old.pinned_by_label:
        return tuple(written)  # its DaemonSets are not gpuctl's: its leave_labels move a node
    for daemonset in old.plugin_daemonsets(list_gpu_daemonsets(api_client)):
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
    options: ClusterOptions, target: Stack, feature_gates: tuple[str, ...] = (), driver_root: str = ""
) -> ClusterOptions:
    """The new stack's options: its pods run only on the nodes labelled for it, with what carries
    the old stack's sharing over and the driver root the old stack's driver lives under."""
    selector = (*(pair for pair in options.render.node_selector if pair[0] != STACK_LABEL),
                (STACK_LABEL, target.value))  # fmt: skip
    render = replace(options.render, stack=target, node_selector=selector)
    return replace(options, render=stack_for(target).moved_onto(render, feature_gates, driver_root))


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
    """Why pods asking for nvidia.com/gpu would not be served on the moved nodes ("" when they would)."""
    return stack_for(target).extended_resource_problem(api_client)


def has_left(api_client: ApiClient, stack: Stack, node: str) -> str:
    """What of `stack` still serves `node` ("" when nothing does)."""
    old = stack_for(stack)
    plugins = old.plugin_daemonsets(list_gpu_daemonsets(api_client))
    pod = daemonset_pods(api_client, plugins).get(node)
    if pod is not None:
        return f"its {stack.value} pod {pod.namespace}/{pod.name} is still there ({pod.phase})"
    return old.still_serving(api_client, node)


def remove_old_stack(api_client: ApiClient, source: Stack, options: ClusterOptions) -> tuple[str, ...]:
    """The old stack, gone as it says (ClusterStack.remove_after_migration); what was removed, in words."""
    return stack_for(source).remove_after_migration(api_client, options)
