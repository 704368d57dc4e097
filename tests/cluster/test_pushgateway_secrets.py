"""Secrets in `verify --pushgateway`: a `user:password@` URL reaches a real HTTP server on loopback
as basic auth (the userinfo never in the request line), and the password is printed nowhere: not on
success, not on a 401 whose answer echoes it, not when the gateway is down. An https gateway is
verified (a self-signed certificate fails naming --pushgateway-ca, which then makes it pass). The
gateway's answer is text from the network: shown with its escapes visible, its markup literal. The
metrics server answers only /metrics and /healthz."""

from __future__ import annotations

import base64
import http.server
import socket
import ssl
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from gpuctl.report.metrics import PUSH_JOB
from tests.cluster._tls_proxy import self_signed_certificate
from tests.interrupt import interrupt, running
from tests.polling import wait_until

PASSWORD = "S3cret-pw_9f2c"
USER = "alice"
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-0", "gpus": 2, "gpuProduct": "NVIDIA-H100-80GB-HBM3"}],
}
# What a hostile or broken gateway may answer: a terminal escape (OSC 52 clipboard write), rich
# markup, a carriage return that would rewrite the line, and the password it was sent.
HOSTILE_ANSWER = f"\x1b]52;c;cHduZWQ=\x07[red]denied[/red]\rforged line {PASSWORD}\n"


@dataclass
class Gateway:
    """A Pushgateway's push endpoint on 127.0.0.1 that wants basic auth as alice, or always answers
    `status` with `answer`; it records each request's path and Authorization header."""

    port: int = 0
    status: int = 0
    answer: str = ""
    requests: list[tuple[str, str | None]] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)  # each request's Host header

    def url(self, userinfo: str = f"{USER}:{PASSWORD}", scheme: str = "http") -> str:
        return f"{scheme}://{userinfo}@127.0.0.1:{self.port}"


def _expected_auth() -> str:
    return "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


def _handler(gateway: Gateway) -> type[http.server.BaseHTTPRequestHandler]:
    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            authorization = self.headers.get("Authorization")
            gateway.requests.append((self.path, authorization))
            gateway.hosts.append(self.headers.get("Host", ""))
            status = gateway.status or (200 if authorization == _expected_auth() else 401)
            body = gateway.answer.encode() if status >= 400 else b""
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:  # the test's output stays quiet
            return

    return Receiver


def _serve(gateway: Gateway, tls: ssl.SSLContext | None = None) -> Iterator[Gateway]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(gateway))
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    gateway.port = server.server_port
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield gateway
    server.shutdown()
    server.server_close()


@pytest.fixture
def gateway() -> Iterator[Gateway]:
    yield from _serve(Gateway())


@pytest.fixture
def tls_gateway(tmp_path: Path) -> Iterator[tuple[Gateway, Path]]:
    cert, key = self_signed_certificate(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    for served in _serve(Gateway(), context):
        yield served, cert


@pytest.fixture
def cluster(sim: Any) -> Any:
    started = sim(SCENARIO)
    wait_until(lambda: started.allocatable_gpus() == {"gpu-0": 2}, "GPUs advertised")
    return started


def _assert_never_shown(*texts: str) -> None:
    for text in texts:
        assert PASSWORD not in text
        assert base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode() not in text


def test_the_password_is_sent_as_basic_auth_and_shown_nowhere(
    cluster: Any, cli: Any, gateway: Gateway, tmp_path: Path
) -> None:
    page = tmp_path / "verify.html"
    argv = ["verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", "--report", page]
    result = cli(*argv, "--pushgateway", gateway.url())
    assert result.exit_code == 0, result.output
    assert gateway.requests == [(f"/metrics/job/{PUSH_JOB}", _expected_auth())]
    assert gateway.hosts == [f"127.0.0.1:{gateway.port}"]  # the userinfo is not part of the URL used
    _assert_never_shown(result.stdout, result.stderr, page.read_text(encoding="utf-8"))


def test_a_refused_password_exits_3_naming_the_gateway_without_it(
    cluster: Any, cli: Any, gateway: Gateway
) -> None:
    gateway.answer = HOSTILE_ANSWER.replace(PASSWORD, "wrong")  # it echoes the password it was sent
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "--pushgateway", gateway.url("alice:wrong"))
    assert result.exit_code == 3, result.output
    error, hint = result.stderr.splitlines()[-2:]
    assert error.startswith(f"error: --pushgateway http://alice:xxxxx@127.0.0.1:{gateway.port}: ")
    assert "HTTP 401" in error
    assert "wrong" not in result.stderr
    assert hint.startswith("hint: ")
    assert "USER:PASSWORD@" in hint
    # The answer is quoted as text: its escape and carriage return visible, its markup literal,
    # the password it echoed redacted.
    assert "\\x1b]52;c;cHduZWQ=\\x07[red]denied[/red]\\rforged line xxxxx" in error
    assert "\x1b" not in result.stderr
    assert "\r" not in result.stderr


