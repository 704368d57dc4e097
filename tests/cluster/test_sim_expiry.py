"""Expiry, as a real API server does it: continue tokens answered 410 Expired with a fresh token
(`listTokenTTLSeconds`), watches ended after `watchTTLSeconds`, a watch from a compacted
resourceVersion answered with a 410 ERROR event; and gpuctl surviving each."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gpuctl.kube.raw import PagedList, latest_items, name_of

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# kube-apiserver's words for an expired continue token (apiserver storage/etcd3/errors.go).
INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a "
    "new list without the continue parameter, or use the continue token in this response to retrieve "
    "the remainder of the results. Continuing with the provided token results in an inconsistent list "
    "- objects that were created, modified, or deleted between the time the first chunk was returned "
    "and now may show up in the list."
)
POD = {
    "metadata": {"name": "p"},
    "spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
    },
}


def test_an_old_continue_token_is_410_expired_with_a_fresh_token(sim: Any) -> None:
    cluster = sim({"listTokenTTLSeconds": 1, "nodes": [{"name": "node-{i}", "count": 5}]})
    core = client.CoreV1Api(cluster.api_client())
    first = core.list_node(limit=2)
    young = core.list_node(limit=2, _continue=first.metadata._continue)
    assert [node.metadata.name for node in young.items] == ["node-2", "node-3"]
    time.sleep(1.3)
    with pytest.raises(ApiException) as expired:
        core.list_node(limit=2, _continue=first.metadata._continue)

    status = json.loads(expired.value.body)
    assert (expired.value.status, status["reason"], status["code"]) == (410, "Expired", 410)
    assert status["message"] == INCONSISTENT_CONTINUE
    rest = core.list_node(limit=2, _continue=status["metadata"]["continue"])  # inconsistent: now
    assert [node.metadata.name for node in rest.items] == ["node-2", "node-3"]
    assert int(rest.metadata.resource_version) >= int(first.metadata.resource_version)


def test_without_a_ttl_tokens_never_expire(sim: Any) -> None:
    core = client.CoreV1Api(sim({"nodes": [{"name": "node-{i}", "count": 3}]}).api_client())
    first = core.list_node(limit=1)
    time.sleep(1.1)
    assert len(core.list_node(limit=5, _continue=first.metadata._continue).items) == 2


def test_gpuctl_restarts_a_list_whose_token_expired(sim: Any) -> None:
    """A reader slower than the token's life: the list restarts as one full list at the latest version."""
    cluster = sim({"listTokenTTLSeconds": 1, "nodes": [{"name": "gpu-{i}", "count": 501}]})
    api = cluster.api_client()
    pages = PagedList(api, "/api/v1/nodes")
    seen = []
    for item in pages:
        seen.append(name_of(item))
        if len(seen) == 1:
            time.sleep(1.3)  # the first page's token expires while it is read
    assert pages.restarts == 1
    assert sorted(set(seen)) == sorted(f"gpu-{i}" for i in range(501))
    assert len(seen) == 500 + 501  # the first page, then everything again at the latest version
    assert len(latest_items(api, "/api/v1/nodes")) == 501  # each node once


def test_a_watch_ends_after_the_watch_ttl(sim: Any) -> None:
    cluster = sim({"watchTTLSeconds": 1, "nodes": [{"name": "a"}]})
    started = time.monotonic()
    with cluster.open("/api/v1/nodes?watch=true&timeoutSeconds=60", timeout=30) as response:
        lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert time.monotonic() - started < 5
    assert [(line["type"], line["object"]["metadata"]["name"]) for line in lines] == [("ADDED", "a")]


def test_a_watch_from_a_compacted_version_is_a_410_error_event(sim: Any) -> None:
    cluster = sim({"watchTTLSeconds": 1, "nodes": [{"name": "a"}]})
    core = client.CoreV1Api(cluster.api_client())
    version = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", POD)
    time.sleep(2.3)  # two compactions: the second compacts to a version after `version`
    core.delete_namespaced_pod("p", "default")
    path = f"/api/v1/namespaces/default/pods?watch=true&resourceVersion={version}&timeoutSeconds=5"
    with cluster.open(path) as response:
        events = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert [event["type"] for event in events] == ["ERROR"]
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {version} (")


def test_verify_proves_every_node_while_tokens_and_watches_expire(sim: Any, cli: Any) -> None:
    """The issue's figure, smaller: pods start after the watch's life, so verify's watches are
    ended while it waits and it must watch again (or list again after a 410)."""
    cluster = sim(
        {
            "listTokenTTLSeconds": 1,
            "watchTTLSeconds": 2,
            "podStartSeconds": 3,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-{i}", "count": 200, "gpus": 8}],
        }
    )
    assert sum(cluster.allocatable_gpus().values()) == 1600
    cluster.server.reset_counts()
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "120"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0, result.output[-2000:]
    proven = sorted(node["name"] for node in data["nodes"] if node["ok"])
    assert proven == sorted(f"gpu-{i}" for i in range(200))
    assert cluster.server.requests_by_verb()["watch"] >= 3  # the pods' watch was opened again
