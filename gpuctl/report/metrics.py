"""verify's Prometheus metrics: served while `verify --watch --metrics-addr` runs, or pushed to a
Pushgateway after a run (`--pushgateway`), through the official prometheus_client library.

Gauges describe the latest run as it is (a node that left the cluster, or a check that passes
again, leaves no series behind); counters add up every run this process made. Labels hold only
bounded values: node names, GPU products, proof levels, gpuctl's own check ids and diagnosis
signatures; never pod names, messages or log lines. Label values come from the cluster and are
escaped by the library's exposition; each is also cut to LABEL_VALUE_MAX characters, so a hostile
label cannot make a series arbitrarily large. docs/metrics.md lists every metric.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, push_to_gateway
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from gpuctl.core.proof.verdict import is_proven, passed_unproven
from gpuctl.core.verify.model import NodeResult, VerifyResult
from gpuctl.report.metrics_http import gateway_handler, only_metrics_paths, push_failure, start_server
from gpuctl.urls import split_credentials

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

PUSH_JOB = "gpuctl-verify"  # the Pushgateway grouping key's job
LABEL_VALUE_MAX = 256  # longer than any node name (253) or label value (63) Kubernetes accepts
NO_SIGNATURE = "none"  # a failing check no diagnosis signature matched
# Every metric this module exports, with its help text: the dashboard and docs use exactly these.
METRICS = {
    "gpuctl_node_proven": "1 when the GPU node passed every check of the latest run at its level, else 0.",
    "gpuctl_node_gpus": "The node's nvidia.com/gpu count in the latest run, by state "
    "(expected, capacity, allocatable, seen by nvidia-smi).",
    "gpuctl_node_gated": "1 when the gate keeps the node tainted gpuctl.io/unproven after the latest run.",
    "gpuctl_node_check_failed": "1 for each check that failed on the node in the latest run.",
    "gpuctl_node_last_verified_timestamp_seconds": "When the node was last verified (Unix time).",
    "gpuctl_node_last_proven_timestamp_seconds": "When the node was last proven by this process (Unix time).",
    "gpuctl_node_verify_pod_duration_seconds": "The node's verification pod, create request to end, "
    "in the latest run.",
    "gpuctl_cluster_check_failed": "1 for each cluster check that failed in the latest run.",
    "gpuctl_verify_nodes": "GPU nodes in the latest run, by state (proven, failing).",
    "gpuctl_verify_last_run_timestamp_seconds": "When the latest run ended (Unix time).",
    "gpuctl_verify_duration_seconds": "Wall time of the latest run.",
    "gpuctl_verify_runs": "verify runs made, by result (ok, failed).",
    "gpuctl_verify_pods_created": "Verification pods created.",
    "gpuctl_verify_failures": "Failing node checks over all runs, by check and diagnosis signature.",
}


def _label(value: str) -> str:
    return value[:LABEL_VALUE_MAX]


@dataclass(frozen=True)
class _Run:
    """One finished run and when it ended."""

    result: VerifyResult
    ended_at: float


class VerifyMetrics(Collector):
    """The metrics of the runs handed to `record`, read by the registry on each scrape or push.
    `record` runs on the watch's thread and `collect` on the server's: the latest run and the
    counters are swapped under one lock, so a scrape sees one run whole."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: _Run | None = None
        self._runs: Counter[str] = Counter()
        self._pods_created = 0
        self._failures: Counter[tuple[str, str]] = Counter()
        self._last_proven: dict[str, float] = {}
        # The product each node last showed: a run whose pod did not run there (a cordoned node)
        # knows none, and a product label that came and went would split the node's series.
        self._products: dict[str, str] = {}
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    def record(self, result: VerifyResult, *, ended_at: float | None = None) -> None:
        """Take `result` as the latest run (ended now, unless `ended_at` says when)."""
        run = _Run(result, time.time() if ended_at is None else ended_at)
        failures = Counter(
            (check.id, check.diagnosis or NO_SIGNATURE)
            for node in result.nodes
            for check in node.checks
            if check.failed
        )
        with self._lock:
            self._latest = run
            self._runs["ok" if result.ok else "failed"] += 1
            self._pods_created += result.pods_created
            self._failures.update(failures)
            current = {node.name for node in result.nodes}
            self._last_proven = {name: at for name, at in self._last_proven.items() if name in current}
            self._last_proven.update((node.name, run.ended_at) for node in result.nodes if is_proven(node))
            self._products = {name: product for name, product in self._products.items() if name in current}
            self._products.update((node.name, node.product) for node in result.nodes if node.product)

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            latest, runs, pods = self._latest, dict(self._runs), self._pods_created
            failures, last_proven = dict(self._failures), dict(self._last_proven)
            products = dict(self._products)
        yield from _run_metrics(latest, runs, pods, failures)
        if latest is not None:
            yield from _node_metrics(latest, last_proven, products)

    def push(self, gateway: str, *, tls: ssl.SSLContext | None = None) -> None:
        """Replace the metrics of job gpuctl-verify on the Pushgateway at `gateway` (HTTP PUT): the
        URL's user and password sent as basic auth, never in the URL; https verified with `tls`
        (--pushgateway-ca), else with the system's CAs."""
        url, credentials = split_credentials(gateway)
        handler = gateway_handler(credentials, tls)
        try:
            push_to_gateway(url, job=PUSH_JOB, registry=self.registry, timeout=30, handler=handler)
        except OSError as error:  # URLError and HTTPError are OSErrors
            raise push_failure(gateway, error, credentials) from error


