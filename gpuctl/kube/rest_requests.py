"""Kubernetes API requests through the official client's own REST layer, without its generated
API classes.

A generated API class costs on both ends: importing CoreV1Api, AppsV1Api and the rest loads
their pydantic models (~0.6 s of CPU and ~26 MB per run), and each call validates every argument
with pydantic and builds its request from a typed model, which at thousands of nodes costs more
CPU than the request. gpuctl reads answers as plain JSON anyway, so these functions take a
generated method's remaining steps themselves, all of them the client's:
`ApiClient.param_serialize` (path quoting, query encoding, default headers and the BearerToken
auth setting, so the Configuration's refresh hook renews exec and in-cluster tokens as it does
for every generated call), then `ApiClient.call_api` (the request timeout of
`client.TimeoutApiClient`, then the client's `RESTClientObject`: its urllib3 pool with the
Configuration's TLS, proxy, retries and pool size). A non-2xx answer raises the client's
ApiException, as a generated method called with `_preload_content=False` does; transport failures
are urllib3's errors; a 2xx answer that is no Kubernetes answer (not JSON, or a list whose items
are not objects) raises MalformedAnswer; a request and the reading of its answer are bounded as a
whole (deadlines.bounded). `client.api_call` maps them all (exit 3).

Paths are the API's own, with `{namespace}`-style parameters filled in (and quoted) by
param_serialize; query keys are the API's (`labelSelector`, `resourceVersion`), None values left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from gpuctl.kube.deadlines import bounded, request_timeout_s

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

JsonDict = dict[str, Any]
Query = dict[str, Any]
AUTH_SETTINGS = ["BearerToken"]  # what every generated method of the Kubernetes API names
JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
HEAD_BYTES = 2048  # of a body that is not JSON, kept for the error to quote


class MalformedAnswer(Exception):
    """A 2xx answer that is no Kubernetes answer; the message says what is wrong with it."""


class NotJson(MalformedAnswer):
    """A 2xx answer that is not JSON at all: a proxy's login page, a web server's page."""

    def __init__(self, response: Any, data: bytes) -> None:
        super().__init__(f"HTTP {response.status} {response.reason}: not JSON")
        self.status, self.reason = response.status, response.reason
        self.content_type = str(response.headers.get("Content-Type") or "").split(";")[0].strip()
        self.head = data[:HEAD_BYTES]


@dataclass(frozen=True)
class Call:
    """One request: method, the API path with its `{parameters}` (filled in and quoted by
    param_serialize), the query (None values left out), a JSON body and its content type."""

    method: str
    path: str
    path_params: dict[str, str]
    query: Query | None = None
    body: JsonDict | None = None
    content_type: str = JSON
    timeout: tuple[float, float] | None = None  # None: the client's default (TimeoutApiClient)


def send(api_client: ApiClient, call: Call) -> Any:
    """Send one request; the client's RESTResponse, its body not read yet (read it, or stream
    its `.response`, so that the connection goes back to the pool)."""
    headers = {"Accept": JSON}
    if call.body is not None:
        headers["Content-Type"] = call.content_type
    method, url, headers, _, _ = api_client.param_serialize(
        method=call.method,
        resource_path=call.path,
        path_params=call.path_params,
        query_params=[(key, value) for key, value in (call.query or {}).items() if value is not None],
        header_params=headers,
        auth_settings=AUTH_SETTINGS,
    )
    # The body goes to the REST layer as is: param_serialize would only walk the plain dict
    # looking for typed models to convert (a verification pod is ~60 nodes of it).
    return api_client.call_api(method, url, headers, call.body, _request_timeout=call.timeout)


def _raise_for_status(response: Any) -> None:
    from kubernetes.client.exceptions import ApiException

    if not 200 <= response.status <= 299:
        response.read()  # the Status body, for the exception (and the pool)
        raise ApiException.from_response(http_resp=response, body=None, data=None)


def _answered(api_client: ApiClient, call: Call) -> tuple[Any, bytes]:
    """The response to `call` and its body, read in full within the request's deadline (the
    connection goes back to the pool); ApiException for a non-2xx status."""
    with bounded(request_timeout_s()):
        response = send(api_client, call)
        data = bytes(response.read() or b"")
    _raise_for_status(response)
    return response, data


def answer(api_client: ApiClient, call: Call) -> bytes:
    """The body of the answer to `call`; ApiException for a non-2xx status."""
    return _answered(api_client, call)[1]


def answer_json(api_client: ApiClient, call: Call) -> JsonDict:
    """The answer to `call` as a dict; ApiException for a non-2xx status, MalformedAnswer for
    one that is no Kubernetes answer."""
    return parse_answer(*_answered(api_client, call))


def parse_answer(response: Any, data: bytes) -> JsonDict:
    """A 2xx answer's body as a dict: a JSON object, whose `items` (a list's) are objects with a
    metadata.name; MalformedAnswer otherwise. `items: null` is an empty list, as client-go reads it."""
    try:
        # orjson: a quarter faster than the standard library on the pages of thousands of nodes
        # and pods a large cluster answers with
        parsed = orjson.loads(data or b"{}")
    except orjson.JSONDecodeError:
        raise NotJson(response, data) from None
    if not isinstance(parsed, dict):
        raise MalformedAnswer(f"a JSON {_json_type(parsed)} where an object was expected")
    if "items" in parsed:
        parsed["items"] = checked_items(parsed["items"])
    return parsed


def checked_items(items: Any) -> list[JsonDict]:
    """A list's `items`, each an object with a metadata.name; MalformedAnswer otherwise."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise MalformedAnswer(f"items is {_json_type(items)} ({_shown(items)}), not a list")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise MalformedAnswer(f"items[{index}] is {_json_type(item)} ({_shown(item)}), not an object")
        _check_metadata(item.get("metadata"), f"items[{index}]")
    return items


