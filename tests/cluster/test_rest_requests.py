"""gpuctl.kube.rest_requests: requests (lists in pages, gets, watches, deletes, creating a
verification pod, reading its log) through the official client's REST layer, without its generated
API classes, against the simulated cluster over HTTP and HTTPS: the answers of the generated API
methods, the client's errors and their exit-3 mapping, its TLS
settings, its connection pool and its token refresh."""

from __future__ import annotations

import copy
import http.server
import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gpuctl.errors import UnreachableError
from gpuctl.kube import rest_requests
from gpuctl.kube.client import TOKEN_REFRESH_INTERVAL_S, api_call, load_api_client, pooled_client
from gpuctl.kube.pods import LogUnavailable, read_pod_log
from gpuctl.kube.raw import PagedList, name_of, stream_json_lines
from tests.cluster._tls_proxy import TlsProxy, self_signed_certificate
from tests.polling import wait_until

SCENARIO = {"podStartSeconds": 0, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 8}]}


def _pod(name: str) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox:1.36", "command": ["echo", "hello"]}
    return {"metadata": {"name": name}, "spec": {"restartPolicy": "Never", "containers": [container]}}


def test_create_and_read_log_answer_as_the_generated_methods_do(sim: Any) -> None:
    api = sim(SCENARIO).api_client()

    created = json.loads(rest_requests.create_pod(api, "default", _pod("lean")))

    core = client.CoreV1Api(api)
    assert created["metadata"]["uid"] == core.read_namespaced_pod("lean", "default").metadata.uid
    plugin = core.list_namespaced_pod("kube-system").items[0]
    name, container = plugin.metadata.name, plugin.spec.containers[0].name
    official = core.read_namespaced_pod_log(name, "kube-system", container=container, tail_lines=1)
    lean = rest_requests.read_log(api, "kube-system", name, {"container": container, "tailLines": 1})
    assert lean == official
    assert lean.count("\n") <= 1


def test_lists_pages_watches_and_deletes_answer_as_the_generated_methods_do(sim: Any) -> None:
    api = sim({**SCENARIO, "nodes": [{"name": "gpu-{i}", "count": 3, "gpus": 8}]}).api_client()
    core = client.CoreV1Api(api)
    official = [node.metadata.name for node in core.list_node().items]
    pages = PagedList(api, "/api/v1/nodes")
    assert [name_of(node) for node in pages] == official == ["gpu-0", "gpu-1", "gpu-2"]
    assert pages.resource_version == core.list_node().metadata.resource_version
    node = rest_requests.get_json(api, "/api/v1/nodes/{name}", name="gpu-1")
    assert node["metadata"]["uid"] == core.read_node("gpu-1").metadata.uid

    labelled = {**_pod("watched"), "metadata": {"name": "watched", "labels": {"run": "lean"}}}
    rest_requests.create_pod(api, "default", labelled)
    query = {"labelSelector": "run=lean", "resourceVersion": "0", "timeoutSeconds": 1}
    response = rest_requests.watch(api, "/api/v1/namespaces/{namespace}/pods", query, namespace="default")
    first = next(stream_json_lines(response))
    response.close()
    assert (first["type"], name_of(first["object"])) == ("ADDED", "watched")

    pods = "/api/v1/namespaces/{namespace}/pods"
    rest_requests.delete_collection(api, pods, {"labelSelector": "run=lean"}, namespace="default")
    # A pod the kubelet already started stays until its containers are stopped (graceful deletion).
    wait_until(
        lambda: core.list_namespaced_pod("default", label_selector="run=lean").items == [],
        "the deleted collection gone",
    )
    with pytest.raises(ApiException) as missing:
        rest_requests.request_json(api, "DELETE", pods + "/{name}", namespace="default", name="watched")
    assert missing.value.status == 404


def test_http_errors_are_the_clients_api_exceptions(sim: Any) -> None:
    api = sim(SCENARIO).api_client()
    rest_requests.create_pod(api, "default", _pod("twice"))
    with pytest.raises(ApiException) as conflict:
        rest_requests.create_pod(api, "default", _pod("twice"))
    assert conflict.value.status == 409
    assert '"reason":"AlreadyExists"' in str(conflict.value.body).replace(" ", "")
    with pytest.raises(ApiException) as missing:
        rest_requests.read_log(api, "default", "absent", {})
    assert missing.value.status == 404
    unavailable = read_pod_log(api, "default", "absent")
    assert isinstance(unavailable, LogUnavailable)
    assert unavailable.message.startswith("404 Not Found")


