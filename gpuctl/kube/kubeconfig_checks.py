"""What the kubernetes client accepts in a kubeconfig but kubectl refuses: a context's user that is
not in the file, a certificate, key or token file that does not exist, a credential plugin that is
not installed, a server that is no http(s) URL. The client would go on anonymously (or fail much
later, as 'cannot reach the cluster'); these are configuration errors naming the file and field."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gpuctl.errors import ConfigError

_HINT = "check the file with `kubectl config view --minify`"
_USER_FILES = ("client-certificate", "client-key", "tokenFile")
_CLUSTER_FILES = ("certificate-authority",)


def _documents(paths: list[Path]) -> list[tuple[Path, dict[str, Any]]]:
    import yaml

    documents = []
    for path in paths:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue  # the client library has already said what is wrong with it
        if isinstance(data, dict):
            documents.append((path, data))
    return documents


def _named(documents: list[tuple[Path, dict[str, Any]]], kind: str, name: str) -> tuple[Path, dict[str, Any]]:
    """The first entry called `name` in the `kind` list (like kubectl: the first file wins)."""
    for path, data in documents:
        for entry in data.get(kind) or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                body = entry.get(kind.removesuffix("s")) if kind != "users" else entry.get("user")
                return path, body if isinstance(body, dict) else {}
    return Path(), {}


def check_kubeconfig(paths: list[Path], context: str | None) -> None:
    """Raise ConfigError for what kubectl would refuse in the chosen context of `paths`."""
    documents = _documents(paths)
    if not documents:
        return
    chosen = context or next(
        (str(d.get("current-context")) for _, d in documents if d.get("current-context")), ""
    )
    where, body = _named(documents, "contexts", chosen)
    if not body:
        return  # the client library reports a missing context
    user = str(body.get("user") or "")
    if user:
        user_file, user_body = _named(documents, "users", user)
        if user_file == Path():
            raise ConfigError(
                f"{where}: context {chosen!r} names user {user!r}, which is not in users", hint=_HINT
            )
        _check_files(user_file, f"user {user!r}", user_body, _USER_FILES)
        _check_exec(user_file, user, user_body.get("exec"))
    cluster_file, cluster = _named(documents, "clusters", str(body.get("cluster") or ""))
    if cluster:
        _check_files(cluster_file, f"cluster {body.get('cluster')!r}", cluster, _CLUSTER_FILES)
        _check_server(cluster_file, str(body.get("cluster")), str(cluster.get("server") or ""))


def _check_files(path: Path, owner: str, body: dict[str, Any], fields: tuple[str, ...]) -> None:
    for name in fields:
        value = body.get(name)
        if value and not (path.parent / Path(str(value)).expanduser()).is_file():
            raise ConfigError(f"{path}: {owner}: {name} {value}: file not found", hint=_HINT)


def _check_exec(path: Path, user: str, plugin: Any) -> None:
    command = str(plugin.get("command") or "") if isinstance(plugin, dict) else ""
    if command and shutil.which(command) is None and not (path.parent / command).is_file():
        raise ConfigError(
            f"{path}: user {user!r}: exec command {command!r} not found on PATH",
            hint=f"install the credential plugin {command!r} (your cloud's CLI provides it) "
            "or fix users[].user.exec",
        )


def _check_server(path: Path, cluster: str, server: str) -> None:
    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in server:
        raise ConfigError(
            f"{path}: cluster {cluster!r}: server {server!r} is not an http(s) URL",
            hint="set clusters[].cluster.server to https://HOST:PORT (`kubectl config view --minify`)",
        )
