"""Create what `gpuctl render` printed in a (simulated) cluster, as `kubectl create -f` would."""

from __future__ import annotations

from typing import Any

import yaml

from gpuctl.core.render import POLICIES_SINCE, RenderOptions, render_manifests


def validate_strictly(document: dict[str, Any], version: str) -> None:
    """kubernetes-validate --strict for `version`, where that version serves the kind: the
    ValidatingAdmissionPolicies are GA from 1.30, and on 1.29 that object alone is refused
    (docs/rbac.md)."""
    import kubernetes_validate

    if document["kind"].startswith("ValidatingAdmissionPolicy") and version < POLICIES_SINCE:
        return
    kubernetes_validate.validate(document, version, strict=True)


def rendered_documents(options: RenderOptions) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(render_manifests(options).as_stream()) if document]


def create_documents(api_client: Any, documents: list[dict[str, Any]]) -> None:
    """Create the device plugin stack's kinds: DaemonSets, ConfigMaps and RuntimeClasses."""
    from kubernetes.client import AppsV1Api, CoreV1Api, NodeV1Api

    for document in documents:
        namespace = document["metadata"].get("namespace", "")
        if document["kind"] == "DaemonSet":
            AppsV1Api(api_client).create_namespaced_daemon_set(namespace, document)
        elif document["kind"] == "ConfigMap":
            CoreV1Api(api_client).create_namespaced_config_map(namespace, document)
        else:
            NodeV1Api(api_client).create_runtime_class(document)
