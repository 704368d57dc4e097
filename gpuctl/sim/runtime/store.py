"""The object store: one lock, a global resourceVersion and a bounded event history for watches.

Stored objects are never mutated in place: writers put a new dict, so an object handed to a
watcher or a history entry is an immutable snapshot.
"""

from __future__ import annotations

import json
import random
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, NamedTuple

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace or "", name)

# A real API server's watch cache keeps about 75 s of changes (its eventFreshDuration), as many as
# its capacity allows. The sim keeps the newest HISTORY_MIN changes whatever their age, and beyond
# those only the changes of the last HISTORY_SECONDS, HISTORY_LIMIT at most: a long-lived sim's
# memory follows its recent writes, not all of them. A pod's change costs 2 to 4 KB (the object
# version it holds, less what it shares with the version before) and a 1,000-node verify writes
# about 9,000 changes; with 200,000 allowed, a sim serving verify after verify kept every change
# of the window, some 20 MB a verify (bench/sim_memory.py); with 12,000 the history still filled
# up during the second verify of a run, 8,000 fill it during the first. A watch from a
# resourceVersion that has gone is answered 410 Expired, and clients list again.
HISTORY_LIMIT = 8_000
HISTORY_MIN = 6_000
HISTORY_SECONDS = 150.0
MARK_EVERY = 1024  # writes between two time marks of the history


_formatted: dict[int, str] = {}


def rfc3339(moment: float | None = None) -> str:
    """Second-resolution UTC timestamps, as metadata carries them (memoised: hot at scale)."""
    second = int(time.time() if moment is None else moment)
    text = _formatted.get(second)
    if text is None:
        if len(_formatted) > 4096:
            _formatted.clear()
        text = datetime.fromtimestamp(second, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        _formatted[second] = text
    return text


_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))  # the version and variant bits
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


def new_uid() -> str:
    """A random (version 4) UUID, as str(uuid.UUID(int=..., version=4)) writes it, without
    os.urandom (slow on some VMs) or a UUID object (a uid is drawn for every object created)."""
    text = "%032x" % (random.getrandbits(128) & _UUID4_CLEAR | _UUID4_SET)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def clone(obj: Any) -> Any:
    """A deep copy of a JSON-shaped object (several times faster than copy.deepcopy)."""
    return json.loads(json.dumps(obj))


class Change(NamedTuple):  # a tuple: one is created for every write
    """One entry of the watch history: the object after (and before) a write."""

    resource_version: int
    resource: str
    kind: str  # ADDED | MODIFIED | DELETED
    obj: Obj
    previous: Obj | None


Watcher = Callable[[Change], None]


def _unpacked(obj: Obj | bytes) -> Obj:
    """A stored object as a dict (a packed one decoded afresh: callers never mutate either)."""
    return json.loads(zlib.decompress(obj)) if isinstance(obj, bytes) else obj


def _unpacked_or_none(obj: Obj | bytes | None) -> Obj | None:
    return None if obj is None else _unpacked(obj)


class TooOld(Exception):
    """The requested resourceVersion fell out of the bounded history (watch → 410 Gone)."""

    def __init__(self, requested: int, oldest: int) -> None:
        super().__init__(f"too old resource version: {requested} ({oldest})")


