"""The one mapping of API outcomes to errors a user can act on: every transport failure, every
HTTP answer that is no caller's to decide, and every answer that is no Kubernetes answer becomes
an UnreachableError (exit 3) in the server's own words (status, reason, the first line of its
message), with a hint naming the next command. client.api_call applies it to each request.

Statuses a caller decides what they mean (404 absent, 409 conflict, 410 expired, 422 invalid)
pass through; one that no caller expected reaches the command's top and is named there by
`unexpected_answer`, still exit 3.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from gpuctl.bounds import REQUEST_TIMEOUT
from gpuctl.errors import UnreachableError

RBAC_HINT = (
    "ask your cluster admin for gpuctl's least-privilege roles (`gpuctl render --rbac` prints them), "
    "or pick another --context"
)
# 401 is about who you are, not what you may do: no role helps a credential the server rejects.
CREDENTIALS_HINT = (
    "the kubeconfig's token, certificate or credential plugin was refused (wrong or expired): get a "
    "fresh kubeconfig from your cluster admin or cloud CLI; for the simulated cluster use the "
    "kubeconfig `gpuctl sim up` wrote"
)
TLS_HINT = (
    "the server's certificate is not signed by the kubeconfig's certificate-authority(-data): get a "
    "fresh kubeconfig for this cluster; for the simulated cluster use the kubeconfig `gpuctl sim up` "
    "wrote (each sim has its own certificate)"
)
SERVER_ERROR_HINT = (
    "an error of the API server itself (or of a webhook it calls): check its health "
    "(`kubectl get --raw '/readyz?verbose'`), then run the command again"
)
THROTTLED_HINT = (
    "the API server is overloaded or limits this client: run the command again later "
    "(`kubectl get --raw '/readyz?verbose'` shows its health); verify --concurrency sends fewer "
    "requests at once"
)
NOT_KUBERNETES_HINT = (
    "check the server address of the kubeconfig's cluster (`kubectl config view --minify`): "
    "a proxy, a login page or a server that is not the Kubernetes API answered"
)
WORDS_MAX = 160  # characters of a server's message quoted in an error line


def unreachable(error: BaseException, verb: str, resource: str) -> UnreachableError | None:
    """The error to raise for `error` from `verb resource`; None when it is the caller's to decide."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError as Urllib3Error

    from gpuctl.kube.deadlines import RequestTimedOut
    from gpuctl.kube.rest_requests import MalformedAnswer

    what = f"{verb} {resource}"
    if isinstance(error, ApiException):
        return _from_status(error, what)
    if isinstance(error, MalformedAnswer):
        return _malformed(error, what)
    if isinstance(error, RequestTimedOut) or _is_read_timeout(error):
        return _timed_out(error, what)
    if isinstance(error, (Urllib3Error, ConnectionError, OSError)):
        return _transport(error, what)
    return None


def unexpected_answer(error: Any) -> UnreachableError:
    """An HTTP answer no caller expected (a 404 for the node list: a server address with a wrong
    path), named where it ends the command."""
    return UnreachableError(
        f"the API server answered {_status_words(error)}",
        hint="check the server address of the kubeconfig's cluster (`kubectl config view --minify`); "
        "rerun with --debug to see the request",
    )


def server_message(error: Any) -> str:
    """The API server's own words in an ApiException's Status body ("" when it sent none)."""
    try:
        return str(json.loads(error.body).get("message") or "")
    except (TypeError, ValueError, AttributeError):
        return ""


def _from_status(error: Any, what: str) -> UnreachableError | None:
    from gpuctl.kube.throttling import Throttled

    status = error.status
    if status in (401, 403):
        return _refused(error, what)
    if not status or "HTTP request to an HTTPS server" in _body_text(error):
        return _no_http_answer(error, what)
    if isinstance(error, Throttled):
        return _throttled(error, what)
    if not _is_kubernetes_answer(error):
        return _not_kubernetes(error, what)
    if status >= 500:
        return UnreachableError(
            f"the API server failed {what}: {_status_words(error)}", hint=SERVER_ERROR_HINT
        )
    return None


def _no_http_answer(error: Any, what: str) -> UnreachableError:
    """No HTTP answer (the client's status 0: an SSL failure), or a plain-http request's refusal."""
    if error.status:
        return UnreachableError(
            f"{what}: the server speaks https, the kubeconfig's server address says http",
            hint="change the cluster's server to https:// in the kubeconfig "
            "(`kubectl config view --minify` shows it)",
        )
    return UnreachableError(
        f"{what}: {error.reason}", hint="check the cluster address with `kubectl cluster-info`"
    )


def _refused(error: Any, what: str) -> UnreachableError:
    if error.status == 401:
        return UnreachableError(f"not authenticated: {what}: {_status_words(error)}", hint=CREDENTIALS_HINT)
    return UnreachableError(f"not authorised: {what}: {_status_words(error)}", hint=RBAC_HINT)


def _throttled(error: Any, what: str) -> UnreachableError:
    done = "throttled" if error.status == 429 else "was unavailable for"
    times = f"{error.attempts} time{'s' if error.attempts > 1 else ''}"
    within = f" in {error.waited_s:.0f} s" if error.waited_s else ""
    asked = f", then asked for {error.asked_s:g} s more" if error.asked_s > error.waited_s else ""
    return UnreachableError(
        f"the API server {done} {what} {times}{within}{asked}: {_status_words(error)}",
        hint=THROTTLED_HINT,
    )


