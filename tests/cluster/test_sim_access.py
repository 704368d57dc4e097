"""Only the holder of the sim's kubeconfig gets in: over TLS, with its bearer token, under a loopback
Host, with a Kubernetes body; and what `sim up` writes is owner-only and never written through a
link someone planted."""

from __future__ import annotations

import http.client
import json
import os
import socket
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.sim.server.tls import client_context
from tests.cluster.test_sim_kubeconfig_safety import gpuctl

SCENARIO = {"nodes": [{"name": "gpu-0", "gpus": 2}]}
CONFIGMAP = json.dumps({"metadata": {"name": "from-a-page"}, "data": {"a": "1"}}).encode()
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"


def _answer(
    cluster: Any, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, Any]:
    """Status and decoded Status body of one raw request over TLS, with exactly `headers`."""
    port = int(cluster.url.rsplit(":", 1)[1])
    connection = http.client.HTTPSConnection(
        "127.0.0.1", port, timeout=10, context=client_context(cluster.server.certificate.certificate_pem)
    )
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        text = response.read()
        return response.status, json.loads(text) if response.getheader(
            "Content-Type"
        ) == "application/json" else text
    finally:
        connection.close()


def _headers(cluster: Any, **extra: str) -> dict[str, str]:
    return {"Host": cluster.url.removeprefix("https://"), **cluster.server.auth_headers, **extra}


@pytest.mark.parametrize("path", ["/api/v1/nodes", "/version", "/apis", "/metrics", "/healthz"])
def test_a_request_without_the_token_is_unauthorized(sim: Any, path: str) -> None:
    cluster = sim(SCENARIO)
    status, body = _answer(cluster, "GET", path, {"Host": cluster.url.removeprefix("https://")})
    assert (status, body["reason"], body["kind"]) == (401, "Unauthorized", "Status")
    assert _answer(cluster, "GET", path, _headers(cluster))[0] == 200


@pytest.mark.parametrize("credential", ["Bearer gpuctl-sim", "Bearer ", "Basic YWRtaW46YWRtaW4=", "token"])
def test_a_wrong_credential_is_unauthorized(sim: Any, credential: str) -> None:
    cluster = sim(SCENARIO)
    status, _ = _answer(cluster, "GET", "/api/v1/nodes", _headers(cluster, Authorization=credential))
    assert status == 401


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.2:{port}", ""])
def test_a_foreign_host_header_is_refused_even_with_the_token(sim: Any, host: str) -> None:
    """DNS rebinding: a page's request reaches 127.0.0.1 but names the page's own host."""
    cluster = sim(SCENARIO)
    port = cluster.url.rsplit(":", 1)[1]
    status, body = _answer(cluster, "GET", "/api/v1/nodes", _headers(cluster, Host=host.format(port=port)))
    assert status == 421
    assert "loopback" in body["message"]


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_loopback_names_with_the_port_are_served(sim: Any, host: str) -> None:
    cluster = sim(SCENARIO)
    port = cluster.url.rsplit(":", 1)[1]
    assert _answer(cluster, "GET", "/api/v1/nodes", _headers(cluster, Host=host.format(port=port)))[0] == 200


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ],
)
def test_a_body_a_browser_may_send_across_origins_is_unsupported(sim: Any, content_type: str) -> None:
    cluster = sim(SCENARIO)
    headers = _headers(cluster, **{"Content-Type": content_type})
    status, body = _answer(cluster, "POST", CONFIGMAPS, headers, CONFIGMAP)
    assert (status, body["reason"]) == (415, "UnsupportedMediaType")
    assert _answer(cluster, "GET", f"{CONFIGMAPS}/from-a-page", _headers(cluster))[0] == 404


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", ""])
def test_kubernetes_bodies_are_served(sim: Any, content_type: str) -> None:
    cluster = sim(SCENARIO)
    headers = _headers(cluster, **({"Content-Type": content_type} if content_type else {}))
    assert _answer(cluster, "POST", CONFIGMAPS, headers, CONFIGMAP)[0] == 201


