"""Raw JSON access through the official client.

At 1,000 nodes the client's model deserialisation costs more than the HTTP round trip, so list
and watch responses are read as plain JSON (through rest_requests) and handled as dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from gpuctl.kube.deadlines import bounded, request_timeout_s
from gpuctl.kube.rest_requests import MalformedAnswer, Query, get_json, parse_answer

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

JsonDict = dict[str, Any]
PAGE_SIZE = 500
GONE = 410  # an expired continue token or resourceVersion


def call_json(method: Callable[..., Any], *args: Any, **kwargs: Any) -> JsonDict:
    """Call a generated API method and return its body as a dict (for the writes still made
    through the generated classes: server-side apply).

    Reading the body in full returns the connection to the pool; an unread one would be dropped.
    """
    with bounded(request_timeout_s()):
        response = method(*args, _preload_content=False, **kwargs)
        data = bytes(response.data or b"")
    return parse_answer(response, data)


def get_list(api_client: ApiClient, path: str, *, query: Query | None = None, **path_params: str) -> JsonDict:
    """GET one page of a list: its body, whose `items` are objects (MalformedAnswer where the
    answer is no list: a proxy's page, a single object, `items: 7`)."""
    body = get_json(api_client, path, query=query, **path_params)
    if "items" not in body:
        kind = body.get("kind")
        raise MalformedAnswer(f"no items: {kind if isinstance(kind, str) else 'an object'}, not a list")
    return body


class PagedList:
    """Every item of a list request, read PAGE_SIZE at a time (limit/continue, as kubectl does): a
    client holds one page of parsed objects at a time, not thousands of nodes or pods at once.
    `resource_version`: the list's, from its first page (where a watch resumes after it).

    A continue token the server no longer serves (410 Expired: its snapshot was compacted while
    the pages were read) restarts the list, as client-go's pager does (FullListIfExpired): one
    full list at the latest version, without a limit, so that it cannot expire again. Its items
    are all handed out again (`restarts` counts it): an item handed out before may have changed
    since, and a watch resumes after the new list's version."""

    def __init__(
        self, api_client: ApiClient, path: str, *, query: Query | None = None, **path_params: str
    ) -> None:
        self.api_client, self.path, self.path_params = api_client, path, path_params
        self.query = query or {}
        self.resource_version = ""
        self.restarts = 0

    def __iter__(self) -> Iterator[JsonDict]:
        token = None
        while True:
            body = self._page(token)
            if body is None:  # the token expired: the whole list, at once
                token, body = None, get_list(self.api_client, self.path, query=self.query, **self.path_params)
                self.restarts += 1
            if token is None:
                self.resource_version = str(dig(body, "metadata", "resourceVersion", default=""))
            token = dig(body, "metadata", "continue")
            items: list[JsonDict] = body["items"]
            del body
            # Handed out one by one and dropped here: a page the caller has read is freed before
            # the next one is fetched (two pages of 500 pods alive at once were ~30 MB).
            items.reverse()
            while items:
                yield items.pop()
            if not token:
                return

    def _page(self, token: str | None) -> JsonDict | None:
        """One page; None when the server says `token` has expired (410)."""
        query = {**self.query, "limit": PAGE_SIZE, "continue": token}
        try:
            return get_list(self.api_client, self.path, query=query, **self.path_params)
        except Exception as error:
            if token is not None and getattr(error, "status", None) == GONE:
                return None
            raise


def latest_items(
    api_client: ApiClient, path: str, *, query: Query | None = None, **path_params: str
) -> list[JsonDict]:
    """Every item of a list request, each once (the newest, where an expired page restarted the
    list), in the order read."""
    by_key: dict[tuple[str, str], JsonDict] = {}
    for item in PagedList(api_client, path, query=query, **path_params):
        by_key[str(dig(item, "metadata", "namespace", default="")), name_of(item)] = item
    return list(by_key.values())


def list_items(
    api_client: ApiClient, path: str, *, query: Query | None = None, **path_params: str
) -> Iterator[JsonDict]:
    """Every item of a list request, a page at a time (see PagedList)."""
    return iter(PagedList(api_client, path, query=query, **path_params))


def list_json(
    api_client: ApiClient, path: str, *, query: Query | None = None, **path_params: str
) -> list[JsonDict]:
    """The items of one list request (a list gpuctl reads whole: DaemonSets, RuntimeClasses)."""
    items: list[JsonDict] = get_list(api_client, path, query=query, **path_params)["items"]
    return items


def stream_json_lines(response: Any) -> Iterator[JsonDict]:
    """Yield one dict per line of a chunked watch response (MalformedAnswer for a line that is
    no watch event).

    One chunk may carry thousands of events (a server sends what changed since its last write):
    lines are cut from it one at a time, not split into a list of copies."""
    partial = b""
    for chunk in response.stream(amt=None, decode_content=False):
        data = partial + chunk if partial else chunk
        start = 0
        while (end := data.find(b"\n", start)) != -1:
            line = data[start:end]
            start = end + 1
            if line.strip():
                yield _event(line)
        partial = data[start:]
    if partial.strip():
        yield _event(partial)


def _event(line: bytes) -> JsonDict:
    try:
        event = orjson.loads(line)
    except orjson.JSONDecodeError:
        event = None
    if not isinstance(event, dict) or not isinstance(event.get("object", {}), dict):
        raise MalformedAnswer(f"a watch event that is not a JSON object with an object: {line[:60]!r}")
    return event


def dig(data: JsonDict, *keys: str, default: Any = None) -> Any:
    """Nested get that tolerates missing or null levels."""
    current: Any = data
    for key in keys:
        if not isinstance(current, dict):
            return default
        current = current.get(key)
        if current is None:
            return default
    return current


def labels_of(obj: JsonDict) -> dict[str, str]:
    labels: dict[str, str] = dig(obj, "metadata", "labels", default={})
    return labels


def name_of(obj: JsonDict) -> str:
    return str(dig(obj, "metadata", "name", default=""))
