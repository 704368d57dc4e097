"""Every manifest `gpuctl render` can produce, validated with kubernetes-validate --strict for each
supported Kubernetes version, then applied to the simulated cluster to show it does its job."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuctl.core.render import (
    SUPPORTED_KUBERNETES_VERSIONS,
    RenderOptions,
    parse_rbac_subject,
    render_manifests,
)
from gpuctl.core.stacks.device_plugin.stack import MPS_CAPABLE_LABEL
from tests.polling import wait_until
from tests.rendered import create_documents, validate_strictly

# Together these produce every template (tests/unit/test_render.py checks that none is left out).
MPS_DAEMON = "nvidia-device-plugin-mps-control-daemon"
OPTION_SETS = {
    "default": RenderOptions(),
    "time-slicing+mig-mixed": RenderOptions(sharing="time-slicing", replicas=4, mig_strategy="mixed"),
    "mps+single+selector": RenderOptions(
        sharing="mps", mig_strategy="single", node_selector=(("nvidia.com/gpu.present", "true"),)
    ),
    "mps+max-replicas+namespace": RenderOptions(sharing="mps", replicas=48, namespace="nvidia"),
    "rbac-serviceaccount": RenderOptions(rbac=True),
    "rbac-group": RenderOptions(rbac=True, rbac_subject=parse_rbac_subject("Group:gpu-admins")),
    "rbac-user": RenderOptions(rbac=True, rbac_subject=parse_rbac_subject("User:alice")),
    "verify-cronjob": RenderOptions(
        verify_cronjob=True, verify_namespace="gpu-proof", gpuctl_image="example.org/gpuctl:0.1.0"
    ),
    # Its NetworkPolicy, and its account's admission policy (rbac: one account per role).
    "verify-deployment": RenderOptions(
        rbac=True,
        verify_deployment=True,
        verify_namespace="gpu-proof",
        gpuctl_image="example.org/gpuctl:0.1.0",
    ),
    # The edges of what gpuctl.validation lets through: they must still validate.
    "edge-values": RenderOptions(
        sharing="time-slicing",
        replicas=3,
        image="registry.example:5000/nvidia/k8s-device-plugin@sha256:" + "0" * 64,
        node_selector=(("example.com/gpu-pool", ""), ("tier", "a.b_c-1")),
        rbac=True,
        rbac_subject=parse_rbac_subject("Group:system:masters"),
        verify_cronjob=True,
        verify_namespace="n" * 63,
        verify_schedule="0 6-18/2 * jan-jun mon-fri",
        gpuctl_image="localhost:5000/gpuctl:0.1.0_rc1",
    ),
}


def _kubernetes_documents(options: RenderOptions) -> list[dict[str, Any]]:
    result = render_manifests(options)
    return [doc for rendered in result.files for doc in yaml.safe_load_all(rendered.content) if doc]


def test_supported_versions_have_schemas() -> None:
    shipped = kubernetes_validate.utils.all_versions()
    for version in SUPPORTED_KUBERNETES_VERSIONS:
        assert any(available.startswith(f"{version}.") for available in shipped), version


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
@pytest.mark.parametrize("name", sorted(OPTION_SETS))
def test_rendered_manifests_validate_strictly(name: str, version: str) -> None:
    documents = _kubernetes_documents(OPTION_SETS[name])
    assert documents
    for document in documents:
        validate_strictly(document, version)


def test_mps_control_daemon_is_among_the_validated_manifests() -> None:
    """The MPS output (its privileged init container, Bidirectional mount, hostPaths) is in the
    strict validation above, for every MPS option set."""
    for name, options in OPTION_SETS.items():
        names = {
            doc["metadata"]["name"] for doc in _kubernetes_documents(options) if doc["kind"] == "DaemonSet"
        }
        assert (MPS_DAEMON in names) == (options.sharing == "mps"), name


def test_validation_catches_a_broken_manifest() -> None:
    """The check above can fail: a typo'd field is rejected in strict mode."""
    daemonset = next(doc for doc in _kubernetes_documents(RenderOptions()) if doc["kind"] == "DaemonSet")
    daemonset["spec"]["template"]["spec"]["tolerations"][0]["efect"] = "NoSchedule"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(daemonset, SUPPORTED_KUBERNETES_VERSIONS[-1], strict=True)


