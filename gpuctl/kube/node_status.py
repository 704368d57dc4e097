"""A node condition written by server-side apply to `nodes/<name>/status` under a field manager
of its own, so that only that condition is the writer's (a node's conditions are a list keyed by
`type`: the kubelet's and other reporters' stay theirs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict
from gpuctl.kube.rest_requests import request_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

APPLY_PATCH = "application/apply-patch+yaml"
NODE = "/api/v1/nodes/{name}"


def apply_condition(api_client: ApiClient, name: str, condition: JsonDict, field_manager: str) -> bool:
    """Apply `condition` to the node's status (forcing: the condition is this manager's alone);
    False when the node is gone."""
    from kubernetes.client.exceptions import ApiException

    body = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"conditions": [condition]},
    }
    try:
        with api_call("patch", f"node {name} status"):
            request_json(
                api_client,
                "PATCH",
                NODE + "/status",
                query={"fieldManager": field_manager, "force": "true"},
                body=body,
                content_type=APPLY_PATCH,
                name=name,
            )
    except ApiException as error:
        if error.status == 404:
            return False
        raise
    return True