def test_plain_http_gets_the_api_servers_answer_and_nothing_else(sim: Any) -> None:
    cluster = sim(SCENARIO)
    port = int(cluster.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(b"GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer = b"".join(iter(lambda: connection.recv(4096), b""))
    assert answer.startswith(b"HTTP/1.0 400 Bad Request")
    assert answer.endswith(b"Client sent an HTTP request to an HTTPS server.\n")


def test_a_client_that_does_not_trust_the_certificate_fails_verification(sim: Any) -> None:
    cluster = sim(SCENARIO)
    anyone = ssl.create_default_context()
    with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
        urllib.request.urlopen(cluster.url + "/version", timeout=10, context=anyone)


def test_every_sim_has_its_own_token_and_certificate(sim: Any) -> None:
    first, second = sim(SCENARIO), sim(SCENARIO)
    assert first.server.token != second.server.token
    assert first.server.certificate != second.server.certificate
    assert len(first.server.token) >= 43  # 256 bits, URL-safe base64


# -- the files `sim up` writes ------------------------------------------------------------------------
def _scenario(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(SCENARIO), encoding="utf-8")
    return path


def test_the_kubeconfig_and_its_sidecars_are_owner_only_and_real_clients_use_them(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "folder" / "sim.kubeconfig"
    up = gpuctl("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.returncode == 0, up.stderr
        written = sorted(path.name for path in kubeconfig.parent.iterdir())
        assert written == ["sim.kubeconfig", "sim.kubeconfig.sim.json", "sim.kubeconfig.sim.log"]
        for name in written:
            assert (kubeconfig.parent / name).stat().st_mode & 0o777 == 0o600, name
        user = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))["users"][0]["user"]
        assert user["token"] not in (kubeconfig.parent / "sim.kubeconfig.sim.json").read_text(
            encoding="utf-8"
        )
        status = gpuctl("status", "--kubeconfig", kubeconfig, "-o", "json")
        assert status.returncode == 0, status.stderr
    finally:
        down = gpuctl("sim", "down", "--kubeconfig", kubeconfig)
    assert down.returncode == 0, down.stderr


@pytest.mark.parametrize("planted", ["sim.kubeconfig", "sim.kubeconfig.sim.json", "sim.kubeconfig.sim.log"])
def test_a_link_planted_at_a_path_sim_up_writes_is_refused(tmp_path: Path, planted: str) -> None:
    victim = tmp_path / "victim"
    victim.write_text("the victim's file\n", encoding="utf-8")
    (tmp_path / planted).symlink_to(victim)
    kubeconfig = tmp_path / "sim.kubeconfig"
    up = gpuctl("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    if up.returncode == 0:
        gpuctl("sim", "down", "--kubeconfig", kubeconfig)
    assert up.returncode == 2, up.stdout + up.stderr
    assert f"{tmp_path / planted}: is a symbolic link" in up.stderr
    assert "Traceback" not in up.stderr
    assert victim.read_text(encoding="utf-8") == "the victim's file\n"
    assert (tmp_path / planted).is_symlink()


def test_a_kubeconfig_merged_into_is_left_owner_only_with_no_temporary_file(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
        "clusters: [{name: prod, cluster: {server: 'https://10.0.0.1:6443'}}]\n"
        "contexts: [{name: prod, context: {cluster: prod, user: admin}}]\nusers: [{name: admin, user: {}}]\n",
        encoding="utf-8",
    )
    os.chmod(kubeconfig, 0o644)
    up = gpuctl("sim", "up", "--scenario", _scenario(tmp_path), "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.returncode == 0, up.stderr
        assert kubeconfig.stat().st_mode & 0o777 == 0o600
        assert not [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")]
    finally:
        gpuctl("sim", "down", "--kubeconfig", kubeconfig)