def _check_metadata(metadata: Any, where: str) -> None:
    """What every object gpuctl reads has: a name; labels and annotations, where set, mappings."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise MalformedAnswer(f"{where} has no metadata.name")
    for field in ("labels", "annotations"):
        if not isinstance(metadata.get(field) or {}, dict):
            raise MalformedAnswer(f"{where}.metadata.{field} is {_json_type(metadata[field])}, not an object")


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _shown(value: Any) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 40 else text[:39] + "…"


def request_json(
    api_client: ApiClient,
    method: str,
    path: str,
    *,
    query: Query | None = None,
    body: JsonDict | None = None,
    content_type: str = JSON,
    **path_params: str,
) -> JsonDict:
    """The answer to `method path` as a dict; ApiException for a non-2xx status."""
    return answer_json(api_client, Call(method, path, path_params, query, body, content_type))


def get_json(api_client: ApiClient, path: str, *, query: Query | None = None, **path_params: str) -> JsonDict:
    """GET `path` (an object or a list) as a dict."""
    return answer_json(api_client, Call("GET", path, path_params, query))


def stream(api_client: ApiClient, call: Call) -> Any:
    """The urllib3 response to `call`, its body unread, to be read in chunks (a watch; a
    deletecollection's answer); ApiException for a non-2xx status."""
    response = send(api_client, call)
    _raise_for_status(response)
    return response.response


def watch(
    api_client: ApiClient,
    path: str,
    query: Query,
    timeout: tuple[float, float] | None = None,
    **path_params: str,
) -> Any:
    """A watch on the collection at `path` (`query`: selectors, resourceVersion, timeoutSeconds),
    its events to be read line by line from the urllib3 response."""
    return stream(api_client, Call("GET", path, path_params, {**query, "watch": True}, timeout=timeout))


def delete_collection(api_client: ApiClient, path: str, query: Query, **path_params: str) -> None:
    """DELETE the collection at `path` (`query`: its selector). Its answer lists every object it
    deleted (thousands of pods): read in small pieces and dropped."""
    with bounded(request_timeout_s()):
        response = stream(api_client, Call("DELETE", path, path_params, query))
        for _ in response.stream(64 * 1024, decode_content=False):
            pass
    response.release_conn()


def create_pod(api_client: ApiClient, namespace: str, manifest: JsonDict) -> bytes:
    """POST a pod (a plain dict); the server's answer, the created pod's JSON, left unparsed (read
    in full, so the connection goes back to the pool): verify creates thousands of pods and needs
    none of the echoes, whose parsing cost more CPU than the requests."""
    call = Call("POST", "/api/v1/namespaces/{namespace}/pods", {"namespace": namespace}, body=manifest)
    return answer(api_client, call)


def read_log(api_client: ApiClient, namespace: str, name: str, query: Query) -> str:
    """GET a pod's log (`query`: container, tailLines; None values left out); the text."""
    path = "/api/v1/namespaces/{namespace}/pods/{name}/log"
    data = answer(api_client, Call("GET", path, {"namespace": namespace, "name": name}, query))
    return data.decode("utf-8", errors="replace")