def test_a_gateway_that_is_down_is_named_without_the_password(cluster: Any, cli: Any) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://{USER}:{PASSWORD}@127.0.0.1:{probe.getsockname()[1]}"
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", "--pushgateway", closed)
    assert result.exit_code == 3, result.output
    assert f"--pushgateway http://{USER}:xxxxx@127.0.0.1:" in result.stderr
    _assert_never_shown(result.stdout, result.stderr)
    assert "Traceback" not in result.stderr


def test_an_https_gateway_is_verified_against_pushgateway_ca(
    cluster: Any, cli: Any, tls_gateway: tuple[Gateway, Path]
) -> None:
    gateway, cert = tls_gateway
    url = gateway.url(scheme="https")
    unverified = cli("verify", "--kubeconfig", cluster.kubeconfig, "--pushgateway", url)
    assert unverified.exit_code == 3, unverified.output
    error, hint = unverified.stderr.splitlines()[-2:]
    assert error.startswith(f"error: --pushgateway https://{USER}:xxxxx@127.0.0.1:{gateway.port}: ")
    assert "certificate does not verify" in error
    assert "--pushgateway-ca" in hint
    assert gateway.requests == []  # nothing was sent to a server that did not prove who it is
    verified = cli(
        "verify", "--kubeconfig", cluster.kubeconfig, "--pushgateway", url, "--pushgateway-ca", cert
    )
    assert verified.exit_code == 0, verified.output
    assert gateway.requests == [(f"/metrics/job/{PUSH_JOB}", _expected_auth())]
    _assert_never_shown(unverified.output, verified.output)


@pytest.mark.slow
def test_watch_warns_of_a_failed_push_with_the_answer_shown_literally(cluster: Any) -> None:
    served = _serve(Gateway(status=500, answer=HOSTILE_ANSWER))
    gateway = next(served)
    argv = [sys.executable, "-m", "gpuctl", "verify", "--watch", "--interval", "30"]
    argv += ["--kubeconfig", str(cluster.kubeconfig), "--pushgateway", gateway.url()]
    with running(argv, stdout=subprocess.DEVNULL) as process:
        assert process.stderr is not None
        # The warning comes once the gateway's answer is back: read up to it, then Ctrl-C (a
        # Ctrl-C as soon as the gateway has the request could cut the push short, warning unsaid)
        lines: list[str] = []
        while not (line := process.stderr.readline()).startswith("warning: --pushgateway"):
            assert line, f"gpuctl ended without warning of the failed push: {''.join(lines)}"
            lines.append(line)
        stderr = "".join(lines) + line + interrupt(process)
    assert gateway.requests
    next(served, None)
    (warning,) = [line for line in stderr.splitlines() if line.startswith("warning: --pushgateway")]
    assert "HTTP 500" in warning
    assert "\\x1b]52;c;cHduZWQ=\\x07[red]denied[/red]\\rforged line xxxxx" in warning
    assert "\x1b" not in stderr
    assert "\r" not in stderr
    _assert_never_shown(stderr)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.slow
def test_the_metrics_server_answers_only_metrics_and_healthz(cluster: Any) -> None:
    argv = [sys.executable, "-m", "gpuctl", "verify", "--watch", "--interval", "30"]
    argv += ["--metrics-addr", "127.0.0.1:0", "--kubeconfig", str(cluster.kubeconfig)]
    with running(argv, stdout=subprocess.DEVNULL) as process:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("serving metrics on http://127.0.0.1:"), line
        base = line.split()[-1].removesuffix("/metrics")
        wait_until(lambda: "gpuctl_verify_runs_total" in _get(f"{base}/metrics")[1], "a first run")
        assert _get(f"{base}/healthz") == (200, "ok\n")
        for path in ("/", "/metric", "/metrics/", "/metrics/x", "/favicon.ico", "/healthz/x", "/debug"):
            status, body = _get(base + path)
            assert status == 404, path
            assert "gpuctl_" not in body
        stderr = interrupt(process)
    assert process.returncode == 130, stderr