def test_rendered_plugin_brings_gpus_to_a_tainted_cluster(sim: Callable[..., Any]) -> None:
    """Applied to a cluster without a device plugin whose GPU nodes are already tainted, the
    rendered DaemonSet tolerates the taint, runs on every GPU node, and the GPUs appear."""
    from kubernetes.client import CoreV1Api, NodeV1Api

    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    cluster = sim({"devicePlugin": "absent", "podStartSeconds": 0.05,
                   "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8, "taints": [taint]}]})  # fmt: skip
    api_client = cluster.api_client()
    create_documents(api_client, _kubernetes_documents(RenderOptions(sharing="time-slicing")))
    assert NodeV1Api(api_client).read_runtime_class("nvidia").handler == "nvidia"
    core = CoreV1Api(api_client)
    # Two time-slicing replicas of each of the 8 GPUs, as NVIDIA's plugin advertises them.
    wait_until(lambda: _gpus(core) == {"gpu-0": "16", "gpu-1": "16"}, "both nodes to advertise 16 GPUs")


def _nodes_running(core: Any, selector: str) -> list[str]:
    pods = core.list_namespaced_pod("kube-system", label_selector=selector).items
    return sorted(pod.spec.node_name for pod in pods if pod.spec.node_name)


def test_rendered_mps_daemon_runs_only_on_mps_capable_nodes(sim: Callable[..., Any]) -> None:
    """Applied to a tainted cluster, the MPS control daemon tolerates the taint and follows the
    nvidia.com/mps.capable label (GPU feature discovery's, which it sets on every node whose plugin
    reads an MPS config), and the plugin advertises the replicas once the daemon runs."""
    from kubernetes.client import AppsV1Api, CoreV1Api

    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    cluster = sim({"devicePlugin": "absent", "podStartSeconds": 0.05, "nodes": [
        {"name": "mps-{i}", "count": 2, "gpus": 4, "taints": [taint], "labels": {MPS_CAPABLE_LABEL: "true"}},
        {"name": "gpu-{i}", "count": 1, "gpus": 4, "taints": [taint]},
    ]})  # fmt: skip
    api_client = cluster.api_client()
    create_documents(api_client, _kubernetes_documents(RenderOptions(sharing="mps", replicas=4)))
    core = CoreV1Api(api_client)

    def placed() -> tuple[list[str], list[str]]:
        return (
            _nodes_running(core, f"name={MPS_DAEMON}"),
            _nodes_running(core, "name=nvidia-device-plugin-ds"),
        )

    everywhere = ["gpu-0", "mps-0", "mps-1"]
    wait_until(lambda: placed() == (everywhere, everywhere), "the pods to be placed")
    wait_until(lambda: _gpus(core) == {"gpu-0": "16", "mps-0": "16", "mps-1": "16"}, "replicas advertised")
    labels = core.read_node("gpu-0").metadata.labels
    assert labels[MPS_CAPABLE_LABEL] == "true"
    assert labels["nvidia.com/gpu.sharing-strategy"] == "mps"
    # The control daemon is a long-running daemon of the plugin's image, not a second plugin:
    # without the plugin DaemonSet no node advertises GPUs, while the daemons keep running.
    AppsV1Api(api_client).delete_namespaced_daemon_set("nvidia-device-plugin-daemonset", "kube-system")
    # the kubelet keeps a resource its plugin no longer serves, at 0
    wait_until(lambda: _gpus(core) == {"gpu-0": "0", "mps-0": "0", "mps-1": "0"}, "GPUs withdrawn")
    daemons = core.list_namespaced_pod(
        "kube-system", label_selector="name=nvidia-device-plugin-mps-control-daemon"
    )
    assert [pod.status.phase for pod in daemons.items] == ["Running"] * 3


def _gpus(core: Any) -> dict[str, str | None]:
    return {
        node.metadata.name: (node.status.allocatable or {}).get("nvidia.com/gpu")
        for node in core.list_node().items
    }


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
@pytest.mark.parametrize("extras", ["plain", "every-option"])
def test_verification_pod_validates_strictly(version: str, extras: str) -> None:
    """The pod `gpuctl verify` creates, with and without every option that shapes it."""
    from gpuctl.core.verify.model import Toleration, VerifyOptions
    from gpuctl.core.verify.pod_manifest import new_run_id, verification_pod
    from gpuctl.kube.nodes import NodeInfo, Taint

    node = NodeInfo(
        name="gpu-0",
        labels={"kubernetes.io/hostname": "gpu-0.example"},
        annotations={},
        taints=(Taint("nvidia.com/gpu", "present", "NoSchedule"), Taint("dedicated", "", "NoExecute")),
        ready=True,
        ready_reason="KubeletReady",
        ready_message="",
        unschedulable=False,
        gpu_capacity=8,
        gpu_allocatable=8,
    )
    options = VerifyOptions()
    if extras == "every-option":
        options = VerifyOptions(
            image="registry.example/cuda:12.4.1-base",
            image_pull_secret="registry-credentials",
            runtime_class="nvidia",
            tolerations=(
                Toleration("dedicated", "Exists", "", "NoExecute"),
                Toleration("x", "Equal", "y", ""),
            ),
        )
    pod = verification_pod(node, 8, new_run_id(), options)
    kubernetes_validate.validate(pod, version, strict=True)
    if extras == "every-option":
        assert pod["spec"]["runtimeClassName"] == "nvidia"
        assert pod["spec"]["imagePullSecrets"] == [{"name": "registry-credentials"}]
