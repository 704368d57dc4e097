"""JSON bytes of stored objects, encoded once per object version and reused.

A watch event, the response to the write that made it, GETs and list items of one resourceVersion
all carry the same object: encoding it once saves most of the sim's JSON work at scale. This relies
on the store's contract (gpuctl/sim/runtime/store.py): a stored object is never mutated in place,
writers put a new dict. An entry is also keyed by the object's resourceVersion, so a dict that is
mutated and put again (a new resourceVersion) is encoded afresh.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import orjson

Obj = dict[str, Any]

CACHE_LIMIT = 16_384  # object versions; the recent ones are those reused (a write, then its watchers)
# ... and bytes of JSON: 16,384 pod versions were some 70 MB (the JSON and the versions it kept
# alive after the watch history had let them go), reached only after a few 1,000-node verifies.
# 4 MiB holds a thousand or more pod versions: a write and its watchers' reads are seconds apart.
CACHE_BYTES = 4 * 1024 * 1024

# id(obj) -> (obj, resourceVersion, bytes); the entry holds obj, so its id is not reused meanwhile.
# An OrderedDict: evicting the oldest of a plain dict (`next(iter(d))`) walks past every slot
# deleted before it until the dict is resized, which made each later encode slower.
_cache: OrderedDict[int, tuple[Obj, Any, bytes]] = OrderedDict()
_cached_bytes = [0]  # the JSON the cache holds, in bytes
_evicting = threading.Lock()


def _dumps(obj: Any) -> bytes:
    # orjson: a sixth of the sim's CPU was the standard library's encoder at thousands of pods
    # (33 us a pod against 3). Its JSON is compact UTF-8, as the real API server writes it.
    return orjson.dumps(obj)


def encode_object(obj: Obj) -> bytes:
    """The compact JSON of a stored (immutable) object, from the cache when already encoded."""
    version = (obj.get("metadata") or {}).get("resourceVersion")
    entry = _cache.get(id(obj))
    if entry is not None and entry[0] is obj and entry[1] == version:
        return entry[2]
    data = _dumps(obj)
    with _evicting:
        while _cache and (len(_cache) >= CACHE_LIMIT or _cached_bytes[0] + len(data) > CACHE_BYTES):
            _cached_bytes[0] -= len(_cache.popitem(last=False)[1][2])
        replaced = _cache.pop(id(obj), None)
        if replaced is not None:
            _cached_bytes[0] -= len(replaced[2])
        _cache[id(obj)] = (obj, version, data)
        _cached_bytes[0] += len(data)
    return data


def clear() -> None:
    """Forget every encoding (tests start from an empty cache)."""
    with _evicting:
        _cache.clear()
        _cached_bytes[0] = 0


def encode_event(kind: str, obj: Obj) -> bytes:
    """A WatchEvent line, byte for byte what encoding {"type": kind, "object": obj} gives."""
    return b'{"type":%s,"object":%s}\n' % (_dumps(kind), encode_object(obj))


def encode_list(listing: Obj) -> bytes:
    """A list whose last key is "items" (stored objects), byte for byte what encoding it whole gives."""
    head = {key: value for key, value in listing.items() if key != "items"}
    if list(listing)[-1] != "items" or not head or not isinstance(listing["items"], list):
        return _dumps(listing)
    items = b",".join(encode_object(item) for item in listing["items"])
    return b'%s,"items":[%s]}' % (_dumps(head)[:-1], items)
