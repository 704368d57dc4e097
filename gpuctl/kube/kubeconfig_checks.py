"""What the kubernetes client accepts in a kubeconfig but kubectl refuses: a context's user that is
not in the file, a certificate, key or token file that does not exist, a certificate or key that
is no PEM (kubeconfig_pem.py), a token with a line break,
a credential plugin that is not installed, a server that is no http(s) URL. The client would go on
anonymously (or fail much later, as 'cannot reach the cluster' or an internal error); these are
configuration errors naming the file and field."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gpuctl.errors import ConfigError
from gpuctl.kube.kubeconfig_pem import CLUSTER_PEM, USER_PEM, check_pem
from gpuctl.kube.kubeconfigs import MergedKubeconfig
from gpuctl.urls import redact_url

_HINT = "check the file with `kubectl config view --minify`"
_USER_FILES = ("client-certificate", "client-key", "tokenFile")
_CLUSTER_FILES = ("certificate-authority",)
TOKEN_FILE_MAX_BYTES = 1 << 20  # a token is a few kB; more is no token file


def unsendable(token: str) -> bool:
    """Whether `token` holds a character no HTTP header may carry: a line break or another control
    character (a tab is allowed), as Go's net/http refuses it and kubectl with it."""
    return any((char < " " and char != "\t") or char == "\x7f" for char in token)


def check_kubeconfig(merged: MergedKubeconfig, context: str | None) -> None:
    """Raise ConfigError for what kubectl would refuse in the chosen context of `merged`."""
    files = ", ".join(str(path) for path in merged.files)
    chosen = context or merged.current_context
    where, body = merged.entry("contexts", chosen)
    if where == Path() and chosen and context is None:
        raise ConfigError(
            f"{files}: current-context {chosen!r} is not in contexts",
            hint="pick a context with --context, or set one with `kubectl config use-context NAME` "
            "(`kubectl config get-contexts` lists them)",
        )
    if not merged.document["contexts"] and not merged.document["clusters"]:
        raise ConfigError(
            f"{files}: the kubeconfig defines no cluster and no context (an empty file?)",
            hint="pass the kubeconfig your cluster admin gave you, or start one with `gpuctl sim up`",
        )
    if not body:
        return  # the client library reports a missing --context or none chosen, in its words
    user = str(body.get("user") or "")
    if user:
        user_file, user_body = merged.entry("users", user)
        if user_file == Path():
            raise ConfigError(
                f"{where}: context {chosen!r} names user {user!r}, which is not in users", hint=_HINT
            )
        _check_files(user_file, f"user {user!r}", user_body, _USER_FILES)
        check_pem(user_file, f"user {user!r}", user_body, USER_PEM)
        _check_token(user_file, user, user_body)
        _check_exec(user_file, user, user_body.get("exec"))
    cluster_name = str(body.get("cluster") or "")
    cluster_file, cluster = merged.entry("clusters", cluster_name)
    if cluster_name and cluster_file == Path():
        raise ConfigError(
            f"{where}: context {chosen!r} names cluster {cluster_name!r}, which is not in clusters",
            hint=_HINT,
        )
    if cluster:
        _check_files(cluster_file, f"cluster {body.get('cluster')!r}", cluster, _CLUSTER_FILES)
        check_pem(cluster_file, f"cluster {body.get('cluster')!r}", cluster, CLUSTER_PEM)
        _check_server(cluster_file, str(body.get("cluster")), str(cluster.get("server") or ""))


def _check_files(path: Path, owner: str, body: dict[str, Any], fields: tuple[str, ...]) -> None:
    """Paths in `body` are absolute already (kubeconfigs.merge resolves them as kubectl does)."""
    for name in fields:
        value = body.get(name)
        if value and not Path(str(value)).is_file():
            raise ConfigError(f"{path}: {owner}: {name} {value}: file not found", hint=_HINT)


def _check_token(path: Path, user: str, body: dict[str, Any]) -> None:
    """kubectl sends `token` as it is, and a tokenFile's content trimmed (client-go's TrimSpace):
    a line break left in either is refused by its HTTP client ("invalid header field value")."""
    token = body.get("token")
    if isinstance(token, str) and unsendable(token):
        raise ConfigError(
            f"{path}: user {user!r}: token holds a line break or another control character",
            hint="write users[].user.token on one line, without a newline at its end "
            "(`kubectl config view --minify --raw` shows it)",
        )
    token_file = body.get("tokenFile")
    if token_file and not token and unsendable(_head(Path(str(token_file))).strip()):
        raise ConfigError(
            f"{path}: user {user!r}: tokenFile {token_file}: the token holds a line break or another "
            "control character",
            hint=f"write the token on one line into {token_file}",
        )


def _head(path: Path) -> str:
    """The start of a token file (it exists and is a regular file: _check_files saw to it)."""
    try:
        with path.open("rb") as file:
            return file.read(TOKEN_FILE_MAX_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""  # the client says why it cannot read it


def _check_exec(path: Path, user: str, plugin: Any) -> None:
    command = str(plugin.get("command") or "") if isinstance(plugin, dict) else ""
    if command and shutil.which(command) is None and not Path(command).is_file():
        raise ConfigError(
            f"{path}: user {user!r}: exec command {command!r} not found on PATH",
            hint=f"install the credential plugin {command!r} (your cloud's CLI provides it) "
            "or fix users[].user.exec",
        )


def _check_server(path: Path, cluster: str, server: str) -> None:
    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in server:
        raise ConfigError(
            f"{path}: cluster {cluster!r}: server {redact_url(server)!r} is not an http(s) URL",
            hint="set clusters[].cluster.server to https://HOST:PORT (`kubectl config view --minify`)",
        )