def test_forbidden_maps_to_exit_3(sim: Any) -> None:
    api = sim({**SCENARIO, "forbidden": ["create pods"]}).api_client()
    with (
        pytest.raises(UnreachableError, match="not authorised: create pods in namespace default: 403"),
        api_call("create", "pods in namespace default"),
    ):
        rest_requests.create_pod(api, "default", _pod("denied"))


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A server that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    yield int(listener.getsockname()[1])
    for connection in accepted:
        connection.close()
    listener.close()


def test_a_read_timeout_is_reported_with_the_request_timeout(
    silent_server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuctl.sim.server.http_server import kubeconfig_text

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kubeconfig_text(f"http://127.0.0.1:{silent_server}", "token"), encoding="utf-8")
    monkeypatch.setenv("GPUCTL_REQUEST_TIMEOUT", "1")
    api = load_api_client(kubeconfig)
    with (
        pytest.raises(UnreachableError, match="did not answer get pods/log in namespace default within 1 s"),
        api_call("get", "pods/log in namespace default"),
    ):
        read_pod_log(api, "default", "smi")


def _discarded_connections(api_client: Any, threads: int, prefix: str, caplog: Any) -> int:
    """Create threads * 10 pods from `threads` threads; how often urllib3 dropped a connection
    because the client's pool was full (the next request then opens a new one)."""
    caplog.clear()
    names = [f"{prefix}-{index}" for index in range(threads * 10)]
    with (
        caplog.at_level(logging.WARNING, logger="urllib3.connectionpool"),
        ThreadPoolExecutor(threads) as pool,
    ):
        list(pool.map(lambda name: rest_requests.create_pod(api_client, "default", _pod(name)), names))
    return sum("Connection pool is full" in record.getMessage() for record in caplog.records)


def test_worker_threads_keep_their_connections_in_the_pooled_client(sim: Any, caplog: Any) -> None:
    """verify sends from `concurrency` threads through `pooled_client`: a keep-alive connection
    for each thread; a pool smaller than the threads drops connections and opens new ones."""
    api = sim(SCENARIO).api_client()
    threads = 16
    assert _discarded_connections(pooled_client(api, threads), threads, "pooled", caplog) == 0
    small = copy.deepcopy(api.configuration)  # the same server, token and CA; a pool of 2
    small.connection_pool_maxsize = 2
    assert _discarded_connections(type(api)(small), threads, "small", caplog) > 0


def _tls_kubeconfig(tmp_path: Path, proxy: TlsProxy, ca: Path | None) -> Path:
    authority = f"certificate-authority: {ca}" if ca else "insecure-skip-tls-verify: true"
    kubeconfig = tmp_path / "tls.kubeconfig"
    kubeconfig.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: tls
  cluster:
    server: https://127.0.0.1:{proxy.port}
    {authority}
contexts:
- name: tls
  context: {{cluster: tls, user: tls}}
current-context: tls
users:
- name: tls
  user: {{token: {proxy.token}}}
