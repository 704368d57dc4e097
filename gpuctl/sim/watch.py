"""Watches: chunked WatchEvent lines from the store's bounded history (410 when too old)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from gpuctl.sim.messages import Request, Response, Route, encode
from gpuctl.sim.selectors import field_selector, label_selector
from gpuctl.sim.status import ApiError, bad_request
from gpuctl.sim.store import Change, Store, TooOld

Obj = dict[str, Any]
Visible = Callable[[Obj | None], bool]
DEFAULT_WATCH_SECONDS = 1800


def _line(kind: str, obj: Obj) -> bytes:
    return encode({"type": kind, "object": obj}) + b"\n"


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
    return _line(kind, change.obj) if kind else b""


def watch_response(
    store: Store,
    request: Request,
    route: Route,
    namespace: str | None,
    snapshot: Callable[[], list[Obj]],
) -> Response:
    """Stream changes of the route's resource; without a resourceVersion, start with `snapshot()`."""
    visible = _visibility(request, route, namespace)
    deadline = time.monotonic() + float(request.query.get("timeoutSeconds") or DEFAULT_WATCH_SECONDS)
    requested = request.query.get("resourceVersion", "")
    initial: list[Obj] = []
    with store.lock:
        if requested in ("", "0"):
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
            yield _line("ADDED", obj)
        try:
            for batch in store.follow(start, deadline):
                chunk = b"".join(
                    _event_line(change, visible) for change in batch if change.resource == route.resource.key
                )
                if chunk:
                    yield chunk
        except TooOld as error:
            yield _gone(error)

    return Response(200, stream=events())
