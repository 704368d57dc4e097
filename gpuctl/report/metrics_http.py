"""How verify's metrics travel over HTTP: the push to a Pushgateway (basic auth from the URL's
userinfo, TLS verified against --pushgateway-ca or the system's CAs, the gateway's answer quoted
safely) and the server behind `--metrics-addr` (only /metrics and /healthz).

The push goes through prometheus_client's push_to_gateway with a handler of ours (its documented
`handler=` interface): its own basic_auth_handler cannot take a TLS context, and its
tls_auth_handler insists on a client certificate. The handler sends the Authorization header
exactly as basic_auth_handler does.
"""

from __future__ import annotations

import base64
import contextlib
import socket
import ssl
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.request import HTTPSHandler, Request, build_opener
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from gpuctl.errors import UnreachableError
from gpuctl.report.safe_text import visible_line
from gpuctl.urls import REDACTED, Credentials, redact_url

ANSWER_MAX = 512  # characters of a gateway's error answer quoted in the message
PUSH_HINT = "check the URL and that the Pushgateway runs, e.g. `curl URL/metrics`"
AUTH_HINT = "give the gateway's user and password in the URL: `--pushgateway https://USER:PASSWORD@HOST:9091`"
CA_HINT = "pass the CA that signed the gateway's certificate: `gpuctl verify --pushgateway-ca FILE ...`"

Handler = Callable[[str, str, "float | None", list[tuple[str, str]], bytes], Callable[[], None]]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def gateway_handler(credentials: Credentials | None, tls: ssl.SSLContext | None) -> Handler:
    """A push_to_gateway handler: the request its default_handler makes, with basic auth when
    `credentials` are given and https verified with `tls` (None: the system's CAs)."""

    def handler(
        url: str, method: str, timeout: float | None, headers: list[tuple[str, str]], data: bytes
    ) -> Callable[[], None]:
        sent = list(headers)
        if credentials is not None:
            token = base64.b64encode(f"{credentials.username}:{credentials.password}".encode())
            sent.append(("Authorization", "Basic " + token.decode()))

        def handle() -> None:
            request = Request(url, data=data, method=method, headers=dict(sent))
            with build_opener(HTTPSHandler(context=tls)).open(request, timeout=timeout):
                pass  # an answer of 400 or more is raised as HTTPError by the opener

        return handle

    return handler


def push_failure(gateway: str, error: OSError, credentials: Credentials | None) -> UnreachableError:
    """The error for a push that failed: the gateway as a redacted URL, its answer quoted on one
    line with its control characters shown (it is text from the network), never the password."""
    shown = redact_url(gateway)
    cause = error.reason if isinstance(error, URLError) and not isinstance(error, HTTPError) else error
    if isinstance(cause, ssl.SSLCertVerificationError):
        message = f"--pushgateway {shown}: its certificate does not verify: {cause.verify_message or cause}"
        hint = CA_HINT
    else:
        message = f"--pushgateway {shown}: cannot push the metrics: {_reason(error)}"
        hint = AUTH_HINT if getattr(error, "code", None) in (401, 403) else PUSH_HINT
    if credentials is not None and credentials.password:  # a gateway that echoes what it was sent
        message = message.replace(credentials.password, REDACTED)
    return UnreachableError(redact_url(message), hint=hint)


def _reason(error: OSError) -> str:
    if isinstance(error, HTTPError):
        answer = ""
        with contextlib.suppress(OSError, ValueError):
            answer = error.read(ANSWER_MAX * 4).decode("utf-8", errors="replace")
        status = visible_line(f"HTTP {error.code} {error.reason or ''}", ANSWER_MAX)
        return f"{status}: {visible_line(answer, ANSWER_MAX)}" if answer.strip() else status
    reason = getattr(error, "reason", None)
    return visible_line(str(reason or error.strerror or error), ANSWER_MAX)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on stderr: standard error carries the watch's own lines."""


class _ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True  # a scrape in flight does not hold up the watch's exit


def only_metrics_paths(metrics_app: WsgiApp) -> WsgiApp:
    """`metrics_app` on /metrics, `ok` on /healthz, 404 elsewhere (prometheus_client's own app
    answers its metrics on every path)."""

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == "/metrics":
            return metrics_app(environ, start_response)
        if path == "/healthz":
            start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"ok\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"404 not found: the metrics are at /metrics\n"]

    return app


def start_server(host: str, port: int, app: WsgiApp) -> WSGIServer:
    """Serve `app` on HOST:PORT (IPv4 or IPv6, as the address says) from a daemon thread."""
    family, _, _, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    server_class = type("MetricsServer", (_ThreadingServer,), {"address_family": family})
    server: WSGIServer = make_server(str(address[0]), port, app, server_class, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="metrics-server", daemon=True).start()
    return server
