"""SimServer: the simulated cluster served over HTTP/1.1 with TLS on loopback, plus its kubeconfig."""

from __future__ import annotations

import base64
import socket
import ssl
import sys
import threading
import time
from collections.abc import Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from gpuctl.private_files import write_private_file
from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.messages import encode
from gpuctl.sim.api.router import Api, Request, Response
from gpuctl.sim.api.tokens import TokenRegistry
from gpuctl.sim.runtime.cluster import Cluster
from gpuctl.sim.runtime.host_nodes import HostLink
from gpuctl.sim.scenario import Scenario
from gpuctl.sim.server.access import AccessGate, new_token
from gpuctl.sim.server.bodies import read_body
from gpuctl.sim.server.metrics import CONTENT_TYPE, METRICS_PATH, RequestMetrics
from gpuctl.sim.server.tls import ServingCertificate, new_serving_certificate, server_context

_date_header: list[tuple[int, str]] = [(0, "")]  # (second, its Date header), swapped whole


_VERSIONS = ("HTTP/1.0", "HTTP/1.1")
_MAX_LINE = 65536  # http.server's limits
_MAX_HEADERS = 100
HANDSHAKE_TIMEOUT_S = 10.0  # a client that connects and says nothing holds a thread this long at most
_TLS_RECORD_HANDSHAKE = b"\x16"  # the first byte a TLS client sends
# What a real API server answers to plain http on its https port (Go's net/http says the same).
_PLAIN_HTTP_ANSWER = (
    b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"Client sent an HTTP request to an HTTPS server.\n"
)


