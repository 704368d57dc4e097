"""Connect like kubectl does: --kubeconfig, $KUBECONFIG (colon-separated), ~/.kube/config,
--context, then in-cluster config; and turn transport/authorisation failures into exit 3.

Every API request is bounded as a whole (deadlines.py): connecting, sending, the answer and its
body within `GPUCTL_REQUEST_TIMEOUT` seconds (default 60), retries of a 429 or 503 included
(throttling.py); the connect timeout is 10 s, never longer than that bound. A watch's socket
reads are bounded by its caller's timeout, tied to its timeoutSeconds. api_errors.py maps every
failure and answer that is no caller's to decide to exit 3.
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
from gpuctl.kube.api_errors import server_message as server_message  # noqa: PLC0414 - re-exported
from gpuctl.kube.deadlines import request_timeout_s
from gpuctl.kube.kubeconfig_checks import unsendable
from gpuctl.output_paths import Input, inputs
from gpuctl.shell import command_line

if TYPE_CHECKING:
    # Re-exported: gpuctl.core names the client type through this module, never kubernetes itself.
    from kubernetes.client import ApiClient as ApiClient  # noqa: PLC0414 - an explicit re-export

IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
CONNECT_TIMEOUT_S = 10.0
DEFAULT_NAMESPACE = "default"
TOKEN_REFRESH_INTERVAL_S = 1.0


def default_request_timeout() -> tuple[float, float]:
    """(connect, read) seconds for a request whose caller set no timeout."""
    bound = request_timeout_s()
    return (min(CONNECT_TIMEOUT_S, bound), bound)


def _api_client_class() -> type[ApiClient]:
    """An ApiClient whose requests are bounded and retried as the module says (built lazily:
    kubernetes is heavy)."""
    from kubernetes import client

    from gpuctl.kube import deadlines, throttling

    class TimeoutApiClient(client.ApiClient):
        def __init__(self, configuration: Any = None, *args: Any, **kwargs: Any) -> None:
            if configuration is not None:
                configuration.retries = throttling.TRANSPORT_RETRIES
            super().__init__(configuration, *args, **kwargs)
            deadlines.install(self.rest_client)

        def call_api(self, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("_request_timeout") is None:
                kwargs["_request_timeout"] = default_request_timeout()
            parent = super().call_api
            with deadlines.bounded(request_timeout_s()):  # the caller's, where it reads the body too
                return throttling.send_with_retries(lambda: parent(*args, **kwargs))

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

    def __init__(
        self,
        hook: Callable[[Any], None],
        interval_s: float = TOKEN_REFRESH_INTERVAL_S,
        guard: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext,
    ) -> None:
        self.hook = hook
        self.interval_s = interval_s
        self.guard = guard  # around each run of the hook (exec_plugins.failures: a renewal can fail)
        self._due = 0.0  # monotonic: when the hook is to run again
        self._lock = threading.Lock()  # one thread runs the hook; the others keep the token they have

    def __call__(self, configuration: Any) -> None:
        if time.monotonic() < self._due:
            return
        with self._lock:
            if time.monotonic() < self._due:
                return
            with self.guard():
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
        return ThrottledRefresh(self.hook, self.interval_s, self.guard)


def _trim_token(configuration: Any) -> None:
    """A bearer token without the whitespace around it, as client-go reads token files (a token
    written with `echo` ends in a newline, which no HTTP header may carry). The Python client
    sends what it read. Both loaders install a refresh hook with every token, and the client runs
    it before each request's token is read, so trimming after the hook covers the first request
    and each re-read (the in-cluster loader reads the file again every minute). A line break
    inside the token (the kubeconfig's own token and tokenFile are checked when it is loaded)
    is no credential: kubectl refuses it too."""
    token = configuration.api_key.get("BearerToken")
    if isinstance(token, str) and token != token.strip():
        configuration.api_key["BearerToken"] = token = token.strip()
    if isinstance(token, str) and unsendable(token):
        raise UnreachableError(
            "the bearer token (from a credential plugin, a token file or the service account) "
            "holds a line break or another control character, which no HTTP header may carry",
            hint="check what writes the token: it must be one line (`kubectl config view --minify` "
            "shows where it comes from)",
        )


def _throttle_token_refresh(
    configuration: Any, guard: Callable[[], contextlib.AbstractContextManager[None]] = contextlib.nullcontext
) -> None:
    hook = configuration.refresh_api_key_hook
    if hook is not None and not isinstance(hook, ThrottledRefresh):
        configuration.refresh_api_key_hook = ThrottledRefresh(hook, guard=guard)


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
    # kubectl skips a missing file but refuses one it cannot read (a folder, a FIFO): read_document says which
    existing = [path for path in paths if path.exists()]
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


def kubeconfig_inputs(kubeconfig: Path | None = None) -> list[Input]:
    """The files kubectl reads for this --kubeconfig or KUBECONFIG: each kubeconfig file, and the
    certificate, key and token files they name (gpuctl must never write over one of them)."""
    from gpuctl.kube.kubeconfigs import FILE_FIELDS, merge

    existing = [path for path in _kubeconfig_paths(kubeconfig) if path.is_file()]
    found = inputs("kubeconfig", existing)
    with contextlib.suppress(ConfigError):  # an unreadable one is load_api_client's to name
        document = merge(existing).document
        for section, fields in FILE_FIELDS.items():
            for item in document[section]:
                body = item.get(section[:-1])  # clusters[].cluster, users[].user
                for name in fields if isinstance(body, dict) else ():
                    found += inputs(f"kubeconfig's {name} file", [body.get(name)])
    return found


def kubeconfig_found(kubeconfig: Path | None = None) -> bool:
    """Whether load_api_client has a cluster to load: a kubeconfig file kubectl would read, or
    (without --kubeconfig) the service account of the pod gpuctl runs in."""
    if any(path.exists() for path in _kubeconfig_paths(kubeconfig)):
        return True
    return kubeconfig is None and IN_CLUSTER_TOKEN.exists()


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

    from gpuctl.kube.exec_plugins import chosen_plugin, exec_timeout_s, failures, with_bounded_plugins

    # A bad setting is refused before anything is read.
    request_timeout_s()
    exec_timeout_s()
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
    plugin = chosen_plugin(merged, context)
    with failures(plugin):  # the client runs the credential plugin while it loads
        try:
            config.load_kube_config_from_dict(
                with_bounded_plugins(merged.document),
                context=context or merged.current_context or None,
                client_configuration=configuration,
                persist_config=False,
            )
        except Exception as error:  # ConfigException, yaml errors, missing certificate files, bad base64 ...
            raise _kubeconfig_error(error, existing, context) from error
    if not configuration.verify_ssl:
        # The kubeconfig says insecure-skip-tls-verify; kubectl goes on without a word, and
        # urllib3's warning on every request would break gpuctl's one-line output.
        import warnings

        from urllib3.exceptions import InsecureRequestWarning

        warnings.simplefilter("ignore", InsecureRequestWarning)
    _throttle_token_refresh(configuration, guard=lambda: failures(plugin))
    return _api_client_class()(configuration)


def context_namespace(kubeconfig: Path | None = None, context: str | None = None) -> str:
    """The namespace kubectl acts in when given no -n: the chosen context's `namespace`, the pod's
    own namespace in a cluster, else "default"."""
    _, existing = _existing_kubeconfigs(kubeconfig)
    if not existing:
        in_cluster = IN_CLUSTER_TOKEN.parent / "namespace"
        if context is None and in_cluster.is_file():
            return in_cluster.read_text(encoding="utf-8").strip() or DEFAULT_NAMESPACE
        return DEFAULT_NAMESPACE
    from gpuctl.kube.kubeconfigs import merge

    merged = merge(existing)
    _, body = merged.entry("contexts", context or merged.current_context)
    return str(body.get("namespace") or DEFAULT_NAMESPACE)


def pooled_client(api_client: ApiClient, size: int) -> ApiClient:
    """A client like `api_client` (same class, so the same request timeouts) whose urllib3 pool
    keeps a keep-alive connection for each of `size` threads, plus a few spare."""
    import copy

    configuration = copy.deepcopy(api_client.configuration)
    configuration.connection_pool_maxsize = size + 4
    return type(api_client)(configuration)


@contextlib.contextmanager
def api_call(verb: str, resource: str) -> Iterator[None]:
    """Raise the block's transport failures, timeouts, authorisation failures, server errors,
    throttling and answers that are no Kubernetes answers as UnreachableError (exit 3), named
    as `verb resource` (api_errors.py). Other API errors (404, 409, 422 ...) propagate: callers
    decide what they mean."""
    from gpuctl.kube.api_errors import unreachable

    try:
        yield
    except Exception as error:
        mapped = unreachable(error, verb, resource)
        if mapped is None:
            raise
        raise mapped from error
