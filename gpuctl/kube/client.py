"""Connect like kubectl does: --kubeconfig, $KUBECONFIG (colon-separated), ~/.kube/config,
--context, then in-cluster config; and turn transport/authorisation failures into exit 3.

Every API call gets a request timeout unless the caller passes its own (watches do, tied to
their timeoutSeconds): connect 10 s, read 60 s. `GPUCTL_REQUEST_TIMEOUT` (seconds) overrides
the read timeout; the connect timeout is never longer than it.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError, UnreachableError
from gpuctl.shell import command_line

if TYPE_CHECKING:
    # Re-exported: gpuctl.core names the client type through this module, never kubernetes itself.
    from kubernetes.client import ApiClient as ApiClient  # noqa: PLC0414 - an explicit re-export

IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 60.0
TIMEOUT_ENV = "GPUCTL_REQUEST_TIMEOUT"
TOKEN_REFRESH_INTERVAL_S = 1.0
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


def read_timeout_s() -> float:
    """The read timeout of one API request: $GPUCTL_REQUEST_TIMEOUT seconds, else 60."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return READ_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise ConfigError(
            f"{TIMEOUT_ENV}={raw!r}: must be a positive number of seconds",
            hint=f"unset {TIMEOUT_ENV} or set it to e.g. 60",
        )
    return value


def default_request_timeout() -> tuple[float, float]:
    """(connect, read) seconds for a request whose caller set no timeout."""
    read = read_timeout_s()
    return (min(CONNECT_TIMEOUT_S, read), read)


