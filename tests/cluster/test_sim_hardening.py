"""The sim's HTTP and authentication edges, each as kube-apiserver answers it: bodies sent in
chunks (kubectl's `create --raw -f`), idle kept-alive connections closed, ServiceAccount tokens
for another audience refused, /metrics authorised as any non-resource URL, Events that expire
after the scenario's eventTTLSeconds."""

from __future__ import annotations

import json
import socket
import ssl
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from gpuctl.sim.server.tls import client_context
from tests.kubectl import Kubectl, needs_kubectl

SCENARIO: dict[str, Any] = {"nodes": [{"name": "gpu-0", "gpus": 2}]}
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


class RawConnection:
    """One TLS connection to the sim, written and read byte for byte (nothing re-frames it)."""

    def __init__(self, cluster: Any, token: str = "") -> None:
        self.token = token or cluster.server.token  # the sim's admin, or whom the test names
        self.host = cluster.url.removeprefix("https://")
        port = int(self.host.rsplit(":", 1)[1])
        context = client_context(cluster.server.certificate.certificate_pem)
        self.socket: ssl.SSLSocket = context.wrap_socket(
            socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1"
        )
        self.buffer = b""

    def send(self, method: str, path: str, body_lines: bytes = b"", **headers: str) -> None:
        head = [f"{method} {path} HTTP/1.1", f"Host: {self.host}"]
        head.append(f"Authorization: Bearer {self.token}")
        head += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
        self.socket.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body_lines)

    def response(self) -> tuple[int, dict[str, str], bytes]:
        """Status, headers (lower-case names) and body of the next response (Content-Length framed)."""
        while b"\r\n\r\n" not in self.buffer:
            self._read()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {
            name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])
        }
        length = int(headers["content-length"])
        while len(self.buffer) < length:
            self._read()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return int(lines[0].split()[1]), headers, body

    def closed_by_server(self) -> bool:
        """The server closed the connection (end of stream), with nothing more sent."""
        try:
            return self.socket.recv(1) == b""
        except (ConnectionResetError, ssl.SSLError):
            return True

    def _read(self) -> None:
        data = self.socket.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def close(self) -> None:
        self.socket.close()


def _chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


def _configmap(name: str) -> bytes:
    return json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}}
    ).encode()


@needs_kubectl
def test_kubectl_create_raw_sends_its_file_in_chunks_and_the_sim_reads_them(sim: Any, tmp_path: Path) -> None:
    cluster = sim(SCENARIO)
    manifest = tmp_path / "configmap.json"
    manifest.write_bytes(_configmap("from-raw"))
    created = json.loads(Kubectl(cluster, tmp_path).ok("create", "--raw", CONFIGMAPS, "-f", str(manifest)))
    assert created["metadata"]["name"] == "from-raw"
    stored = client.CoreV1Api(cluster.api_client()).read_namespaced_config_map("from-raw", "default")
    assert stored.data == {"a": "1"}


def test_a_chunked_body_is_read_whole_and_the_connection_goes_on(sim: Any) -> None:
    cluster = sim(SCENARIO)
    connection = RawConnection(cluster)
    try:
        body = _configmap("in-chunks")
        connection.send(
            "POST",
            CONFIGMAPS,
            _chunked(body[:10], body[10:]),
            Content_Type="application/json",
            Transfer_Encoding="chunked",
        )
        status, _, answer = connection.response()
        assert (status, json.loads(answer)["metadata"]["name"]) == (201, "in-chunks")
        connection.send("GET", f"{CONFIGMAPS}/in-chunks")  # the same connection: framing kept
        status, _, answer = connection.response()
        assert (status, json.loads(answer)["data"]) == (200, {"a": "1"})
    finally:
        connection.close()


@pytest.mark.parametrize(
    "malformed",
    [b"zz\r\n{}\r\n0\r\n\r\n", b"5\r\n{}\r\n0\r\n\r\n", b"-1\r\n{}\r\n0\r\n\r\n"],
    ids=["size-not-hex", "chunk-longer-than-its-data", "negative-size"],
)
def test_a_malformed_chunked_body_is_400_with_a_status_and_the_connection_is_closed(
    sim: Any, malformed: bytes
) -> None:
    cluster = sim(SCENARIO)
    connection = RawConnection(cluster)
    try:
        connection.send(
            "POST", CONFIGMAPS, malformed, Content_Type="application/json", Transfer_Encoding="chunked"
        )
        status, headers, answer = connection.response()
        status_object = json.loads(answer)
        assert (status, status_object["kind"], status_object["reason"]) == (400, "Status", "BadRequest")
        assert "malformed chunked encoding" in status_object["message"]
        assert headers["connection"] == "close"
        assert connection.closed_by_server()
    finally:
        connection.close()
    assert client.CoreV1Api(cluster.api_client()).list_namespaced_config_map("default").items == []


