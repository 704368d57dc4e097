"""Every manifest `gpuctl render` can produce, validated with kubernetes-validate --strict for each
supported Kubernetes version, then applied to the simulated cluster to show it does its job."""

from __future__ import annotations

import time
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

# Together these produce every template (tests/unit/test_render.py checks that none is left out).
OPTION_SETS = {
    "default": RenderOptions(),
    "time-slicing+mig-mixed": RenderOptions(sharing="time-slicing", replicas=4, mig_strategy="mixed"),
    "mps+single+selector": RenderOptions(
        sharing="mps", mig_strategy="single", node_selector=(("nvidia.com/gpu.present", "true"),)
    ),
    "rbac-serviceaccount": RenderOptions(rbac=True),
    "rbac-group": RenderOptions(rbac=True, rbac_subject=parse_rbac_subject("Group:gpu-admins")),
    "rbac-user": RenderOptions(rbac=True, rbac_subject=parse_rbac_subject("User:alice")),
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
        kubernetes_validate.validate(document, version, strict=True)


def test_validation_catches_a_broken_manifest() -> None:
    """The check above can fail: a typo'd field is rejected in strict mode."""
    daemonset = next(doc for doc in _kubernetes_documents(RenderOptions()) if doc["kind"] == "DaemonSet")
    daemonset["spec"]["template"]["spec"]["tolerations"][0]["efect"] = "NoSchedule"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(daemonset, SUPPORTED_KUBERNETES_VERSIONS[-1], strict=True)


def test_rendered_plugin_brings_gpus_to_a_tainted_cluster(sim: Callable[..., Any]) -> None:
    """Applied to a cluster without a device plugin whose GPU nodes are already tainted, the
    rendered DaemonSet tolerates the taint, runs on every GPU node, and the GPUs appear."""
    from kubernetes.client import AppsV1Api, CoreV1Api, NodeV1Api

    taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    cluster = sim({"devicePlugin": "absent", "podStartSeconds": 0.05,
                   "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8, "taints": [taint]}]})  # fmt: skip
    api_client = cluster.api_client()
    for document in _kubernetes_documents(RenderOptions(sharing="time-slicing")):
        if document["kind"] == "DaemonSet":
            AppsV1Api(api_client).create_namespaced_daemon_set("kube-system", document)
        elif document["kind"] == "ConfigMap":
            CoreV1Api(api_client).create_namespaced_config_map("kube-system", document)
        else:
            NodeV1Api(api_client).create_runtime_class(document)
    assert NodeV1Api(api_client).read_runtime_class("nvidia").handler == "nvidia"
    core = CoreV1Api(api_client)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        capacity = [(node.status.capacity or {}).get("nvidia.com/gpu") for node in core.list_node().items]
        if capacity == ["8", "8"]:
            break
        time.sleep(0.05)
    assert capacity == ["8", "8"]
