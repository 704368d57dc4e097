"""verify's Prometheus metrics: `verify --watch --metrics-addr` scraped over real HTTP while a node
breaks and heals, `--pushgateway` received by a real HTTP server, both read back with
prometheus_client's own text parser; hostile node text stays inside its label value."""

from __future__ import annotations

import http.server
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuctl.report.metrics import METRICS, PUSH_JOB
from tests.interrupt import interrupt, running
from tests.polling import wait_until

# A GPU product as a hostile node's nvidia-smi could name it: the exposition's own syntax (a
# quote ending the label value, a sample after it), a backslash, markup. (A newline cannot pass
# nvidia-smi's CSV: test_hostile_label_values_stay_inside_their_samples sends one.)
HOSTILE_PRODUCT = 'H100"} 1 gpuctl_node_proven{node="forged"} 1 \\ <script>x</script>'
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-{i}", "count": 2, "gpus": 4, "gpuProduct": "NVIDIA-H100-80GB-HBM3"},
        {"name": "gpu-sick", "gpus": 4, "unhealthyGpus": 1, "gpuProduct": HOSTILE_PRODUCT},
    ],
}
H100 = "NVIDIA H100 80GB HBM3"  # the product as nvidia-smi names it in the verification pod
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def parse(text: str) -> Samples:
    """Every sample of an exposition, by name and labels, as prometheus_client reads it."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def families(text: str) -> set[str]:
    return {family.name for family in text_string_to_metric_families(text)}


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        return parse(response.read().decode())


def _product(samples: Samples, node: str) -> str:
    (labels,) = [dict(key) for name, key in samples if name == "gpuctl_node_proven" and ("node", node) in key]
    return labels["product"]


@pytest.fixture
def cluster(sim: Any) -> Any:
    started = sim(SCENARIO)
    wait_until(
        lambda: started.allocatable_gpus() == {"gpu-0": 4, "gpu-1": 4, "gpu-sick": 3}, "GPUs advertised"
    )
    return started


def _metrics_url(process: subprocess.Popen[str]) -> str:
    """The URL the watch says it serves on (port 0: the kernel picked it)."""
    assert process.stderr is not None
    line = process.stderr.readline()
    found = re.fullmatch(r"serving metrics on (http://127\.0\.0\.1:\d+/metrics)\n", line)
    assert found, line
    return found.group(1)


def _assert_the_first_run(samples: Samples) -> None:
    """Two proven nodes and gpu-sick (one unhealthy GPU, a hostile product) as the first run saw them."""
    for node in ("gpu-0", "gpu-1"):
        assert value(samples, "gpuctl_node_proven", node=node, product=H100, level="smi")
        assert value(samples, "gpuctl_node_gpus", node=node, state="allocatable") == 4
        assert value(samples, "gpuctl_node_gpus", node=node, state="seen") == 4
    # The hostile label is read back whole as one label value, and forged nothing.
    assert _product(samples, "gpu-sick") == HOSTILE_PRODUCT
    assert value(samples, "gpuctl_node_proven", node="gpu-sick", product=HOSTILE_PRODUCT, level="smi") == 0
    assert not any(("node", "forged") in labels for _, labels in samples)
    assert value(samples, "gpuctl_node_gpus", node="gpu-sick", state="capacity") == 4
    assert value(samples, "gpuctl_node_gpus", node="gpu-sick", state="allocatable") == 3
    sick_checks = {dict(k)["check"] for n, k in samples if n == "gpuctl_node_check_failed"}
    assert sick_checks
    assert all(value(samples, "gpuctl_node_check_failed", node="gpu-sick", check=c) == 1 for c in sick_checks)
    assert value(samples, "gpuctl_verify_nodes", state="proven") == 2
    assert value(samples, "gpuctl_verify_nodes", state="failing") == 1
    assert value(samples, "gpuctl_verify_pods_created_total")
    assert value(samples, "gpuctl_verify_last_run_timestamp_seconds")


@pytest.mark.slow
def test_watch_serves_metrics_that_follow_a_fault_and_its_fix(cluster: Any) -> None:
    from kubernetes.client import CoreV1Api

    argv = [sys.executable, "-m", "gpuctl", "verify", "--watch", "--interval", "5"]
    argv += ["--metrics-addr", "127.0.0.1:0", "--kubeconfig", str(cluster.kubeconfig)]
    with running(argv, stdout=subprocess.DEVNULL) as process:
        url = _metrics_url(process)
        wait_until(lambda: value(scrape(url), "gpuctl_verify_runs_total", result="failed"), "a first run")
        _assert_the_first_run(scrape(url))

        api = CoreV1Api(cluster.api_client())
        api.patch_node("gpu-1", {"spec": {"unschedulable": True}})

        def cordoned() -> bool:
            now = scrape(url)
            return value(now, "gpuctl_node_check_failed", node="gpu-1", check="node.schedulable") == 1

        wait_until(cordoned, "gpu-1's failure in the metrics", timeout=30)
        samples = scrape(url)
        assert value(samples, "gpuctl_node_proven", node="gpu-1", product=H100, level="smi") == 0
        assert value(samples, "gpuctl_verify_nodes", state="failing") == 2
        proven_at = value(samples, "gpuctl_node_last_proven_timestamp_seconds", node="gpu-1")
        assert proven_at is not None

        api.patch_node("gpu-1", {"spec": {"unschedulable": False}})

        def healed() -> bool:
            now = scrape(url)
            return bool(value(now, "gpuctl_node_proven", node="gpu-1", product=H100, level="smi"))

        wait_until(healed, "gpu-1 proven again in the metrics", timeout=30)
        samples = scrape(url)
        assert value(samples, "gpuctl_node_check_failed", node="gpu-1", check="node.schedulable") is None
        assert (value(samples, "gpuctl_node_last_proven_timestamp_seconds", node="gpu-1") or 0) > proven_at
        counted = [
            k
            for n, k in samples
            if n == "gpuctl_verify_failures_total" and ("check", "node.schedulable") in k
        ]
        assert len(counted) == 1
        assert samples["gpuctl_verify_failures_total", counted[0]] >= 1
        stderr = interrupt(process)
    assert process.returncode == 130, stderr
    assert "stopped watching" in stderr
    with pytest.raises(urllib.error.URLError):  # the server went with the watch
        scrape(url)


class _Receiver(http.server.BaseHTTPRequestHandler):
    """A Pushgateway's push endpoint: records each request (method, path, body), answers 200."""

    pushes: list[tuple[str, str, str]]

    def do_PUT(self) -> None:
        length = int(self.headers["Content-Length"])
        self.pushes.append((self.command, self.path, self.rfile.read(length).decode()))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *_args: object) -> None:  # the test's output stays quiet
        return


