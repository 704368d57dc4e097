"""Connect like kubectl does: --kubeconfig, $KUBECONFIG (colon-separated), ~/.kube/config,
--context, then in-cluster config; and turn transport/authorisation failures into exit 3."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError, UnreachableError

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

IN_CLUSTER_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")


def _kubeconfig_paths(kubeconfig: Path | None) -> list[Path]:
    if kubeconfig is not None:
        return [kubeconfig]
    env = os.environ.get("KUBECONFIG", "")
    if env:
        return [Path(part).expanduser() for part in env.split(os.pathsep) if part]
    return [Path("~/.kube/config").expanduser()]


def load_api_client(kubeconfig: Path | None = None, context: str | None = None) -> ApiClient:
    """Return an ApiClient for the chosen cluster, or raise ConfigError naming file and context."""
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    paths = _kubeconfig_paths(kubeconfig)
    existing = [path for path in paths if path.is_file()]
    if kubeconfig is not None and not existing:
        raise ConfigError(
            f"--kubeconfig {kubeconfig}: file not found",
            hint="pass the kubeconfig your cluster admin gave you, or start one with `gpuctl sim up`",
        )
    if not existing:
        if IN_CLUSTER_TOKEN.exists() and context is None:
            config.load_incluster_config()
            return client.ApiClient()
        raise ConfigError(
            f"no kubeconfig found (looked at {os.pathsep.join(str(path) for path in paths)})",
            hint="pass --kubeconfig, set KUBECONFIG, or start a simulated cluster with `gpuctl sim up`",
        )
    configuration = client.Configuration()
    try:
        config.load_kube_config(
            config_file=os.pathsep.join(str(path) for path in existing),
            context=context,
            client_configuration=configuration,
            persist_config=False,
        )
    except ConfigException as error:
        where = ", ".join(str(path) for path in existing)
        detail = str(error).splitlines()[0] if str(error) else type(error).__name__
        if context is not None and "context" in detail.lower():
            hint = f"list the contexts with `kubectl config get-contexts --kubeconfig {where}`"
            raise ConfigError(f"{where}: context {context!r} not found", hint=hint) from error
        raise ConfigError(
            f"{where}: invalid kubeconfig: {detail}",
            hint="check the file with `kubectl config view`",
        ) from error
    except Exception as error:  # yaml errors, missing certificate files, bad base64 ...
        where = ", ".join(str(path) for path in existing)
        raise ConfigError(
            f"{where}: invalid kubeconfig: {error}",
            hint="check the file with `kubectl config view`",
        ) from error
    # Fail fast on a dead endpoint instead of retrying for minutes.
    configuration.retries = 1
    return client.ApiClient(configuration)


def _denied_message(verb: str, resource: str, error: Any) -> str:
    reason = ""
    with contextlib.suppress(Exception):
        import json

        reason = json.loads(error.body).get("message", "")
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
        if error.status in (401, 403):
            raise UnreachableError(
                f"not authorised: {_denied_message(verb, resource, error)}",
                hint="ask your cluster admin for the RBAC in docs/rbac.md, or pick another --context",
            ) from error
        if error.status == 0 or error.status is None:
            raise UnreachableError(
                f"{verb} {resource}: {error.reason}", hint="check the cluster address"
            ) from error
        raise
    except (Urllib3Error, ConnectionError, OSError) as error:
        raise UnreachableError(
            f"cannot reach the cluster ({verb} {resource}): {_short(error)}",
            hint="check that the API server is up and the kubeconfig points at it "
            "(`kubectl cluster-info`); for the simulated cluster run `gpuctl sim up`",
        ) from error


def _short(error: BaseException) -> str:
    text = str(error)
    for marker in (
        "Connection refused",
        "CERTIFICATE_VERIFY_FAILED",
        "timed out",
        "Name or service not known",
    ):
        if marker in text:
            return marker
    return text.splitlines()[0][:200] if text else type(error).__name__