def _api_client_class() -> type[ApiClient]:
    """An ApiClient whose requests time out by default (built lazily: kubernetes is heavy)."""
    from kubernetes import client

    class TimeoutApiClient(client.ApiClient):
        def call_api(self, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("_request_timeout") is None:
                kwargs["_request_timeout"] = default_request_timeout()
            return super().call_api(*args, **kwargs)

    return TimeoutApiClient


class ThrottledRefresh:
    """A Configuration's refresh_api_key_hook, run at most once per TOKEN_REFRESH_INTERVAL_S.

    The client runs the hook before every request. kube_config's hook re-applies the whole
    kubeconfig to the Configuration each time, and its `host` setter looks up the proxy settings
    (urllib.request.getproxies walks os.environ): ~0.08 ms of CPU per request, a fifth of one.
    Once a second is as good for the tokens: kube_config renews an exec or OIDC token 5 minutes
    before it expires (its EXPIRY_SKEW_PREVENTION_DELAY) and re-reads an in-cluster token every
    minute, so a token is never used more than a second past the point its renewal was due, and
    that point is minutes before the server would refuse it."""

    def __init__(self, hook: Callable[[Any], None], interval_s: float = TOKEN_REFRESH_INTERVAL_S) -> None:
        self.hook = hook
        self.interval_s = interval_s
        self._due = 0.0  # monotonic: when the hook is to run again
        self._lock = threading.Lock()  # one thread runs the hook; the others keep the token they have

    def __call__(self, configuration: Any) -> None:
        if time.monotonic() < self._due:
            return
        with self._lock:
            if time.monotonic() < self._due:
                return
            self.hook(configuration)
            _trim_token(configuration)
            # The client's hooks install a new copy of themselves each time they run: keep that
            # copy, and keep this throttle in its place.
            renewed = configuration.refresh_api_key_hook
            if renewed is not self and renewed is not None:
                self.hook = renewed
                configuration.refresh_api_key_hook = self
            self._due = time.monotonic() + self.interval_s

    def __deepcopy__(self, memo: dict[int, Any]) -> ThrottledRefresh:
        # A copied Configuration (pooled_client) gets its own schedule: the hook writes the
        # token into the Configuration it is given, so the copy's first request must run it.
        return ThrottledRefresh(self.hook, self.interval_s)


def _trim_token(configuration: Any) -> None:
    """A bearer token without the whitespace around it, as client-go reads token files (a token
    written with `echo` ends in a newline, which no HTTP header may carry). The Python client
    sends what it read. Both loaders install a refresh hook with every token, and the client runs
    it before each request's token is read, so trimming after the hook covers the first request
    and each re-read (the in-cluster loader reads the file again every minute)."""
    token = configuration.api_key.get("BearerToken")
    if isinstance(token, str) and token != token.strip():
        configuration.api_key["BearerToken"] = token.strip()


def _throttle_token_refresh(configuration: Any) -> None:
    hook = configuration.refresh_api_key_hook
    if hook is not None and not isinstance(hook, ThrottledRefresh):
        configuration.refresh_api_key_hook = ThrottledRefresh(hook)


def _kubeconfig_paths(kubeconfig: Path | None) -> list[Path]:
    if kubeconfig is not None:
        return [kubeconfig]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return [Path(part).expanduser() for part in env.split(os.pathsep) if part]
    return [Path("~/.kube/config").expanduser()]


def _existing_kubeconfigs(kubeconfig: Path | None) -> tuple[list[Path], list[Path]]:
    """(the kubeconfig paths kubectl would read, those that exist); ConfigError for a path given
    that cannot be a kubeconfig."""
    paths = _kubeconfig_paths(kubeconfig)
    existing = [path for path in paths if path.is_file()]
    if kubeconfig is not None and kubeconfig.is_dir():
        raise ConfigError(
            f"--kubeconfig {kubeconfig}: is a directory, expected a kubeconfig file",
            hint=f"name the file, e.g. {command_line('--kubeconfig', kubeconfig / 'config')}",
        )
    if kubeconfig is None and not paths:
        raise ConfigError(
            f"KUBECONFIG={os.environ.get('KUBECONFIG', '')!r} names no file",
            hint="set KUBECONFIG to kubeconfig paths separated by ':', unset it, or pass --kubeconfig",
        )
    if kubeconfig is not None and not existing:
        raise ConfigError(
            f"--kubeconfig {kubeconfig}: file not found",
            hint="pass the kubeconfig your cluster admin gave you, or start one with `gpuctl sim up`",
        )
    return paths, existing


def _get_contexts(existing: list[Path]) -> str:
    """The kubectl command listing the contexts of exactly these kubeconfig files."""
    if len(existing) == 1:
        return command_line("kubectl", "config", "get-contexts", "--kubeconfig", existing[0])
    # kubectl merges several files only through KUBECONFIG (its --kubeconfig takes one file).
    merged = command_line(os.pathsep.join(str(path) for path in existing))
    return f"KUBECONFIG={merged} {command_line('kubectl', 'config', 'get-contexts')}"


def _kubeconfig_error(error: Exception, existing: list[Path], context: str | None) -> ConfigError:
    """The one-line error for a kubeconfig the client library refused."""
    where = ", ".join(str(path) for path in existing)
    detail = str(error).splitlines()[0] if str(error) else type(error).__name__
    if context is None and "current-context" in detail:
        return ConfigError(
            f"{where}: no current-context set, and no --context given",
            hint=f"pass --context (`{_get_contexts(existing)}` lists them)",
        )
    if context is not None and "context" in detail.lower():
        hint = f"list the contexts with `{_get_contexts(existing)}`"
        return ConfigError(f"{where}: context {context!r} not found", hint=hint)
    return ConfigError(
        f"{where}: invalid kubeconfig: {detail}", hint="check the file with `kubectl config view`"
    )


def load_api_client(kubeconfig: Path | None = None, context: str | None = None) -> ApiClient:
    """Return an ApiClient for the chosen cluster, or raise ConfigError naming file and context."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    paths, existing = _existing_kubeconfigs(kubeconfig)
    configuration = client.Configuration()
    if not existing:
        if IN_CLUSTER_TOKEN.exists() and context is None:
            try:
                config.load_incluster_config(client_configuration=configuration)
            except ConfigException as error:
                raise ConfigError(
                    f"in-cluster config ({IN_CLUSTER_TOKEN.parent}): {error}",
                    hint="check the pod's service account mount, or pass --kubeconfig",
                ) from error
            _throttle_token_refresh(configuration)
            return _api_client_class()(configuration)
        raise ConfigError(
            f"no kubeconfig found (looked at {os.pathsep.join(str(path) for path in paths)})",
            hint="pass --kubeconfig, set KUBECONFIG, or start a simulated cluster with `gpuctl sim up`",
        )
    from gpuctl.kube.kubeconfig_checks import check_kubeconfig
    from gpuctl.kube.kubeconfigs import merge

    merged = merge(existing)  # kubectl's merge, not the client's (see kubeconfigs.py)
    check_kubeconfig(merged, context)  # before the client logs its own complaints
    try:
        config.load_kube_config_from_dict(
            merged.document,
            context=context or merged.current_context or None,
            client_configuration=configuration,
            persist_config=False,
        )
    except Exception as error:  # ConfigException, yaml errors, missing certificate files, bad base64 ...
        raise _kubeconfig_error(error, existing, context) from error
    # Fail fast on a dead endpoint instead of retrying for minutes.
    configuration.retries = 1
    if not configuration.verify_ssl:
        # The kubeconfig says insecure-skip-tls-verify; kubectl goes on without a word, and
        # urllib3's warning on every request would break gpuctl's one-line output.
        import warnings

        from urllib3.exceptions import InsecureRequestWarning

        warnings.simplefilter("ignore", InsecureRequestWarning)
    _throttle_token_refresh(configuration)
    return _api_client_class()(configuration)


def pooled_client(api_client: ApiClient, size: int) -> ApiClient:
    """A client like `api_client` (same class, so the same request timeouts) whose urllib3 pool
    keeps a keep-alive connection for each of `size` threads, plus a few spare."""
    import copy

    configuration = copy.deepcopy(api_client.configuration)
    configuration.connection_pool_maxsize = size + 4
    return type(api_client)(configuration)


def server_message(error: Any) -> str:
    """The API server's own words in an ApiException's Status body ("" when it sent none)."""
    import json

    try:
        return str(json.loads(error.body).get("message") or "")
    except (TypeError, ValueError, AttributeError):
        return ""


def _denied_message(verb: str, resource: str, error: Any) -> str:
    reason = server_message(error)
    return f"{verb} {resource}: {error.status} {error.reason}" + (f" ({reason})" if reason else "")


@contextlib.contextmanager
def api_call(verb: str, resource: str) -> Iterator[None]:
    """Map transport and authorisation failures of the block to UnreachableError (exit 3).

    Other API errors (404, 409, 422 ...) propagate: callers decide what they mean.
    """
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError as Urllib3Error

    try:
        yield
    except ApiException as error:
        if error.status == 401:
            raise UnreachableError(
                f"not authenticated: {_denied_message(verb, resource, error)}", hint=CREDENTIALS_HINT
            ) from error
        if error.status == 403:
            raise UnreachableError(
                f"not authorised: {_denied_message(verb, resource, error)}",
                hint=RBAC_HINT,
            ) from error
        if error.status == 0 or error.status is None:
            raise UnreachableError(
                f"{verb} {resource}: {error.reason}",
                hint="check the cluster address with `kubectl cluster-info`",
            ) from error
        if "HTTP request to an HTTPS server" in _body_text(error):
            raise UnreachableError(
                f"{verb} {resource}: the server speaks https, the kubeconfig's server address says http",
                hint="change the cluster's server to https:// in the kubeconfig "
                "(`kubectl config view --minify` shows it)",
            ) from error
        if not _is_kubernetes_answer(error):
            raise UnreachableError(
                f"not a Kubernetes API server: {verb} {resource} got HTTP {error.status} "
                f"{error.reason or ''} with a {_content_type(error) or 'non-JSON'} body",
                hint="check the server address of the kubeconfig's cluster (`kubectl config view --minify`)",
            ) from error
        raise
    except (Urllib3Error, ConnectionError, OSError) as error:
        if _is_read_timeout(error):
            raise UnreachableError(
                f"the API server did not answer {verb} {resource} within {read_timeout_s():g} s",
                hint="check the API server's health (`kubectl get --raw /readyz`); for a slow one "
                f"raise {TIMEOUT_ENV} (seconds)",
            ) from error
        if "CERTIFICATE_VERIFY_FAILED" in str(error):
            raise UnreachableError(
                f"cannot verify the cluster{_address(error)} ({verb} {resource}): {_short(error)}",
                hint=TLS_HINT,
            ) from error
        raise UnreachableError(
            f"cannot reach the cluster{_address(error)} ({verb} {resource}): {_short(error)}",
            hint="check that the API server is up and the kubeconfig points at it "
            "(`kubectl cluster-info`); for the simulated cluster run `gpuctl sim up`",
        ) from error


def _content_type(error: Any) -> str:
    headers = getattr(error, "headers", None) or {}
    return str(headers.get("Content-Type") or headers.get("content-type") or "").split(";")[0].strip()


def _body_text(error: Any) -> str:
    body = error.body.decode("utf-8", "replace") if isinstance(error.body, bytes) else error.body
    return str(body or "")


def _is_kubernetes_answer(error: Any) -> bool:
    """An API server's errors are JSON (a meta/v1 Status); a web server's HTML 404 is not."""
    import json

    try:
        return isinstance(json.loads(_body_text(error)), dict)
    except ValueError:
        return "json" in _content_type(error) or "protobuf" in _content_type(error)


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