class Store:
    """All objects of the cluster, keyed by resource name (e.g. 'pods', 'daemonsets.apps')."""

    def __init__(
        self,
        history_limit: int = HISTORY_LIMIT,
        history_min: int = HISTORY_MIN,
        history_seconds: float = HISTORY_SECONDS,
    ) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)  # any write
        # Watchers of one resource wake for its writes only: a pod watch sleeps through the four
        # Events recorded for each pod started, and a watch on Events through the pods' writes.
        self._changed_by_resource: dict[str, threading.Condition] = {}
        # An object of a resource with a time to live (Events) is kept as its JSON text, compressed
        # (about 0.35 KB instead of 1.5 KB as dicts): thousands live at once, and are read far
        # less than written.
        self._objects: dict[str, dict[Key, Obj | bytes]] = {}
        self._resource_version = 1000
        self._history: list[Change] = []
        self._history_limit = history_limit
        self._history_min = history_min
        self._history_seconds = history_seconds
        # (resourceVersion, monotonic time) of every MARK_EVERY-th write
        self._marks: deque[tuple[int, float]] = deque()
        self._generations: dict[str, int] = {}  # resource → count of its writes
        self._watchers: dict[str, list[Watcher]] = {}  # resource → the controllers that read it
        self.closed = False
        # compact_every(): versions below _compacted are gone; _compaction = (seconds, next due,
        # the version the next compaction compacts to)
        self._compacted = 0
        self._compaction: tuple[float, float, int] | None = None
        # expire_after(): resource → its time to live, and (deadline, key, resourceVersion) of each
        # write in the order written (one TTL a resource, so deadlines come in order too)
        self._ttls: dict[str, float] = {}
        self._expiring: dict[str, deque[tuple[float, Key, str]]] = {}
        self._expiring_now = False

    # -- reads -------------------------------------------------------------------------------
    @property
    def resource_version(self) -> int:
        return self._resource_version

    @property
    def history_size(self) -> int:
        """The changes the watch history holds (what its memory follows)."""
        return len(self._history)

    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        if resource in self._ttls:
            self._expire_now()
        return _unpacked_or_none(self._objects.get(resource, {}).get((namespace, name)))

    def items(self, resource: str, namespace: str | None = None) -> list[Obj]:
        if resource in self._ttls:
            self._expire_now()
        objects = self._objects.get(resource, {})
        if namespace is None:
            return [_unpacked(obj) for obj in objects.values()]
        return [_unpacked(obj) for (ns, _), obj in objects.items() if ns == namespace]

    def count(self, resource: str) -> int:
        if resource in self._ttls:
            self._expire_now()
        return len(self._objects.get(resource, {}))

    def generation(self, resource: str) -> int:
        """A number that changes whenever an object of `resource` is added, replaced or removed:
        what is derived from all of them (an index) is kept until it changes."""
        if resource in self._ttls:
            self._expire_now()
        return self._generations.get(resource, 0)

    # -- writes (caller holds self.lock) -------------------------------------------------------
    def _bump(self) -> str:
        if self._compaction is not None:
            self._compact()
        self._resource_version += 1
        return str(self._resource_version)

    def add(self, resource: str, obj: Obj, created: float | None = None) -> Obj:
        self._drop_expired()
        metadata = obj.setdefault("metadata", {})
        metadata.setdefault("uid", new_uid())
        metadata.setdefault("creationTimestamp", rfc3339(created))
        metadata["resourceVersion"] = self._bump()
        key = (metadata.get("namespace", ""), metadata["name"])
        self._objects.setdefault(resource, {})[key] = self._packed(resource, obj)
        self._record(resource, "ADDED", obj, None)
        self._live_for(resource, key, metadata["resourceVersion"])
        return obj

    def put(self, resource: str, obj: Obj) -> Obj:
        """Replace an existing object (same key) with `obj`, bumping its resourceVersion."""
        self._drop_expired()
        metadata = obj["metadata"]
        key = (metadata.get("namespace", ""), metadata["name"])
        previous = _unpacked_or_none(self._objects.get(resource, {}).get(key))
        metadata["resourceVersion"] = self._bump()
        self._objects.setdefault(resource, {})[key] = self._packed(resource, obj)
        self._record(resource, "MODIFIED", obj, previous)
        self._live_for(resource, key, metadata["resourceVersion"])
        return obj

    def remove(self, resource: str, namespace: str, name: str) -> Obj | None:
        self._drop_expired()
        previous = _unpacked_or_none(self._objects.get(resource, {}).pop((namespace, name), None))
        if previous is None:
            return None
        final = dict(previous)
        final["metadata"] = dict(previous["metadata"], resourceVersion=self._bump())
        self._record(resource, "DELETED", final, previous)
        return final

    def _record(self, resource: str, kind: str, obj: Obj, previous: Obj | None) -> None:
        self._generations[resource] = self._generations.get(resource, 0) + 1
        change = Change(self._resource_version, resource, kind, obj, previous)
        self._history.append(change)
        if self._resource_version % MARK_EVERY == 0:
            self._marks.append((self._resource_version, time.monotonic()))
            self._expire()
        if len(self._history) > self._history_limit:
            del self._history[: self._history_limit // 10]
        self.changed.notify_all()
        waiting = self._changed_by_resource.get(resource)
        if waiting is not None:
            waiting.notify_all()
        for watcher in self._watchers.get(resource, ()):
            watcher(change)

    def _expire(self) -> None:
        """Drop the changes older than history_seconds, keeping the newest history_min."""
        cutoff = time.monotonic() - self._history_seconds
        keep_from = self._resource_version - self._history_min
        drop_through = 0
        while self._marks and self._marks[0][1] < cutoff and self._marks[0][0] < keep_from:
            drop_through = self._marks.popleft()[0]
        if drop_through and self._history:
            count = drop_through - self._history[0].resource_version + 1  # consecutive versions
            if count > 0:
                del self._history[:count]

    # -- time to live (caller holds self.lock) --------------------------------------------------
    def expire_after(self, resource: str, seconds: float) -> None:
        """Delete an object of `resource` `seconds` after its last write, as etcd's lease does
        for Events (kube-apiserver's --event-ttl): watchers see it DELETED, and what the store
        and its history held of it goes."""
        with self.lock:
            self._ttls[resource] = seconds
            self._expiring.setdefault(resource, deque())

    def _live_for(self, resource: str, key: Key, resource_version: str) -> None:
        ttl = self._ttls.get(resource)
        if ttl is not None:
            self._expiring[resource].append((time.monotonic() + ttl, key, resource_version))

    def _expire_now(self) -> None:
        """A read of a resource with a time to live sees none of its expired objects."""
        with self.lock:
            self._drop_expired()

    def _drop_expired(self) -> None:
        """Remove the objects whose time to live has passed since their last write (checked at
        each write and at each read of their resource: no thread)."""
        if self._expiring_now or not self._expiring:
            return
        now = time.monotonic()
        self._expiring_now = True  # remove() below writes, and checks again
        try:
            for resource, due in self._expiring.items():
                while due and due[0][0] <= now:
                    _, (namespace, name), version = due.popleft()
                    current = _unpacked_or_none(self._objects.get(resource, {}).get((namespace, name)))
                    if current is not None and current["metadata"].get("resourceVersion") == version:
                        self.remove(resource, namespace, name)  # not rewritten since: it expires
        finally:
            self._expiring_now = False

    def _packed(self, resource: str, obj: Obj) -> Obj | bytes:
        if resource not in self._ttls:
            return obj
        return zlib.compress(json.dumps(obj, separators=(",", ":")).encode(), 1)

    # -- watch -------------------------------------------------------------------------------
    def watch(self, resource: str, watcher: Watcher) -> None:
        """Call `watcher` with every change of `resource`, as it is written (under the lock): how a
        controller learns of the writes of the API and of the other controllers."""
        self._watchers.setdefault(resource, []).append(watcher)

    def compact_every(self, seconds: float) -> None:
        """Compact as kube-apiserver has etcd compacted (every five minutes there): every
        `seconds`, the versions older than the one current at the previous compaction go, and a
        watch from one of them is answered 410 (checked at each write and read, no thread)."""
        with self.lock:
            self._compaction = (seconds, time.monotonic() + seconds, self._resource_version)

    def _compact(self) -> None:
        if self._compaction is None:
            return
        seconds, due, upcoming = self._compaction
        now = time.monotonic()
        if now >= due:
            # Past two intervals, nothing was written since the last check (each write checks):
            # the current version was already current at the previous compaction.
            self._compacted = upcoming if now < due + seconds else self._resource_version
            self._compaction = (seconds, now + seconds, self._resource_version)
            # What no watch may read any more is dropped, not only refused.
            if self._history:
                del self._history[: max(0, self._compacted - self._history[0].resource_version)]

    def changes_after(self, resource_version: int) -> list[Change]:
        """History entries newer than `resource_version` (caller holds the lock)."""
        if not self._history or resource_version >= self._resource_version:
            return []
        self._compact()
        if resource_version < self._compacted:
            raise TooOld(resource_version, self._compacted)
        oldest = self._history[0].resource_version
        if resource_version < oldest - 1:
            raise TooOld(resource_version, oldest)
        start = resource_version - oldest + 1
        # resourceVersions are consecutive in the history: every write records exactly one change
        return self._history[start:]

    def follow(
        self, resource_version: int, deadline: float, resource: str | None = None
    ) -> Iterator[list[Change]]:
        """Yield batches of changes after `resource_version` until `deadline` or close(); with a
        `resource`, wake for its writes only (a batch still holds every change since the last)."""
        position = resource_version
        with self.lock:
            changed = self.changed if resource is None else self._changed_by_resource.setdefault(
                resource, threading.Condition(self.lock)
            )  # fmt: skip
        while True:
            with self.lock:
                batch = self.changes_after(position)
                while not batch and not self.closed:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return
                    changed.wait(min(remaining, 5.0))
                    batch = self.changes_after(position)
                if self.closed and not batch:
                    return
                position = batch[-1].resource_version
            yield batch

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.changed.notify_all()
            for waiting in self._changed_by_resource.values():
                waiting.notify_all()
