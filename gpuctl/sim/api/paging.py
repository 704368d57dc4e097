"""List pages: `limit` and `continue`, as kubectl and client-go request large lists (500 a page).

A real API server serves every page from the snapshot of the first (etcd at its resourceVersion);
the sim serves each page from its current state, after the last key of the previous page, and
answers every page with the first page's resourceVersion, so that a watch started from it misses
no change made while the pages were read.

A real server's continue token expires when etcd compacts its snapshot away (every five minutes);
the next page is answered 410 Expired with a token that continues at the latest version
(resourceVersion -1: an inconsistent list). With `listTokenTTLSeconds` the sim does the same to a
token whose first page was served longer ago than that.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from gpuctl.sim.api.api_errors import ApiError, bad_request
from gpuctl.sim.api.selectors import field_selector, label_selector

Obj = dict[str, Any]
LATEST = "-1"  # a continue token's resourceVersion that continues at the latest version
SNAPSHOTS_KEPT = 4096  # first-page times remembered; a token of one forgotten is expired
# kube-apiserver's words (staging/src/k8s.io/apiserver/pkg/storage/etcd3/errors.go, inconsistentContinue)
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old "
    "to display a consistent list result. You can start a new list without "
    "the continue parameter, or use the continue token in this response to "
    "retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned "
    "and now may show up in the list."
)


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


class ExpiredContinue(ApiError):
    """410 Expired for a continue token whose snapshot is gone, carrying a fresh token."""

    def __init__(self, after: tuple[str, str]) -> None:
        super().__init__(410, "Expired", INCONSISTENT_CONTINUE)
        self.fresh_token = _encode(LATEST, after)

    def status(self) -> Obj:
        status = super().status()
        status["metadata"] = {"continue": self.fresh_token}
        return status


class Snapshots:
    """When a list's first page at each version was last served: the version's continue tokens live
    `ttl_seconds` from then (0: for ever). A list started anew at the same version renews them, as
    etcd never compacts its current revision away: an idle cluster's lists still complete."""

    def __init__(self, ttl_seconds: float) -> None:
        self.ttl_seconds = ttl_seconds
        self._served: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()  # requests are served on many threads

    def served(self, version: str) -> None:
        if self.ttl_seconds:
            with self._lock:
                self._served[version] = time.monotonic()
                self._served.move_to_end(version)
                if len(self._served) > SNAPSHOTS_KEPT:
                    self._served.popitem(last=False)

    def expired(self, version: str) -> bool:
        if not self.ttl_seconds:
            return False
        served = self._served.get(version)
        return served is None or time.monotonic() - served > self.ttl_seconds


def page(
    items: list[Obj], query: dict[str, str], version: str, snapshots: Snapshots | None = None
) -> tuple[list[Obj], Obj]:
    """The items of this page (`items` sorted by namespace and name) and the list's metadata;
    `version` is the store's now (ExpiredContinue where `snapshots` says the token has expired)."""
    limit_text, token = query.get("limit") or "", query.get("continue") or ""
    first = not token
    if token:
        token_version, after = _decode(token)
        first = token_version == LATEST
        if token_version != LATEST and snapshots is not None and snapshots.expired(token_version):
            raise ExpiredContinue(after)
        version = version if token_version == LATEST else token_version
        items = items[bisect.bisect_right(items, after, key=_key) :]
    limit = int(limit_text) if limit_text.isdigit() else 0
    metadata: Obj = {"resourceVersion": version}
    if 0 < limit < len(items):
        items = items[:limit]
        metadata["continue"] = _encode(version, _key(items[-1]))
        if first and snapshots is not None:
            snapshots.served(version)
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