def test_an_idle_kept_alive_connection_is_closed_and_a_long_watch_is_not(sim: Any) -> None:
    cluster = sim({**SCENARIO, "idleTimeoutSeconds": 1})
    idle = RawConnection(cluster)
    try:
        idle.send("GET", "/version")
        assert idle.response()[0] == 200
        idle.send("GET", "/metrics")  # served outside the routes, and idle after it all the same
        assert idle.response()[0] == 200
        started = time.monotonic()
        assert idle.closed_by_server()  # blocks until the server closes it
        assert 0.5 < time.monotonic() - started < 5
        # A watch is a request being served, however long: it runs to its own timeoutSeconds.
        watching = RawConnection(cluster)
        watching.send("GET", "/api/v1/nodes?watch=true&timeoutSeconds=3")
        started = time.monotonic()
        received = b""
        while not received.endswith(b"0\r\n\r\n"):
            data = watching.socket.recv(65536)
            assert data, "the watch was cut off"
            received += data
        assert time.monotonic() - started > 2.5
        assert b'"type":"ADDED"' in received
        watching.close()
    finally:
        idle.close()


def _service_account_token(kubectl: Kubectl, *audience: str) -> str:
    """A token of a ServiceAccount that may list ConfigMaps, and nothing more."""
    kubectl.ok("create", "serviceaccount", "reader")
    kubectl.ok("create", "clusterrole", "reader", "--verb=list", "--resource=configmaps")
    kubectl.ok(
        "create", "clusterrolebinding", "reader", "--clusterrole=reader", "--serviceaccount=default:reader"
    )
    return kubectl.ok("create", "token", "reader", *audience).strip()


def _get(cluster: Any, path: str, token: str) -> int:
    connection = RawConnection(cluster, token)
    try:
        connection.send("GET", path)
        return connection.response()[0]
    finally:
        connection.close()


@needs_kubectl
def test_a_token_requested_for_another_audience_is_no_credential_here(sim: Any, tmp_path: Path) -> None:
    cluster = sim({**SCENARIO, "rbac": "enforce"})
    kubectl = Kubectl(cluster, tmp_path)
    for_vault = _service_account_token(kubectl, "--audience", "https://vault.example")
    for_the_api = kubectl.ok("create", "token", "reader").strip()
    assert _get(cluster, "/api/v1/namespaces/default/configmaps", for_vault) == 401
    assert _get(cluster, "/api/v1/namespaces/default/configmaps", for_the_api) == 200
    both = kubectl.ok(
        "create", "token", "reader", "--audience", "https://vault.example",
        "--audience", "https://kubernetes.default.svc.cluster.local",
    ).strip()  # fmt: skip
    assert _get(cluster, "/api/v1/namespaces/default/configmaps", both) == 200


@needs_kubectl
def test_metrics_are_authorised_as_a_non_resource_url(sim: Any, tmp_path: Path) -> None:
    cluster = sim({**SCENARIO, "rbac": "enforce"})
    kubectl = Kubectl(cluster, tmp_path)
    token = _service_account_token(kubectl)
    assert _get(cluster, "/healthz", token) == 200  # system:public-info-viewer: everyone
    assert _get(cluster, "/metrics", token) == 403  # no rule grants it /metrics
    assert _get(cluster, "/metrics", cluster.server.token) == 200  # the admin
    kubectl.ok("create", "clusterrole", "scraper", "--verb=get", "--non-resource-url=/metrics")
    kubectl.ok(
        "create", "clusterrolebinding", "scraper", "--clusterrole=scraper", "--serviceaccount=default:reader"
    )
    assert _get(cluster, "/metrics", token) == 200


def _request(cluster: Any, method: str, path: str, body: bytes = b"") -> Any:
    connection = RawConnection(cluster)
    try:
        headers = {"Content_Type": "application/json", "Content_Length": str(len(body))} if body else {}
        connection.send(method, path, body, **headers)
        status, _, answer = connection.response()
        assert status < 300, answer
        return json.loads(answer)
    finally:
        connection.close()


def test_events_expire_after_the_event_ttl_and_watchers_see_them_go(sim: Any) -> None:
    cluster = sim({**SCENARIO, "eventTTLSeconds": 1})
    events = "/api/v1/namespaces/default/events"
    event = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Node", "name": "gpu-0"},
        "reason": "Test",
    }
    _request(cluster, "POST", events, json.dumps(event).encode())
    listed = _request(cluster, "GET", events)
    assert [item["metadata"]["name"] for item in listed["items"]] == ["e1"]
    time.sleep(1.2)
    assert _request(cluster, "GET", events)["items"] == []  # gone, with no write since
    connection = RawConnection(cluster)
    try:
        version = listed["metadata"]["resourceVersion"]
        connection.send("GET", f"{events}?watch=true&resourceVersion={version}&timeoutSeconds=1")
        received = b""
        while not received.endswith(b"0\r\n\r\n"):
            received += connection.socket.recv(65536)
    finally:
        connection.close()
    assert b'"type":"DELETED"' in received
    assert b'"name":"e1"' in received
