"""RuntimeClasses: which handlers the cluster offers pods (`runtimeClassName: nvidia`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.raw import list_json, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient


def list_runtime_classes(api_client: ApiClient) -> set[str]:
    """Names of the RuntimeClasses (one request; a cluster without node.k8s.io/v1 has none)."""
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("list", "runtimeclasses"):
            items = list_json(api_client, "/apis/node.k8s.io/v1/runtimeclasses")
    except ApiException as error:
        if error.status == 404:
            return set()
        raise
    return {name_of(item) for item in items}
