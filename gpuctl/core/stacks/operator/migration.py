"""Moving GPU nodes off the GPU Operator's device plugin onto NVIDIA's DRA driver.

The Operator (ClusterPolicy mode, gpuctl.defaults OPERATOR_CHART_VERSION) puts every operand on a
GPU node through a node label `nvidia.com/gpu.deploy.<operand>=true`, set only where the node
has none (controllers/state_manager.go gpuStateLabels), and each operand's DaemonSet selects its
label: a node labelled `nvidia.com/gpu.deploy.device-plugin=false` keeps the Operator's other
operands (driver, container toolkit, validator, GPU feature discovery, DCGM) and loses its device
plugin alone. That is the per-node switch a migration moves: the standalone DRA driver chart then
serves the node, as `bootstrap --stack dra` installs it.

Why not the Operator's own DRA driver: 26.7 deploys it only in its GPUCluster mode
(nvidia.com/v1alpha1), which cannot coexist with a ClusterPolicy (gpucluster_controller.go
validatePrerequisites), so it cannot take nodes over one at a time from a running ClusterPolicy.
Once the last node has moved, the ClusterPolicy's device plugin is switched off
(`spec.devicePlugin.enabled: false`), so a GPU node that joins later is not served twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call
from gpuctl.kube.gpu_operator import (
    POLICY_GROUP,
    POLICY_PLURAL,
    POLICY_VERSION,
    cluster_policy_states,
    operator_mode,
)
from gpuctl.kube.raw import JsonDict, dig, list_json
from gpuctl.kube.rest_requests import MERGE_PATCH, request_json

if TYPE_CHECKING:
    from gpuctl.core.stacks import Stack
    from gpuctl.kube.client import ApiClient

DEVICE_PLUGIN_DEPLOY_LABEL = "nvidia.com/gpu.deploy.device-plugin"
# The chart value nvidiaDriverRoot where the Operator's driver container installed the driver (the
# DRA driver's templates/kubeletplugin.yaml: "the operator-provided driver" is mounted onto the host).
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"
POLICY_PATH = f"/apis/{POLICY_GROUP}/{POLICY_VERSION}/{POLICY_PLURAL}/{{name}}"
OPERATOR_CARRIED = (
    "the GPU Operator's driver, container toolkit, validator, GPU feature discovery and DCGM: kept on "
    f"every node; only its device plugin leaves a moved node ({DEVICE_PLUGIN_DEPLOY_LABEL}=false)"
)


# `gpuctl status`: the Operator's mode in words.
MODE_TEXT = {
    "ClusterPolicy": "ClusterPolicy (device plugin)",
    "GPUCluster": "GPUCluster (DRA driver)",
    "both": "ClusterPolicy and GPUCluster both exist: the Operator reconciles neither",
}


def installed_mode(api_client: ApiClient) -> str:
    """The Operator's mode in the cluster (gpuctl.kube.gpu_operator.operator_mode; "" when absent)."""
    return operator_mode(api_client)


def serves_nodes(mode: str) -> bool:
    """Its device plugin serves the GPU nodes a move takes: a ClusterPolicy's."""
    return mode == "ClusterPolicy"


def refuse_operator(mode: str, leaving: bool, target: Stack) -> None:
    """Exit 2 where the Operator serves the cluster in a way --migrate cannot move; `leaving`: the
    nodes move off its device plugin."""
    if not mode or (mode == "ClusterPolicy" and leaving):
        return
    if mode == "ClusterPolicy":
        raise ConfigError(
            f"the GPU Operator (ClusterPolicy) is installed: --stack {target.value} --migrate would "
            "run gpuctl's device plugin beside the Operator's",
            hint="to give nodes back to the Operator's device plugin, set spec.devicePlugin.enabled "
            f"in its ClusterPolicy and remove the label ({DEVICE_PLUGIN_DEPLOY_LABEL}-) from them",
        )
    raise ConfigError(
        f"the GPU Operator ({mode}) serves this cluster's GPUs: --migrate moves nodes off the "
        "Operator's device plugin (ClusterPolicy mode) only; in GPUCluster mode the Operator runs "
        "its own DRA driver already",
        hint="leave the GPUCluster as it is, or move its nodes with the Operator itself",
    )


def operator_driver_root(api_client: ApiClient) -> str:
    """Where the DRA driver finds the NVIDIA driver on the Operator's nodes: under the root the
    Operator's driver container mounts on the host when a ClusterPolicy runs the driver
    (`spec.driver.enabled`, true unless set false), else "" (the host's own root)."""
    with api_call("list", POLICY_PLURAL):
        items = list_json(api_client, f"/apis/{POLICY_GROUP}/{POLICY_VERSION}/{POLICY_PLURAL}")
    runs_driver = any(dig(item, "spec", "driver", "enabled", default=True) is not False for item in items)
    return OPERATOR_DRIVER_ROOT if runs_driver else ""


# The node labels that take a node off the Operator's device plugin, besides the stack label itself.
LEAVE_LABELS = {DEVICE_PLUGIN_DEPLOY_LABEL: "false"}


def disable_operator_device_plugin(api_client: ApiClient) -> tuple[str, ...]:
    """Switch the device plugin off in every ClusterPolicy; what was changed, in words."""
    changed = []
    for name in sorted(cluster_policy_states(api_client) or {}):
        patch: JsonDict = {"spec": {"devicePlugin": {"enabled": False}}}
        with api_call("patch", f"clusterpolicy {name}"):
            request_json(api_client, "PATCH", POLICY_PATH, body=patch, content_type=MERGE_PATCH, name=name)
        changed.append(f"clusterpolicy {name}: devicePlugin.enabled=false")
    return tuple(changed)
