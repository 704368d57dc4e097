"""The simulated cluster's GET /metrics: request counts by verb, resource and code in the
Prometheus text format, as a real API server's apiserver_request_total (read by the benchmarks
from another process)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gpuctl.sim.server.metrics import parse_metrics, resource_of

SCENARIO = {"podStartSeconds": 0, "devicePlugin": "installed", "nodes": [{"name": "gpu-{i}", "count": 2}]}


def _metrics(cluster: Any) -> tuple[str, str]:
    with cluster.open("/metrics") as response:
        return response.headers["Content-Type"], response.read().decode()


def test_metrics_count_requests_by_verb_resource_and_code(sim: Any) -> None:
    cluster = sim(SCENARIO)
    core = client.CoreV1Api(cluster.api_client())
    core.list_node()
    core.list_node()
    core.read_namespace("default")
    with pytest.raises(ApiException, match="404"):
        core.read_namespaced_pod("absent", "default")
    pods = core.list_namespaced_pod("kube-system").items
    core.read_namespaced_pod_log(pods[0].metadata.name, "kube-system")

    content_type, text = _metrics(cluster)
    samples = parse_metrics(text)

    assert content_type.startswith("text/plain; version=0.0.4")
    assert "# TYPE apiserver_request_total counter" in text
    assert samples[("list", "nodes", "", 200)] == 2
    assert samples[("get", "namespaces", "", 200)] == 1
    assert samples[("error", "pods", "", 404)] == 1  # the sim counts a refused request as `error`
    assert samples[("list", "pods", "", 200)] == 1
    assert samples[("get", "pods", "log", 200)] == 1
    assert sum(samples.values()) == cluster.server.request_count


def test_reading_metrics_is_not_counted(sim: Any) -> None:
    cluster = sim(SCENARIO)
    _metrics(cluster)
    _, text = _metrics(cluster)
    assert parse_metrics(text) == {}
    assert cluster.server.request_count == 0


def test_resource_of_api_paths() -> None:
    assert resource_of("/api/v1/nodes?limit=500") == ("nodes", "")
    assert resource_of("/api/v1/namespaces/default/pods/smi-1/log") == ("pods", "log")
    assert resource_of("/api/v1/watch/namespaces/default/events") == ("events", "")
    assert resource_of("/api/v1/namespaces/gpuctl-system") == ("namespaces", "")
    assert resource_of("/api/v1/namespaces/gpuctl-system/status") == ("namespaces", "status")
    assert resource_of("/apis/apps/v1/namespaces/kube-system/daemonsets") == ("daemonsets", "")
    assert resource_of("/apis/node.k8s.io/v1/runtimeclasses/nvidia") == ("runtimeclasses", "")
    assert resource_of("/version") == ("", "")
    assert resource_of("/apis") == ("", "")
