"""What the sim's store keeps, and for how long: objects with a time to live (Events, as
kube-apiserver's --event-ttl) go when it passes, compacted history is dropped rather than only
refused, and the encoding cache holds a bounded number of bytes."""

from __future__ import annotations

import platform
import sys
import threading
import time
import tracemalloc

import pytest

from gpuctl.sim.api import encoded
from gpuctl.sim.runtime.store import Store, TooOld
from gpuctl.sim.server.malloc_arenas import limit_malloc_arenas, trim_every


def _event(name: str) -> dict[str, object]:
    return {"metadata": {"namespace": "default", "name": name}, "reason": "Test"}


def test_an_object_with_a_time_to_live_goes_once_it_passes_since_its_last_write() -> None:
    store = Store()
    store.expire_after("events", 0.3)
    with store.lock:
        store.add("events", _event("old"))
        store.add("events", _event("renewed"))
        store.add("pods", {"metadata": {"namespace": "default", "name": "p"}})  # no time to live
        first = store.resource_version
    time.sleep(0.2)
    with store.lock:
        renewed = store.get("events", "default", "renewed")
        assert renewed is not None
        store.put("events", dict(renewed, count=2))  # a write renews it, as a new etcd lease does
    time.sleep(0.15)
    assert [event["metadata"]["name"] for event in store.items("events")] == ["renewed"]
    assert store.count("pods") == 1
    with store.lock:
        deleted = [
            (c.kind, c.obj["metadata"]["name"]) for c in store.changes_after(first) if c.kind == "DELETED"
        ]
    assert deleted == [("DELETED", "old")]  # watchers see it go
    time.sleep(0.2)
    assert store.get("events", "default", "renewed") is None


def test_compaction_drops_the_history_it_makes_unreadable() -> None:
    store = Store()
    store.compact_every(0.1)
    with store.lock:
        first = store.resource_version
        for index in range(500):
            store.add("events", _event(f"e{index}"))
    time.sleep(0.25)
    with store.lock:
        store.add("events", _event("after"))  # two intervals on: compacted to the current version
        with pytest.raises(TooOld):
            store.changes_after(first)
        assert store.history_size == 2  # of 501 written: the version compacted to, and "after"


def test_the_encode_cache_holds_a_bounded_number_of_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoded, "CACHE_BYTES", 10_000)
    encoded.clear()
    objects = [{"metadata": {"name": f"p{i}", "resourceVersion": "1"}, "data": "x" * 1000} for i in range(50)]
    for obj in objects:
        encoded.encode_object(obj)
    assert sum(len(entry[2]) for entry in encoded._cache.values()) <= 10_000
    assert id(objects[-1]) in encoded._cache  # the newest kept
    assert id(objects[0]) not in encoded._cache
    encoded.clear()


def test_the_serving_process_can_bound_its_malloc_arenas() -> None:
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("mallopt(M_ARENA_MAX) is glibc's")
    assert limit_malloc_arenas()


def test_objects_with_a_time_to_live_are_kept_compactly_and_read_back_whole() -> None:
    """Thousands of Events live for their hour at once: the store keeps each as its JSON text, at
    most 1 KB for a kubelet Event (about 1.5 KB as Python dicts), and reads give the same object."""
    from gpuctl.sim.runtime import objects

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default", "uid": "u"}}
    store = Store(history_limit=10, history_min=5)  # the history, bounded apart, is not measured
    store.expire_after("events", 3600)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    with store.lock:
        for index in range(2000):
            store.add("events", objects.event(pod, "Started", f"Started container c{index}"))
    kept = sum(stat.size_diff for stat in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    assert kept / 2000 < 1024
    read = store.get("events", "default", store.items("events")[5]["metadata"]["name"])
    assert read is not None
    assert read["message"] == "Started container c5"
    assert read["involvedObject"]["uid"] == "u"


def test_the_serving_process_can_hand_free_memory_back() -> None:
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("malloc_trim is glibc's")
    assert trim_every(3600.0)  # a daemon thread: asleep for this test's whole life
    assert any(thread.name == "gpuctl-sim-malloc-trim" for thread in threading.enumerate())
