"""An Operator-managed cluster: NVIDIA's GPU Operator runs its validator DaemonSet. verify reads
the Operator's own per-node validation (the validator pod's init containers) and its ClusterPolicy
state, and reports them next to its own checks: a validator not reporting success is a warning
(gpuctl's own checks decide whether the GPUs work)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.verify.model import Check, OperatorView, passed, warned
from gpuctl.core.verify.operator_state import READY, validator_state, validators_by_node
from gpuctl.kube.gpu_operator import VALIDATOR, cluster_policy_states, list_operand_pods
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
    return OperatorView(namespace, states, tuple(sorted(policies.items())))


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
