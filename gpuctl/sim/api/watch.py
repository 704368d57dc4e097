"""Watches: chunked WatchEvent lines from the store's bounded history (410 when too old).

A real API server ends every watch after a while (its --min-request-timeout, randomised): the
response simply ends and the client watches again from the last resourceVersion it saw. With
`watchTTLSeconds` the sim ends its watches that soon, whatever timeoutSeconds asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from gpuctl.sim.api.api_errors import ApiError, bad_request, invalid
from gpuctl.sim.api.encoded import encode_event
from gpuctl.sim.api.messages import Request, Response, Route, encode
from gpuctl.sim.api.selectors import field_selector, label_selector
from gpuctl.sim.runtime.store import Change, Store, TooOld

Obj = dict[str, Any]
Visible = Callable[[Obj | None], bool]
DEFAULT_WATCH_SECONDS = 1800
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def _line(kind: str, obj: Obj) -> bytes:
    return encode({"type": kind, "object": obj}) + b"\n"


def _stored_line(kind: str, obj: Obj) -> bytes:
    """An event of a stored object: its bytes are shared with every watcher and reader."""
    return encode_event(kind, obj)


def _gone(error: TooOld) -> bytes:
    """A real API server answers 200 and an ERROR event carrying a 410 Expired Status."""
    return _line("ERROR", ApiError(410, "Expired", str(error)).status())


def _visibility(request: Request, route: Route, namespace: str | None) -> Visible:
    by_label = label_selector(request.query.get("labelSelector"))
    by_field = field_selector(request.query.get("fieldSelector"))
    name = route.name or None

    def visible(obj: Obj | None) -> bool:
        if obj is None:
            return False
        meta = obj["metadata"]
        if namespace is not None and meta.get("namespace") != namespace:
            return False
        return (name is None or meta["name"] == name) and by_label(obj) and by_field(obj)

    return visible


def _event_line(change: Change, visible: Visible) -> bytes:
    """Objects moving into or out of the selection are ADDED or DELETED, as the watch cache does."""
    now, before = visible(change.obj), visible(change.previous)
    if change.kind == "ADDED":
        kind = "ADDED" if now else ""
    elif change.kind == "DELETED":
        kind = "DELETED" if before else ""
    else:
        transitions = {(True, True): "MODIFIED", (True, False): "ADDED", (False, True): "DELETED"}
        kind = transitions.get((now, before), "")
    return _stored_line(kind, change.obj) if kind else b""


def _wants_initial_events(request: Request) -> bool:
    """`sendInitialEvents=true`: the watch-list (streaming list) that client-go's informers use.

    The server sends the current state as ADDED events, then a BOOKMARK annotated
    `k8s.io/initial-events-end`, then changes; the request must also say
    `resourceVersionMatch=NotOlderThan` and `allowWatchBookmarks=true`, as on a real API server.
    """
    if not request.flag("sendInitialEvents"):
        return False
    if request.query.get("resourceVersionMatch") != "NotOlderThan":
        raise _invalid_list_options("resourceVersionMatch", "resourceVersionMatch to NotOlderThan")
    if not request.flag("allowWatchBookmarks"):
        raise _invalid_list_options("allowWatchBookmarks", "allowWatchBookmarks to true")
    return True


def _invalid_list_options(field: str, setting: str) -> ApiError:
    return invalid(
        "ListOptions.meta.k8s.io", "", [f"{field}: Forbidden: sendInitialEvents requires setting {setting}"]
    )


def _initial_events_end(route: Route, resource_version: int) -> bytes:
    metadata = {"resourceVersion": str(resource_version), "annotations": {INITIAL_EVENTS_END: "true"}}
    return _line(
        "BOOKMARK",
        {"kind": route.resource.kind, "apiVersion": route.resource.api_version, "metadata": metadata},
    )


def watch_response(
    store: Store,
    request: Request,
    route: Route,
    namespace: str | None,
    snapshot: Callable[[], list[Obj]],
    *,
    ttl_seconds: float = 0.0,
) -> Response:
    """Stream changes of the route's resource; without a resourceVersion, start with `snapshot()`;
    end after `ttl_seconds` where it is shorter than the request's timeoutSeconds (0: no limit)."""
    visible = _visibility(request, route, namespace)
    seconds = float(request.query.get("timeoutSeconds") or DEFAULT_WATCH_SECONDS)
    deadline = time.monotonic() + (min(seconds, ttl_seconds) if ttl_seconds else seconds)
    requested = request.query.get("resourceVersion", "")
    streaming_list = _wants_initial_events(request)
    initial: list[Obj] = []
    with store.lock:
        if requested in ("", "0") or streaming_list:
            start = store.resource_version
            initial = [obj for obj in snapshot() if visible(obj)]
        else:
            try:
                start = min(int(requested), store.resource_version)
            except ValueError:
                raise bad_request(f"invalid resourceVersion {requested!r}") from None
            try:
                store.changes_after(start)
            except TooOld as error:
                return Response(200, stream=iter([_gone(error)]))

    def events() -> Iterator[bytes]:
        for obj in initial:
            yield _stored_line("ADDED", obj)
        if streaming_list:
            yield _initial_events_end(route, start)
        try:
            for batch in store.follow(start, deadline, route.resource.key):
                chunk = b"".join(
                    _event_line(change, visible) for change in batch if change.resource == route.resource.key
                )
                if chunk:
                    yield chunk
        except TooOld as error:
            yield _gone(error)

    return Response(200, stream=events())
