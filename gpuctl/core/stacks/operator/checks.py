"""An Operator-managed cluster: NVIDIA's GPU Operator runs its validator DaemonSet. verify reads
the Operator's own per-node validation (the validator pod's init containers) and its ClusterPolicy
state, and reports them next to its own checks: a validator not reporting success is a warning
(gpuctl's own checks decide whether the GPUs work).

In its GPUCluster mode (26.7+) the Operator deploys NVIDIA's DRA driver instead of the device
plugin, so its nodes are proven through DRA claims (they publish ResourceSlices); its validator
(nvidia-dra-validator, pods labelled app=nvidia-operator-validator) is read the same way, and the
GPUCluster's own status is a cluster check, `operator.gpucluster`: a GPUCluster beside a
ClusterPolicy is a failure, since both of the Operator's controllers then refuse to reconcile."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.stacks.operator.state import READY, validator_state, validators_by_node
from gpuctl.core.verify.model import Check, OperatorView, failed, passed, warned
from gpuctl.kube.gpu_operator import (
    VALIDATOR,
    cluster_policy_states,
    list_operand_pods,
    read_gpu_clusters,
)
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.daemonsets import DaemonSetInfo

VALIDATOR_COMPONENT = "GPU Operator validator"  # gpuctl.kube.daemonsets' name for its DaemonSet


def read_operator(
    api_client: ApiClient, daemonsets: list[DaemonSetInfo], nodes: list[str]
) -> OperatorView | None:
    """The Operator's view, or None when no validator DaemonSet says the Operator manages GPUs
    (then no extra request is made)."""
    validator_sets = [ds for ds in daemonsets if ds.component == VALIDATOR_COMPONENT or ds.name == VALIDATOR]
    if not validator_sets:
        return None
    namespace = validator_sets[0].namespace
    pods = validators_by_node(list_operand_pods(api_client, namespace))
    states = tuple((node, validator_state(pods.get(node))) for node in sorted(nodes))
    policies = cluster_policy_states(api_client) or {}
    gpu_clusters = read_gpu_clusters(api_client) or ()
    return OperatorView(namespace, states, tuple(sorted(policies.items())), gpu_clusters)


GPU_CLUSTER_CHECK = "operator.gpucluster"


def gpu_cluster_checks(view: OperatorView | None) -> list[Check]:
    """`operator.gpucluster`, where a GPUCluster exists: its status, or the conflict with a
    ClusterPolicy (the GPUCluster reports PrerequisiteNotMet, the ClusterPolicy ReconcileFailed)."""
    if view is None or not view.gpu_clusters:
        return []
    gpu_cluster = view.gpu_clusters[0]
    kind = "gpuclusters.nvidia.com"
    if view.cluster_policies:
        policy = view.cluster_policies[0][0]
        keep_dra = command_line("kubectl", "delete", "clusterpolicies.nvidia.com", policy)
        keep_plugin = command_line("kubectl", "delete", kind, gpu_cluster.name)
        return [
            failed(
                GPU_CLUSTER_CHECK,
                f"GPUCluster {gpu_cluster.name} and ClusterPolicy {policy} both exist: the GPU Operator "
                "reconciles neither (a ClusterPolicy and a GPUCluster cannot coexist)",
                f"keep one mode: for DRA (GPUCluster) `{keep_dra}`, "
                f"for the device plugin (ClusterPolicy) `{keep_plugin}`",
            )
        ]
    if gpu_cluster.ready:
        return [passed(GPU_CLUSTER_CHECK, f"GPUCluster {gpu_cluster.name} is ready (GPUs through DRA)")]
    why = f": {gpu_cluster.reason}: {gpu_cluster.message}" if gpu_cluster.reason else ""
    # A warning, as for the validator: gpuctl's own checks decide whether the GPUs work.
    return [
        warned(
            GPU_CLUSTER_CHECK,
            f"GPUCluster {gpu_cluster.name} is {gpu_cluster.state or 'without a state'}{why}",
            f"`{command_line('kubectl', 'describe', kind, gpu_cluster.name)}` and "
            f"`{command_line('kubectl', '-n', view.namespace, 'get', 'pods', '-o', 'wide')}`",
        )
    ]


def operator_validation(node: str, view: OperatorView) -> Check:
    state = view.state_of(node)
    if state == READY:
        return passed("operator.validation", "the GPU Operator's validator reports success")
    on_node = f"spec.nodeName={node}"
    operands = command_line(
        "kubectl", "-n", view.namespace, "get", "pods", "-o", "wide", "--field-selector", on_node
    )
    return warned(
        "operator.validation",
        f"the GPU Operator's validator on the node: {state}",
        f"`{operands}`; `gpuctl bootstrap --phase cluster --stack operator` diagnoses stuck operands",
    )
