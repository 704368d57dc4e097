"""The lean per-node HTTP path (gpuctl.kube.fast_http) against the simulated cluster over real
HTTP and HTTPS: same answers, same errors and the same exit-3 mapping as the official client."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from gpuctl.errors import UnreachableError
from gpuctl.kube import fast_http
from gpuctl.kube.client import api_call, load_api_client
from tests.cluster._tls_proxy import TlsProxy, self_signed_certificate

SCENARIO = {"podStartSeconds": 0, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 8}]}


def _pod(name: str) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox:1.36", "command": ["echo", "hello"]}
    return {"metadata": {"name": name}, "spec": {"restartPolicy": "Never", "containers": [container]}}


def test_create_and_read_log_as_the_official_client_does(sim: Any) -> None:
    cluster = sim(SCENARIO)
    api = cluster.api_client()
    assert fast_http.transport_for(api) is not None

    created = fast_http.create_pod(api, "default", _pod("lean"))

    core = client.CoreV1Api(api)
    assert created["metadata"]["uid"] == core.read_namespaced_pod("lean", "default").metadata.uid
    plugin = core.list_namespaced_pod("kube-system").items[0]
    name, container = plugin.metadata.name, plugin.spec.containers[0].name
    official = core.read_namespaced_pod_log(name, "kube-system", container=container, tail_lines=1)
    lean = fast_http.read_log(api, "kube-system", name, {"container": container, "tailLines": 1})
    assert lean == official
    assert lean.count("\n") <= 1


def test_http_errors_are_api_exceptions_with_the_server_status(sim: Any) -> None:
    api = sim(SCENARIO).api_client()
    fast_http.create_pod(api, "default", _pod("twice"))
    with pytest.raises(ApiException) as conflict:
        fast_http.create_pod(api, "default", _pod("twice"))
    assert conflict.value.status == 409
    assert '"reason":"AlreadyExists"' in conflict.value.body.replace(" ", "")
    with pytest.raises(ApiException) as missing:
        fast_http.read_log(api, "default", "absent", {})
    assert missing.value.status == 404


def test_forbidden_maps_to_exit_3_like_the_official_client(sim: Any) -> None:
    api = sim({**SCENARIO, "forbidden": ["create pods"]}).api_client()
    with (
        pytest.raises(UnreachableError, match="not authorised: create pods in namespace default: 403"),
        api_call("create", "pods in namespace default"),
    ):
        fast_http.create_pod(api, "default", _pod("denied"))


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


def test_a_read_timeout_is_reported_as_the_client_reports_it(
    silent_server: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuctl.sim.server.http_server import kubeconfig_text

    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kubeconfig_text(f"http://127.0.0.1:{silent_server}"), encoding="utf-8")
    monkeypatch.setenv("GPUCTL_REQUEST_TIMEOUT", "1")
    api = load_api_client(kubeconfig)
    with (
        pytest.raises(UnreachableError, match="did not answer get pods/log in namespace default within 1 s"),
        api_call("get", "pods/log in namespace default"),
    ):
        fast_http.read_log(api, "default", "smi", {})


def _tls_kubeconfig(tmp_path: Path, port: int, ca: Path | None) -> Path:
    authority = f"certificate-authority: {ca}" if ca else "insecure-skip-tls-verify: true"
    kubeconfig = tmp_path / "tls.kubeconfig"
    kubeconfig.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: tls
  cluster:
    server: https://127.0.0.1:{port}
    {authority}
contexts:
- name: tls
  context: {{cluster: tls, user: tls}}
current-context: tls
users:
- name: tls
  user: {{token: sim}}
""",
        encoding="utf-8",
    )
    return kubeconfig


@pytest.fixture
def tls_front(sim: Any, tmp_path: Path) -> Iterator[tuple[TlsProxy, Path]]:
    cluster = sim(SCENARIO)
    cert, key = self_signed_certificate(tmp_path)
    proxy = TlsProxy(int(cluster.url.rsplit(":", 1)[1]), cert, key)
    yield proxy, cert
    proxy.close()


def test_https_with_the_kubeconfig_ca(tls_front: tuple[TlsProxy, Path], tmp_path: Path) -> None:
    proxy, ca = tls_front
    api = load_api_client(_tls_kubeconfig(tmp_path, proxy.port, ca))
    created = fast_http.create_pod(api, "default", _pod("over-tls"))
    assert created["metadata"]["name"] == "over-tls"


def test_https_with_an_unknown_ca_fails_verification(
    tls_front: tuple[TlsProxy, Path], tmp_path: Path
) -> None:
    proxy, _ = tls_front
    other_ca, _ = self_signed_certificate(
        tmp_path / "other" if (tmp_path / "other").mkdir() is None else tmp_path
    )
    api = load_api_client(_tls_kubeconfig(tmp_path, proxy.port, other_ca))
    with (
        pytest.raises(UnreachableError, match="CERTIFICATE_VERIFY_FAILED"),
        api_call("create", "pods in namespace default"),
    ):
        fast_http.create_pod(api, "default", _pod("refused"))


def test_https_insecure_skip_tls_verify(tls_front: tuple[TlsProxy, Path], tmp_path: Path) -> None:
    proxy, _ = tls_front
    api = load_api_client(_tls_kubeconfig(tmp_path, proxy.port, None))
    assert fast_http.create_pod(api, "default", _pod("insecure"))["metadata"]["name"] == "insecure"


def test_a_proxy_falls_back_to_the_official_client(sim: Any) -> None:
    api = sim(SCENARIO).api_client()
    api.configuration.proxy = "http://127.0.0.1:9"
    assert fast_http.transport_for(api) is None
