"""Large lists in pages: the sim serves `limit`/`continue`, gpuctl reads nodes and device plugin
pods 500 at a time (as kubectl does), so it never holds thousands of parsed objects at once."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gpuctl.kube.daemonsets import device_plugin_pods, list_gpu_daemonsets
from gpuctl.kube.nodes import list_nodes


def test_pages_with_limit_and_continue(sim: Any) -> None:
    core = client.CoreV1Api(sim({"nodes": [{"name": "node-{i}", "count": 5}]}).api_client())
    first = core.list_node(limit=2)
    second = core.list_node(limit=2, _continue=first.metadata._continue)
    third = core.list_node(limit=2, _continue=second.metadata._continue)

    pages = [[node.metadata.name for node in page.items] for page in (first, second, third)]
    assert pages == [["node-0", "node-1"], ["node-2", "node-3"], ["node-4"]]
    assert third.metadata._continue is None
    assert (
        first.metadata.resource_version == second.metadata.resource_version == third.metadata.resource_version
    )
    assert len(core.list_node().items) == 5  # no limit: one page


def test_a_broken_continue_token_is_a_bad_request(sim: Any) -> None:
    core = client.CoreV1Api(sim({"nodes": [{"name": "node-0"}]}).api_client())
    with pytest.raises(ApiException) as error:
        core.list_node(limit=1, _continue="not-a-token")
    assert error.value.status == 400
    assert "continue key is not valid" in error.value.body


def test_gpuctl_reads_nodes_and_plugin_pods_in_pages_of_500(sim: Any) -> None:
    cluster = sim({"devicePlugin": "installed", "nodes": [{"name": "gpu-{i}", "count": 501, "gpus": 8}]})
    api = cluster.api_client()
    cluster.server.reset_counts()

    nodes = list_nodes(api)
    plugins = [daemonset for daemonset in list_gpu_daemonsets(api) if daemonset.is_device_plugin]
    pods = device_plugin_pods(api, plugins)

    assert sorted(node.name for node in nodes) == sorted(f"gpu-{i}" for i in range(501))
    assert len(pods) == 501
    assert cluster.server.requests_by_verb() == {"list": 2 + 1 + 2}  # nodes, daemonsets, pods