""",
        encoding="utf-8",
    )
    return kubeconfig


@pytest.fixture
def tls_front(sim: Any, tmp_path: Path) -> Iterator[tuple[TlsProxy, Path]]:
    cluster = sim(SCENARIO)
    cert, key = self_signed_certificate(tmp_path)
    proxy = TlsProxy(cluster.server, cert, key)
    yield proxy, cert
    proxy.close()


def test_https_with_the_kubeconfig_ca(tls_front: tuple[TlsProxy, Path], tmp_path: Path) -> None:
    proxy, ca = tls_front
    api = load_api_client(_tls_kubeconfig(tmp_path, proxy, ca))
    created = json.loads(rest_requests.create_pod(api, "default", _pod("over-tls")))
    assert created["metadata"]["name"] == "over-tls"
    plugin = client.CoreV1Api(api).list_namespaced_pod("kube-system").items[0].metadata.name
    log = read_pod_log(api, "kube-system", plugin)
    assert isinstance(log, str)
    assert log


def test_https_with_an_unknown_ca_fails_verification(
    tls_front: tuple[TlsProxy, Path], tmp_path: Path
) -> None:
    proxy, _ = tls_front
    (tmp_path / "other").mkdir()
    other_ca, _ = self_signed_certificate(tmp_path / "other")
    api = load_api_client(_tls_kubeconfig(tmp_path, proxy, other_ca))
    with (
        pytest.raises(UnreachableError, match="CERTIFICATE_VERIFY_FAILED"),
        api_call("create", "pods in namespace default"),
    ):
        rest_requests.create_pod(api, "default", _pod("refused"))


def test_https_insecure_skip_tls_verify(tls_front: tuple[TlsProxy, Path], tmp_path: Path) -> None:
    proxy, _ = tls_front
    api = load_api_client(_tls_kubeconfig(tmp_path, proxy, None))
    assert (
        json.loads(rest_requests.create_pod(api, "default", _pod("insecure")))["metadata"]["name"]
        == "insecure"
    )


class _RecordingHandler(http.server.BaseHTTPRequestHandler):
    """Answers every POST with 201 and the body it got; keeps each request's Authorization."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.seen.append(self.headers.get("Authorization", ""))
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_an_expiring_exec_token_is_renewed_once_the_refresh_interval_has_passed(tmp_path: Path) -> None:
    """The client re-runs an exec plugin whose token is about to expire (within its 5-minute
    skew); gpuctl lets it do so at most once per TOKEN_REFRESH_INTERVAL_S. A request sent after
    that interval carries the plugin's newest token, as a generated method's would."""
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import datetime, json, pathlib\n"
        f"counter = pathlib.Path({str(tmp_path / 'runs')!r})\n"
        "runs = int(counter.read_text()) + 1 if counter.exists() else 1\n"
        "counter.write_text(str(runs))\n"
        "expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)\n"
        "status = {'token': f'token-{runs}', 'expirationTimestamp': expiry.strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',\n"
        "                  'status': status}))\n",
        encoding="utf-8",
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _RecordingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = tmp_path / "exec.kubeconfig"
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "exec",
                "clusters": [
                    {"name": "exec", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}
                ],
                "contexts": [{"name": "exec", "context": {"cluster": "exec", "user": "exec"}}],
                "users": [{"name": "exec", "user": user}],
            }
        ),
        encoding="utf-8",
    )
    try:
        api = load_api_client(kubeconfig)
        _RecordingHandler.seen = []
        assert (
            json.loads(rest_requests.create_pod(api, "default", _pod("first")))["metadata"]["name"] == "first"
        )
        first_runs = int((tmp_path / "runs").read_text())
        time.sleep(TOKEN_REFRESH_INTERVAL_S + 0.1)  # the interval passes
        assert (
            json.loads(rest_requests.create_pod(api, "default", _pod("second")))["metadata"]["name"]
            == "second"
        )
        runs = int((tmp_path / "runs").read_text())
    finally:
        server.shutdown()
        server.server_close()
    assert _RecordingHandler.seen == [f"Bearer token-{first_runs}", f"Bearer token-{runs}"]
    assert runs > first_runs


@pytest.mark.parametrize(
    "command",
    [["verify", "-o", "json"], ["status", "-o", "json"], ["taint-gpu-nodes", "--dry-run", "-o", "json"]],
)
def test_commands_on_this_layer_never_import_a_generated_api_class(sim: Any, command: list[str]) -> None:
    """Importing the generated API classes loads their pydantic models (~0.6 s of CPU a run)."""
    cluster = sim({**SCENARIO, "podStartSeconds": 0})
    code = (
        "import sys; from gpuctl.cli.main import run;"
        f"rc = run({[*command, '--kubeconfig', str(cluster.kubeconfig)]!r});"
        "generated = sorted(m for m in sys.modules if m.startswith('kubernetes.client.api.'));"
        "print('EXIT', rc, 'GENERATED', generated)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert "EXIT 0 GENERATED []" in result.stdout, result.stdout[-2000:] + result.stderr[-2000:]
