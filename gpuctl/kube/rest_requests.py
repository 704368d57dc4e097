"""The two requests made once per node (create a verification pod, read its log), sent through the
official client's own REST layer without its generated API methods.

A generated method validates every argument with pydantic and builds its request from a typed
model; at thousands of nodes that bookkeeping costs more CPU than the request. These functions
take the generated method's remaining steps themselves, all of them the client's:
`ApiClient.param_serialize` (path quoting, query, default headers and the BearerToken auth setting,
so the Configuration's refresh hook renews exec and in-cluster tokens as it does for every other
call), then `ApiClient.call_api` (the request timeout of `client.TimeoutApiClient`, then the
client's `RESTClientObject`: its urllib3 pool with the Configuration's TLS, proxy, retries and
pool size). A non-2xx answer raises the client's ApiException as a generated method called with
`_preload_content=False` does; transport failures are urllib3's errors. `client.api_call` maps
both (exit 3).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

JsonDict = dict[str, Any]
AUTH_SETTINGS = ["BearerToken"]  # what the generated CoreV1Api methods name


def request(
    api_client: ApiClient,
    method: str,
    resource_path: str,
    path_params: dict[str, str],
    *,
    query: list[tuple[str, Any]] | None = None,
    body: JsonDict | None = None,
) -> bytes:
    """The body of one answer to `method resource_path`; ApiException for a non-2xx status."""
    from kubernetes.client.exceptions import ApiException

    headers = {"Accept": "application/json"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    serialized = api_client.param_serialize(
        method=method,
        resource_path=resource_path,
        path_params=path_params,
        query_params=query or [],
        header_params=headers,
        body=body,
        auth_settings=AUTH_SETTINGS,
    )
    response = api_client.call_api(*serialized)
    data = bytes(response.read() or b"")  # read in full: the connection goes back to the pool
    if not 200 <= response.status <= 299:
        raise ApiException.from_response(http_resp=response, body=None, data=None)
    return data


def create_pod(api_client: ApiClient, namespace: str, manifest: JsonDict) -> JsonDict:
    """POST a pod (a plain dict); the created pod as a dict."""
    data = request(
        api_client, "POST", "/api/v1/namespaces/{namespace}/pods", {"namespace": namespace}, body=manifest
    )
    created: JsonDict = json.loads(data)
    return created


def read_log(api_client: ApiClient, namespace: str, name: str, query: dict[str, Any]) -> str:
    """GET a pod's log (`query`: container, tailLines; None values left out); the text."""
    data = request(
        api_client,
        "GET",
        "/api/v1/namespaces/{namespace}/pods/{name}/log",
        {"namespace": namespace, "name": name},
        query=[(key, value) for key, value in query.items() if value is not None],
    )
    return data.decode("utf-8", errors="replace")
