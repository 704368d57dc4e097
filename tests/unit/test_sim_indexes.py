"""The sim's shortcuts give the answers of the long way: UUIDs, list pages, the scheduler's node
index, shared fieldsV1 objects, watchers woken by their resource's writes only."""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import pytest

from gpuctl.nvidia_smi import _uuid5, fake_gpus, mig_uuid
from gpuctl.sim.api import encoded, fieldsets, paging
from gpuctl.sim.runtime import scheduler
from gpuctl.sim.runtime.cluster import Cluster
from gpuctl.sim.runtime.store import MARK_EVERY, Store, TooOld, new_uid
from gpuctl.sim.scenario import parse_scenario


def test_gpu_uuids_are_uuid5_of_the_node_and_index() -> None:
    for name in ("gpu-0.gpu0.gpuctl", "a" * 300, "nöde.gpu7.gpuctl", ""):
        assert _uuid5(name) == str(uuid.uuid5(uuid.NAMESPACE_DNS, name))
    gpu = fake_gpus("gpu-3", 2, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")[1]
    assert gpu.uuid == "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, "gpu-3.gpu1.gpuctl"))
    assert mig_uuid("gpu-3", 1, 2) == "MIG-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, "gpu-3.gpu1.mig2.gpuctl"))


def test_object_uids_are_the_version_4_uuids_of_the_same_random_bits() -> None:
    for seed in range(2000):
        random.seed(seed)
        drawn = new_uid()
        random.seed(seed)
        assert drawn == str(uuid.UUID(int=random.getrandbits(128), version=4))
        assert uuid.UUID(drawn).version == 4


def test_a_watcher_of_one_resource_wakes_for_its_writes_and_sees_every_change_since() -> None:
    store = Store()
    batches: list[list[str]] = []

    def follow() -> None:
        for batch in store.follow(store.resource_version, time.monotonic() + 30, "pods"):
            batches.append([change.resource for change in batch])

    follower = threading.Thread(target=follow)
    follower.start()
    time.sleep(0.1)
    with store.lock:
        store.add("events", {"metadata": {"namespace": "default", "name": "e1"}})
    time.sleep(0.2)
    assert batches == []  # an Event write leaves a pod watcher asleep
    with store.lock:
        store.add("pods", {"metadata": {"namespace": "default", "name": "p1"}})
    deadline = time.monotonic() + 5
    while not batches and time.monotonic() < deadline:
        time.sleep(0.01)
    assert batches == [["events", "pods"]]  # woken by the pod, with every change since
    store.close()
    follower.join(5)
    assert not follower.is_alive()


def _obj(namespace: str, name: str) -> dict[str, object]:
    return {"metadata": {"namespace": namespace, "name": name}}


def test_a_continued_page_starts_after_the_last_key_of_the_previous() -> None:
    items = [_obj(ns, f"p{i:02d}") for ns in ("a", "b") for i in range(7)]
    seen, query = [], {"limit": "3"}
    while True:
        page, metadata = paging.page(items, query, "42")
        seen += page
        if "continue" not in metadata:
            break
        query = {"limit": "3", "continue": metadata["continue"]}
        assert metadata["resourceVersion"] == "42"
    assert seen == items
    # the object the token names was deleted meanwhile: the next page starts after where it was
    token = paging._encode("42", ("a", "p02"))
    page, _ = paging.page(items[:2] + items[3:], {"continue": token}, "42")
    assert page[0] == _obj("a", "p03")


def test_the_node_index_is_rebuilt_when_a_node_changes() -> None:
    cluster = Cluster(parse_scenario({"nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 1}]}))
    nodes, _ = scheduler._node_index(cluster)
    assert scheduler._node_index(cluster)[0] is nodes  # unchanged: the same index
    with cluster.store.lock:
        node = dict(cluster.store.get("nodes", "", "gpu-1") or {})
        node["metadata"] = dict(node["metadata"], labels={"kubernetes.io/hostname": "renamed"})
        cluster.store.put("nodes", node)
    nodes_after, by_hostname = scheduler._node_index(cluster)
    assert nodes_after["gpu-1"] is node
    assert [n["metadata"]["name"] for n in by_hostname["renamed"]] == ["gpu-1"]


def test_fields_v1_of_one_set_is_one_shared_object_equal_to_a_fresh_encoding() -> None:
    paths = {(("f", "metadata"), ("f", "labels"), ("f", "app")), (("f", "spec"), ("f", "nodeName"))}
    first = fieldsets.to_fields_v1(paths)
    assert fieldsets.to_fields_v1(set(paths)) is first
    assert first == fieldsets._fields_v1.__wrapped__(frozenset(paths))
    assert fieldsets.from_fields_v1(first) == paths


def test_the_encode_cache_keeps_the_newest_object_versions_up_to_its_limit() -> None:
    encoded.clear()
    objects = [
        {"metadata": {"name": f"p{i}", "resourceVersion": str(i)}} for i in range(encoded.CACHE_LIMIT + 50)
    ]
    for obj in objects:
        assert encoded.encode_object(obj) == json.dumps(obj, separators=(",", ":")).encode()
    assert len(encoded._cache) == encoded.CACHE_LIMIT
    assert id(objects[49]) not in encoded._cache  # the oldest went first
    assert id(objects[50]) in encoded._cache
    assert id(objects[-1]) in encoded._cache
    changed = dict(objects[-1], metadata={"name": "p", "resourceVersion": "x"})
    assert encoded.encode_object(changed) == json.dumps(changed, separators=(",", ":")).encode()


def test_the_watch_history_keeps_its_newest_changes_and_the_recent_ones_only() -> None:
    store = Store(history_min=100, history_seconds=0.0)  # every change is "old" at once
    with store.lock:
        first = store.resource_version
        for index in range(3 * MARK_EVERY):
            store.add("events", {"metadata": {"namespace": "default", "name": f"e{index}"}})
    newest = store.resource_version
    assert len(store.changes_after(newest - 100)) == 100  # the newest history_min are kept
    with pytest.raises(TooOld):
        store.changes_after(first)  # expired: a watch from here gets 410 and lists again
    kept = Store(history_min=100)  # the default window: nothing is old yet
    with kept.lock:
        for index in range(3 * MARK_EVERY):
            kept.add("events", {"metadata": {"namespace": "default", "name": f"e{index}"}})
    assert len(kept.changes_after(first)) == 3 * MARK_EVERY
