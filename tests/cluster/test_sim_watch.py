"""Watch semantics through kubernetes.watch: initial state, resourceVersion, selectors, timeout, 410."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from kubernetes import client, watch
from kubernetes.client.exceptions import ApiException

from gpuctl.sim.runtime import store as store_module
from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.http_server import SimServer

POD = {
    "metadata": {"name": "w", "labels": {"run": "x"}},
    "spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
    },
}


def test_watch_from_resource_version_sees_the_pod_lifecycle(sim: Any) -> None:
    cluster = sim({"podStartSeconds": 0.05, "nodes": [{"name": "n"}]})
    core = client.CoreV1Api(cluster.api_client())
    version = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", POD)
    phases = []
    stream = watch.Watch()
    for event in stream.stream(
        core.list_namespaced_pod,
        "default",
        label_selector="run=x",
        resource_version=version,
        timeout_seconds=10,
    ):
        phases.append((event["type"], event["object"].status.phase))
        if event["type"] == "MODIFIED" and event["object"].status.phase == "Succeeded":
            core.delete_namespaced_pod("w", "default")
        if event["type"] == "DELETED":
            stream.stop()
    assert phases[0] == ("ADDED", "Pending")
    assert ("MODIFIED", "Running") in phases
    assert phases[-1][0] == "DELETED"


def test_watch_without_version_starts_with_current_state(sim: Any) -> None:
    cluster = sim({"nodes": [{"name": "a"}, {"name": "b"}]})
    core = client.CoreV1Api(cluster.api_client())
    events = list(watch.Watch().stream(core.list_node, timeout_seconds=1))
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "a"), ("ADDED", "b")]


def test_streaming_list_ends_its_initial_events_with_a_bookmark(sim: Any) -> None:
    """client-go's informers (kubectl wait, get -w) ask for sendInitialEvents and wait for the bookmark."""
    cluster = sim({"nodes": [{"name": "a"}, {"name": "b"}]})
    core = client.CoreV1Api(cluster.api_client())
    version = core.list_node().metadata.resource_version
    response = core.list_node(
        watch=True,
        send_initial_events=True,
        resource_version_match="NotOlderThan",
        allow_watch_bookmarks=True,
        timeout_seconds=1,
        _preload_content=False,
    )
    events = [json.loads(line) for line in response.read().splitlines()]
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("BOOKMARK", None),
    ]
    bookmark = events[-1]["object"]
    assert bookmark["kind"] == "Node"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["metadata"]["resourceVersion"] == version


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"allow_watch_bookmarks": True}, "resourceVersionMatch"),
        ({"resource_version_match": "NotOlderThan"}, "allowWatchBookmarks"),
    ],
)
def test_streaming_list_without_its_required_options_is_invalid(
    sim: Any, options: dict[str, Any], field: str
) -> None:
    core = client.CoreV1Api(sim({"nodes": [{"name": "a"}]}).api_client())
    with pytest.raises(ApiException) as raised:
        core.list_node(watch=True, send_initial_events=True, timeout_seconds=1, **options)
    assert raised.value.status == 422
    assert f"{field}: Forbidden: sendInitialEvents requires" in json.loads(raised.value.body)["message"]


@pytest.mark.parametrize(
    ("value", "watching"), [("true", True), ("1", True), ("True", True), ("false", False)]
)
def test_watch_flag_reads_like_parse_bool(sim: Any, value: str, watching: bool) -> None:
    """Older Python clients send `watch=True`; the API server parses booleans with strconv.ParseBool."""
    cluster = sim({"nodes": [{"name": "a"}]})
    with cluster.open(f"/api/v1/nodes?watch={value}&timeoutSeconds=1") as response:
        body = response.read().decode()
    if watching:
        assert [json.loads(line)["type"] for line in body.splitlines()] == ["ADDED"]
    else:
        assert json.loads(body)["kind"] == "NodeList"


def test_label_change_out_of_selection_is_a_delete(sim: Any) -> None:
    cluster = sim({"nodes": [{"name": "a", "labels": {"pool": "x"}}]})
    core = client.CoreV1Api(cluster.api_client())
    version = core.list_node().metadata.resource_version
    seen: list[str] = []

    def follow() -> None:
        for event in watch.Watch().stream(
            core.list_node, label_selector="pool=x", resource_version=version, timeout_seconds=3
        ):
            seen.append(event["type"])
            if event["type"] == "DELETED":
                return

    thread = threading.Thread(target=follow)
    thread.start()
    core.patch_node("a", {"metadata": {"labels": {"other": "1"}}})
    core.patch_node("a", {"metadata": {"labels": {"pool": "y"}}})
    thread.join(10)
    assert seen == ["MODIFIED", "DELETED"]


def test_too_old_resource_version_is_410(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setattr(store_module, "HISTORY_LIMIT", 20)
    server = SimServer(parse_scenario({"nodes": [{"name": "a"}]})).start()
    try:
        server.cluster.store._history_limit = 20
        kubeconfig = server.write_kubeconfig(tmp_path / "kc")
        from gpuctl.kube.client import load_api_client

        core = client.CoreV1Api(load_api_client(kubeconfig))
        old = core.list_node().metadata.resource_version
        for value in range(40):
            core.patch_node("a", {"metadata": {"labels": {"n": str(value)}}})
        with pytest.raises(ApiException) as caught:
            list(watch.Watch().stream(core.list_node, resource_version=old, timeout_seconds=1))
        assert caught.value.status == 410
    finally:
        server.stop()


def test_stop_ends_open_watches(sim: Any) -> None:
    cluster = sim({"nodes": [{"name": "a"}]})
    core = client.CoreV1Api(cluster.api_client())
    version = core.list_node().metadata.resource_version
    done = threading.Event()

    def follow() -> None:
        list(watch.Watch().stream(core.list_node, resource_version=version, timeout_seconds=60))
        done.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    cluster.server.stop()
    assert done.wait(10)
