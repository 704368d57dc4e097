"""List pages: `limit` and `continue`, as kubectl and client-go request large lists (500 a page).

A real API server serves every page from the snapshot of the first (etcd at its resourceVersion);
the sim serves each page from its current state, after the last key of the previous page, and
answers every page with the first page's resourceVersion, so that a watch started from it misses
no change made while the pages were read.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
from collections.abc import Callable
from typing import Any

from gpuctl.sim.api.api_errors import bad_request
from gpuctl.sim.api.selectors import field_selector, label_selector

Obj = dict[str, Any]


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace", ""), meta["name"]


def select_sorted(items: list[Obj], labels: str | None, fields: str | None) -> list[Obj]:
    """The items both selectors match, in a list's order (the order `page` continues by)."""
    by_label, by_field = label_selector(labels), field_selector(fields)
    selected = [obj for obj in items if by_label(obj) and by_field(obj)]
    selected.sort(key=_key)
    return selected


class Selections:
    """The last selection of a list, kept while its resource is unchanged: the pages of a large
    list (ten requests for 5,000 pods) select and sort once, not once per page."""

    def __init__(self) -> None:
        self._last: tuple[tuple[Any, ...], int, list[Obj]] | None = None

    def get(self, key: tuple[Any, ...], generation: int, select: Callable[[], list[Obj]]) -> list[Obj]:
        """`select()`, or its answer for the same `key` when the resource's `generation` is the same."""
        last = self._last
        if last is not None and last[0] == key and last[1] == generation:
            return last[2]
        selected = select()
        self._last = (key, generation, selected)
        return selected


def page(items: list[Obj], query: dict[str, str], version: str) -> tuple[list[Obj], Obj]:
    """The items of this page (`items` sorted by namespace and name) and the list's metadata."""
    limit_text, token = query.get("limit") or "", query.get("continue") or ""
    if token:
        version, after = _decode(token)
        items = items[bisect.bisect_right(items, after, key=_key) :]
    limit = int(limit_text) if limit_text.isdigit() else 0
    metadata: Obj = {"resourceVersion": version}
    if 0 < limit < len(items):
        items = items[:limit]
        metadata["continue"] = _encode(version, _key(items[-1]))
    return items, metadata


def _encode(version: str, key: tuple[str, str]) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": int(version), "start": "/".join(key) + "\0"})
    return base64.urlsafe_b64encode(raw.encode()).decode()


def _decode(token: str) -> tuple[str, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        namespace, name = str(data["start"]).rstrip("\0").split("/", 1)
        return str(int(data["rv"])), (namespace, name)
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise bad_request(f"continue key is not valid: {token!r}") from None