def _not_kubernetes(error: Any, what: str) -> UnreachableError:
    body = f"a {_content_type(error) or 'non-JSON'} body"
    words = _words(_body_text(error), _content_type(error))
    said = f" ({words!r})" if words else ""
    if error.status >= 500:
        # A proxy or load balancer in front of the API server says so when the server is down.
        return UnreachableError(
            f"{what}: HTTP {error.status} {error.reason or ''} with {body}{said}, not the API server's own "
            "answer",
            hint=SERVER_ERROR_HINT,
        )
    return UnreachableError(
        f"not a Kubernetes API server: {what} got HTTP {error.status} {error.reason or ''} with {body}{said}",
        hint=NOT_KUBERNETES_HINT,
    )


def _malformed(error: Any, what: str) -> UnreachableError:
    from gpuctl.kube.rest_requests import NotJson

    if isinstance(error, NotJson):  # a proxy's login page, a web server's answer
        words = _words(error.head.decode("utf-8", "replace"), error.content_type)
        said = f" ({words!r})" if words else ""
        return UnreachableError(
            f"not a Kubernetes API server: {what} got HTTP {error.status} {error.reason} with a "
            f"{error.content_type or 'non-JSON'} body{said}",
            hint=NOT_KUBERNETES_HINT,
        )
    return UnreachableError(f"{what}: malformed answer: {error}", hint=NOT_KUBERNETES_HINT)


def _timed_out(error: BaseException, what: str) -> UnreachableError:
    from gpuctl.kube.deadlines import RequestTimedOut, request_timeout_s

    seconds = error.seconds if isinstance(error, RequestTimedOut) else request_timeout_s()
    return UnreachableError(
        f"the API server did not answer {what} within {seconds:g} s",
        hint="check the API server's health (`kubectl get --raw /readyz`); for a slow one "
        f"raise {REQUEST_TIMEOUT.name} (seconds, the bound of each request)",
    )


def _transport(error: BaseException, what: str) -> UnreachableError:
    if "CERTIFICATE_VERIFY_FAILED" in str(error):
        return UnreachableError(
            f"cannot verify the cluster{_address(error)} ({what}): {_short(error)}", hint=TLS_HINT
        )
    return UnreachableError(
        f"cannot reach the cluster{_address(error)} ({what}): {_short(error)}",
        hint="check that the API server is up and the kubeconfig points at it "
        "(`kubectl cluster-info`); for the simulated cluster run `gpuctl sim up`",
    )


def _status_words(error: Any) -> str:
    """'500 Internal Server Error (etcdserver: request timed out)': status, reason, message."""
    message = server_message(error) or _words(_body_text(error), _content_type(error))
    said = f" ({_first_line(message)})" if message else ""
    return f"{error.status} {error.reason or ''}".rstrip() + said


def _content_type(error: Any) -> str:
    headers = getattr(error, "headers", None) or {}
    return str(headers.get("Content-Type") or headers.get("content-type") or "").split(";")[0].strip()


def _body_text(error: Any) -> str:
    body = error.body.decode("utf-8", "replace") if isinstance(error.body, bytes) else error.body
    return str(body or "")


def _is_kubernetes_answer(error: Any) -> bool:
    """An API server's errors are JSON (a meta/v1 Status); a web server's HTML 404 is not."""
    try:
        return isinstance(json.loads(_body_text(error)), dict)
    except ValueError:
        return "json" in _content_type(error) or "protobuf" in _content_type(error)


def _words(body: str, content_type: str) -> str:
    """What a non-JSON body says, in one short line: an HTML page's title (or first heading),
    else its first line of text."""
    if "html" in content_type or body.lstrip().startswith("<"):
        found = re.search(r"<(title|h1)[^>]*>(.*?)</\1>", body, re.IGNORECASE | re.DOTALL)
        text = re.sub(r"<[^>]+>", " ", found.group(2) if found else body)
        return _first_line(" ".join(html.unescape(text).split()))
    return _first_line(body)


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= WORDS_MAX else line[: WORDS_MAX - 1] + "…"


def _is_read_timeout(error: BaseException) -> bool:
    from urllib3.exceptions import MaxRetryError, ReadTimeoutError

    if isinstance(error, MaxRetryError):
        return isinstance(error.reason, ReadTimeoutError)
    return isinstance(error, ReadTimeoutError)


def _address(error: BaseException) -> str:
    """' at SCHEME://HOST:PORT' of the connection that failed, when urllib3 says it."""
    pool = getattr(error, "pool", None)
    host = getattr(pool, "host", None)
    return f" at {getattr(pool, 'scheme', 'http')}://{host}:{getattr(pool, 'port', '')}" if host else ""


def _short(error: BaseException) -> str:
    text = str(error)
    if "WRONG_VERSION_NUMBER" in text or "wrong version number" in text:
        return "TLS handshake failed: the server does not speak https (a plain-http server?)"
    for marker in (
        "Connection refused",
        "CERTIFICATE_VERIFY_FAILED",
        "timed out",
        "Name or service not known",
    ):
        if marker in text:
            return marker
    return text.splitlines()[0][:200] if text else type(error).__name__