def _gauge(name: str, labels: list[str]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, METRICS[name], labels=labels)


def _counter(name: str, labels: list[str]) -> CounterMetricFamily:
    return CounterMetricFamily(name, METRICS[name], labels=labels)


def _run_metrics(
    latest: _Run | None, runs: dict[str, int], pods: int, failures: dict[tuple[str, str], int]
) -> Iterator[Metric]:
    counted = _counter("gpuctl_verify_runs", ["result"])
    for result in ("ok", "failed"):
        counted.add_metric([result], runs.get(result, 0))
    yield counted
    created = _counter("gpuctl_verify_pods_created", [])
    created.add_metric([], pods)
    yield created
    failed = _counter("gpuctl_verify_failures", ["check", "signature"])
    for (check_id, signature), count in sorted(failures.items()):
        failed.add_metric([_label(check_id), _label(signature)], count)
    yield failed
    if latest is None:
        return
    ended = _gauge("gpuctl_verify_last_run_timestamp_seconds", [])
    ended.add_metric([], latest.ended_at)
    duration = _gauge("gpuctl_verify_duration_seconds", [])
    duration.add_metric([], latest.result.duration_s)
    nodes = _gauge("gpuctl_verify_nodes", ["state"])
    nodes.add_metric(["proven"], sum(is_proven(node) for node in latest.result.nodes))
    nodes.add_metric(["busy"], sum(passed_unproven(node) for node in latest.result.nodes))
    nodes.add_metric(["failing"], sum(not node.ok for node in latest.result.nodes))
    cluster = _gauge("gpuctl_cluster_check_failed", ["check"])
    for check in latest.result.cluster_checks:
        if check.failed:
            cluster.add_metric([_label(check.id)], 1)
    yield from (ended, duration, nodes, cluster)


def _gpu_counts(node: NodeResult) -> Iterator[tuple[str, int]]:
    counts = node.gpus
    for state, value in (
        ("expected", counts.expected),
        ("capacity", counts.capacity),
        ("allocatable", counts.allocatable),
        ("seen", counts.seen),
        ("in_use", counts.in_use),
    ):
        if value is not None:  # no expectation given, or no pod ran: no sample rather than a 0
            yield state, value


def _node_metrics(latest: _Run, last_proven: dict[str, float], products: dict[str, str]) -> Iterator[Metric]:
    result = latest.result
    proven = _gauge("gpuctl_node_proven", ["node", "product", "level"])
    gpus = _gauge("gpuctl_node_gpus", ["node", "state"])
    check_failed = _gauge("gpuctl_node_check_failed", ["node", "check"])
    verified = _gauge("gpuctl_node_last_verified_timestamp_seconds", ["node"])
    proven_at = _gauge("gpuctl_node_last_proven_timestamp_seconds", ["node"])
    pod_seconds = _gauge("gpuctl_node_verify_pod_duration_seconds", ["node"])
    gated = _gauge("gpuctl_node_gated", ["node", "level"])
    gated_now = _gated_nodes(result)
    for node in result.nodes:
        name = _label(node.name)
        product = _label(products.get(node.name, ""))
        # A busy node keeps what an earlier run of this watch proved (as its gate does).
        was_proven = is_proven(node) or (passed_unproven(node) and node.name in last_proven)
        proven.add_metric([name, product, _label(node.level)], 1 if was_proven else 0)
        for state, value in _gpu_counts(node):
            gpus.add_metric([name, state], value)
        for check in node.checks:
            if check.failed:
                check_failed.add_metric([name, _label(check.id)], 1)
        verified.add_metric([name], latest.ended_at)
        if node.name in last_proven:
            proven_at.add_metric([name], last_proven[node.name])
        if node.pod_seconds is not None:
            pod_seconds.add_metric([name], node.pod_seconds)
        if result.gate is not None:
            gated.add_metric([name, _label(result.gate.level)], 1 if node.name in gated_now else 0)
    yield from (proven, gpus, check_failed, verified, proven_at, pod_seconds)
    if result.gate is not None:
        yield gated


def _gated_nodes(result: VerifyResult) -> set[str]:
    """The nodes the gate left tainted: those it tainted now, and the failing ones that were
    tainted already (unchanged). A node whose write failed is as it was, which is not known here."""
    gate = result.gate
    if gate is None:
        return set()
    failing = {node.name for node in result.nodes if not node.ok}
    return set(gate.gated) | (failing & set(gate.unchanged))


def serve(host: str, port: int, metrics: VerifyMetrics) -> WSGIServer:
    """Serve `metrics` on http://HOST:PORT/metrics (and `ok` on /healthz, 404 elsewhere) from a
    daemon thread; port 0 picks a free one (the server's server_port says which). Stops with the
    process, or with shutdown()."""
    from prometheus_client import make_wsgi_app

    try:
        return start_server(host, port, only_metrics_paths(make_wsgi_app(metrics.registry)))
    except OSError as error:
        from gpuctl.errors import ConfigError

        raise ConfigError(
            f"--metrics-addr {host}:{port}: cannot listen: {error.strerror or error}",
            hint="pick a free port, e.g. `gpuctl verify --watch --metrics-addr :9400`",
        ) from error