@pytest.fixture
def pushgateway() -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    pushes: list[tuple[str, str, str]] = []
    handler = type("Receiver", (_Receiver,), {"pushes": pushes})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", pushes
    server.shutdown()
    server.server_close()


def test_one_run_pushes_its_metrics_to_the_pushgateway(
    cluster: Any, cli: Any, pushgateway: tuple[str, list[tuple[str, str, str]]]
) -> None:
    url, pushes = pushgateway
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", "--pushgateway", url)
    assert result.exit_code == 1, result.output  # gpu-sick fails, and the push went through
    assert '"schema": "gpuctl.verify/v1"' in result.stdout
    ((method, path, body),) = pushes
    assert (method, path) == ("PUT", f"/metrics/job/{PUSH_JOB}")
    samples = parse(body)
    assert value(samples, "gpuctl_verify_runs_total", result="failed") == 1
    assert value(samples, "gpuctl_verify_runs_total", result="ok") == 0
    assert value(samples, "gpuctl_node_proven", node="gpu-sick", product=HOSTILE_PRODUCT, level="smi") == 0
    assert value(samples, "gpuctl_node_gpus", node="gpu-0", state="seen") == 4
    assert families(body) <= set(METRICS)


def test_a_pushgateway_that_cannot_be_reached_exits_3_after_the_report(cluster: Any, cli: Any) -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", "--pushgateway", closed)
    assert result.exit_code == 3, result.output
    assert '"schema": "gpuctl.verify/v1"' in result.stdout
    assert f"--pushgateway {closed}: cannot push the metrics" in result.stderr
    assert "Traceback" not in result.stderr


def test_watch_rewrites_the_report_page_every_round(cluster: Any, tmp_path: Path) -> None:
    page = tmp_path / "verify.html"
    argv = [sys.executable, "-m", "gpuctl", "verify", "--watch", "--interval", "5", "--report", str(page)]
    argv += ["--kubeconfig", str(cluster.kubeconfig)]
    with running(argv, stdout=subprocess.DEVNULL) as process:
        wait_until(page.exists, "the first page")
        first = page.read_text(encoding="utf-8")
        assert 'data-nodes="3"' in first
        assert 'data-failing="1"' in first
        wait_until(lambda: page.read_text(encoding="utf-8") != first, "a later round's page", timeout=30)
        assert not list(tmp_path.glob(".verify.html*"))  # no staging file left behind
        stderr = interrupt(process)
    assert process.returncode == 130, stderr
    assert page.read_text(encoding="utf-8").rstrip().endswith("</html>")
