"""Single-object reads for `gpuctl explain pod/NAME | node/NAME`: one pod or node, the events about
it, the pods on a node, a RuntimeClass, a ResourceClaim. Each is one request; a 404 is None (the
caller says what is missing), every other failure raises as api_call maps it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.kube import rest_requests
from gpuctl.kube.client import api_call
from gpuctl.kube.raw import JsonDict, list_json

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

NOT_FOUND = 404


@dataclass(frozen=True)
class Event:
    """One event about an object: its type (Normal, Warning), reason and message."""

    type: str
    reason: str
    message: str
    count: int
    source: str  # the component that recorded it (default-scheduler, kubelet)


def _read(api_client: ApiClient, what: str, path: str, **path_params: str) -> JsonDict | None:
    from kubernetes.client.exceptions import ApiException

    try:
        with api_call("get", what):
            return rest_requests.get_json(api_client, path, query=None, **path_params)
    except ApiException as error:
        if error.status == NOT_FOUND:
            return None
        raise


def read_pod(api_client: ApiClient, namespace: str, name: str) -> JsonDict | None:
    return _read(
        api_client, f"pod {namespace}/{name}", "/api/v1/namespaces/{namespace}/pods/{name}",
        namespace=namespace, name=name,
    )  # fmt: skip


def read_node(api_client: ApiClient, name: str) -> JsonDict | None:
    return _read(api_client, f"node {name}", "/api/v1/nodes/{name}", name=name)


def read_runtime_class(api_client: ApiClient, name: str) -> JsonDict | None:
    """The RuntimeClass `name`, None when it (or node.k8s.io/v1) does not exist."""
    return _read(api_client, f"runtimeclass {name}", "/apis/node.k8s.io/v1/runtimeclasses/{name}", name=name)


def read_claim(api_client: ApiClient, version: str, namespace: str, name: str) -> JsonDict | None:
    """The ResourceClaim `namespace/name` of resource.k8s.io/`version`."""
    from gpuctl.kube.dra import api_path

    path = api_path(version, "resourceclaims", namespaced=True) + "/{name}"
    return _read(api_client, f"resourceclaim {namespace}/{name}", path, namespace=namespace, name=name)


def pods_on_node(api_client: ApiClient, node: str) -> list[JsonDict]:
    """Every pod bound to `node`, in any namespace (one request)."""
    with api_call("list", "pods"):
        return list_json(api_client, "/api/v1/pods", query={"fieldSelector": f"spec.nodeName={node}"})


def events_about(api_client: ApiClient, kind: str, name: str, namespace: str = "") -> list[Event]:
    """The events about one object (`kind` Pod or Node), oldest first. A node's events are
    recorded in namespace default, as the kubelet and the node controller do."""
    selector = f"involvedObject.kind={kind},involvedObject.name={name}"
    where = namespace or "default"
    with api_call("list", f"events in namespace {where}"):
        items = list_json(
            api_client, "/api/v1/namespaces/{namespace}/events",
            query={"fieldSelector": selector}, namespace=where,
        )  # fmt: skip
    items.sort(key=lambda item: str(item.get("lastTimestamp") or item.get("eventTime") or ""))
    return [
        Event(
            type=str(item.get("type") or ""),
            reason=str(item.get("reason") or ""),
            message=str(item.get("message") or ""),
            count=int(item.get("count") or 1),
            source=str((item.get("source") or {}).get("component") or item.get("reportingComponent") or ""),
        )
        for item in items
    ]