class _Headers(dict[str, str]):
    """Request headers by lower-case name; `get` takes any case, as email.message.Message's does."""

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A watch's headers and each of its chunks go out in separate writes; with Nagle on, a write
    # after the first waits for the client's delayed ACK (~40 ms on loopback).
    disable_nagle_algorithm = True
    server: _HttpServer
    raw_requestline: bytes  # set by http.server before parse_request

    def date_time_string(self, timestamp: float | None = None) -> str:
        """The Date header, formatted once per second (email.utils.formatdate is costly per request)."""
        if timestamp is not None:
            return super().date_time_string(timestamp)
        second = int(time.time())
        cached_second, text = _date_header[0]
        if cached_second != second:
            text = super().date_time_string(second)
            _date_header[0] = (second, text)
        return text

    def parse_request(self) -> bool:
        """The request line and headers of an HTTP/1.x request, read as http.server does but
        without the email package's header parser (a tenth of the sim's CPU at thousands of
        requests); anything unusual goes to http.server's own parsing and its errors."""
        words = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n").split()
        if len(words) != 3 or words[2] not in _VERSIONS or words[1].startswith("//"):
            return super().parse_request()
        self.command, self.path, self.request_version = words
        self.requestline = " ".join(words)
        headers = _Headers()
        while (line := self.rfile.readline(_MAX_LINE + 1)) not in (b"\r\n", b"\n", b""):
            name, colon, value = str(line, "iso-8859-1").partition(":")
            if len(line) > _MAX_LINE or len(headers) >= _MAX_HEADERS:
                self.send_error(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE)
                return False
            if not colon or not name.strip():
                self.send_error(HTTPStatus.BAD_REQUEST, "Bad header line")
                return False
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        self.headers = headers  # type: ignore[assignment]
        connection = headers.get("connection", "").lower()
        self.close_connection = connection == "close" or (
            self.request_version == "HTTP/1.0" and connection != "keep-alive"
        )
        if headers.get("expect", "").lower() == "100-continue":
            return self.handle_expect_100()
        return True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: a test run or `gpuctl sim up` would drown in access logs."""

    def _serve(self) -> None:
        headers = {key.lower(): value for key, value in self.headers.items()}
        refusal = self.server.gate.refusal(headers)
        if refusal is not None:
            self.server.sim.metrics.count("error", self.path, refusal.status)
            self.close_connection = True  # its body, if any, is left unread
            self._send(refusal)
            return
        try:
            body = read_body(self.rfile, headers)
        except ApiError as error:  # the body's framing is lost: nothing after it can be read
            self.close_connection = True
            self._send(Response(error.code, encode(error.status()), headers=[("Connection", "close")]))
            return
        # Reading a request may take the idle time; serving it (a watch, a long write) may not.
        self.connection.settimeout(None)
        self._answer(Request(self.command, self.path, headers, body))
        self.connection.settimeout(self.server.idle_timeout)

    def _answer(self, request: Request) -> None:
        if self.command == "GET" and request.path == METRICS_PATH:
            # Authorised as any non-resource URL; not counted itself: reading the counters leaves
            # them as they were.
            refusal = self.server.api.refusal(request)
            self._send(refusal or Response(200, self.server.sim.metrics.render(), CONTENT_TYPE))
            return
        response, verb = self.server.api.handle(request)
        self.server.sim.metrics.count(verb, self.path, response.status)
        if response.stream is not None:
            self._stream(response)
        else:
            self._send(response)

    def _send(self, response: Response) -> None:
        """The answer in one write (status line, headers, body): what send_response, send_header
        and end_headers would write, without their per-header encoding and separate sends."""
        if self.request_version == "HTTP/0.9":  # no status line, no headers
            self.wfile.write(response.body)
            return
        reason = self.responses[response.status][0] if response.status in self.responses else ""
        head = [
            f"{self.protocol_version} {response.status} {reason}",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
            f"Content-Type: {response.content_type}",
            f"Content-Length: {len(response.body)}",
            "Cache-Control: no-cache, private",
        ]
        for name, value in response.headers:
            head.append(f"{name}: {value}")
            if name.lower() == "connection":
                self.close_connection = value.lower() == "close"
        head.append("\r\n")
        self.wfile.write("\r\n".join(head).encode("latin-1", "strict") + response.body)

    def _stream(self, response: Response) -> None:
        assert response.stream is not None
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        try:
            for chunk in response.stream:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024
    api: Api
    gate: AccessGate
    sim: SimServer
    tls: ssl.SSLContext
    idle_timeout: float | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Serve one connection over TLS, in its own thread (the handshake included, so a slow
        client holds up no one else); a plain-http client gets the API server's 400."""
        request.settimeout(HANDSHAKE_TIMEOUT_S)
        first = request.recv(1, socket.MSG_PEEK)
        if first != _TLS_RECORD_HANDSHAKE:
            if first:
                request.sendall(_PLAIN_HTTP_ANSWER)
            return
        connection = self.tls.wrap_socket(request, server_side=True)
        try:
            # Waiting for a request (the next one on a kept-alive connection included) ends after
            # idle_timeout; a request being served has no limit (watches stay open as asked).
            connection.settimeout(self.idle_timeout)
            self.RequestHandlerClass(connection, client_address, self)  # type: ignore[arg-type]  # typeshed types it with Self
        finally:
            connection.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left before its answer was written (an interrupted gpuctl, a killed
        kubectl), timed out or failed the TLS handshake (it does not trust the sim's certificate)
        is not the sim's error: no traceback for it. Anything else is still printed."""
        if isinstance(sys.exc_info()[1], (ssl.SSLError, TimeoutError, ConnectionError)):
            return
        super().handle_error(request, client_address)


class SimServer:
    """A simulated GPU cluster on http://127.0.0.1:<free port>; a context manager."""

    def __init__(
        self,
        scenario: Scenario,
        host: str = "127.0.0.1",
        port: int = 0,
        host_links: Sequence[HostLink] = (),
    ) -> None:
        self.scenario = scenario
        self.cluster = Cluster(scenario, host_links)
        self.token = new_token()  # only in the kubeconfigs it writes; every request must carry it
        self.certificate: ServingCertificate = new_serving_certificate()
        self._host, self._port = host, port
        self._http: _HttpServer | None = None
        self._thread: threading.Thread | None = None
        self.metrics = RequestMetrics()

    @property
    def url(self) -> str:
        if self._http is None:
            raise RuntimeError("the simulated cluster is not started")
        host, port = self._http.server_address[:2]
        return f"https://{host!s}:{port}"

    def start(self) -> SimServer:
        self._http = _HttpServer((self._host, self._port), _Handler)
        address, port = self._http.server_address[:2]
        self._http.api = Api(self.cluster, f"{address!s}:{port}", TokenRegistry(self.token))
        self._http.gate = AccessGate(self.token, int(port), self._http.api.tokens)
        self._http.tls = server_context(self.certificate)
        self._http.idle_timeout = self.scenario.idle_timeout_seconds or None
        self._http.sim = self
        self.cluster.start()
        self._thread = threading.Thread(target=self._serve_http, name="gpuctl-sim-http", daemon=True)
        self._thread.start()
        return self

    def _serve_http(self) -> None:
        assert self._http is not None
        self._http.serve_forever(poll_interval=0.05)

    def stop(self) -> None:
        self.cluster.stop()  # ends open watches first, so serve_forever can return
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    # -- request counters (benchmarks, idempotency tests; GET /metrics out of process) ----------
    @property
    def request_count(self) -> int:
        return self.metrics.total()

    def requests_by_verb(self) -> dict[str, int]:
        """Requests served so far by verb: get, list, watch, create, update, patch, delete,
        deletecollection, discovery (non-resource paths) and error (refused before dispatch)."""
        return self.metrics.by_verb()

    def reset_counts(self) -> None:
        self.metrics.reset()

    @property
    def auth_headers(self) -> dict[str, str]:
        """What a raw HTTP client sends to be let in (the kubeconfig carries the same token)."""
        return {"Authorization": f"Bearer {self.token}"}

    def trust_front(self, port: int) -> None:
        """Answer to requests relayed by a TLS front on loopback `port` (see AccessGate)."""
        if self._http is None:
            raise RuntimeError("the simulated cluster is not started")
        self._http.gate.trust_front(port)

    def write_kubeconfig(self, path: Path | str, context_name: str = "gpuctl-sim") -> Path:
        """A new kubeconfig for this sim at `path`, created owner-only; never over a file or a
        symbolic link already there."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = kubeconfig_text(self.url, self.token, self.certificate.certificate_pem, context_name)
        write_private_file(path, text, exclusive=True)
        return path


def authority_data(certificate_pem: bytes) -> str:
    """A certificate as a kubeconfig's certificate-authority-data holds it (base64 of the PEM)."""
    return base64.b64encode(certificate_pem).decode("ascii")


def kubeconfig_text(
    url: str, token: str, certificate_pem: bytes = b"", context_name: str = "gpuctl-sim"
) -> str:
    """A kubeconfig for `url` with a bearer token; `certificate_pem`: the CA that signed the
    server's certificate (the sim's own), none for a plain-http server."""
    authority = (
        f"\n    certificate-authority-data: {authority_data(certificate_pem)}" if certificate_pem else ""
    )
    return f"""apiVersion: v1
kind: Config
clusters:
- name: {context_name}
  cluster:
    server: {url}{authority}
contexts:
- name: {context_name}
  context:
    cluster: {context_name}
    user: {context_name}
    namespace: default
current-context: {context_name}
users:
- name: {context_name}
  user:
    token: {token}
preferences: {{}}
"""
