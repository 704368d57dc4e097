"""The kubeconfig files kubectl reads, merged as kubectl merges them: the one place gpuctl decides
which cluster, user and context a command acts on.

With `KUBECONFIG=a:b`, kubectl (client-go's loading rules) takes:
- each named cluster, context and user from the first file that defines that name;
- current-context from the first file that sets a non-empty one (so `kubectl config
  current-context` names a's context whenever a sets one);
- relative file paths (certificates, keys, token files, an exec plugin's command given as a path)
  relative to the file that holds them;
and skips files that are missing or empty. The official Python client's own merge takes the *last*
file's current-context, so with a:b naming different contexts it would act on another cluster than
kubectl shows. gpuctl merges here and hands the client one document.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuctl.errors import ConfigError
from gpuctl.input_files import read_input_file

SECTIONS = ("clusters", "contexts", "users")
_HINT = "check the file with `kubectl config view`"
_ENTRY_KEY = {"clusters": "cluster", "contexts": "context", "users": "user"}
FILE_FIELDS = {
    "clusters": ("certificate-authority",),
    "users": ("client-certificate", "client-key", "tokenFile"),
}


@dataclass(frozen=True)
class MergedKubeconfig:
    """kubectl's view of `files`: `document` is what `kubectl config view --merge` shows."""

    files: tuple[Path, ...]
    document: dict[str, Any]
    origins: dict[tuple[str, str], Path] = field(default_factory=dict)  # (section, name) -> its file

    @property
    def current_context(self) -> str:
        return str(self.document.get("current-context") or "")

    def entry(self, section: str, name: str) -> tuple[Path, dict[str, Any]]:
        """(the file that defines it, its body) for the named cluster, context or user; the body
        is {} and the path empty when no file defines the name."""
        for item in self.document[section]:
            if item.get("name") == name:
                body = item.get(_ENTRY_KEY[section])
                return self.origins[(section, name)], body if isinstance(body, dict) else {}
        return Path(), {}


def read_document(path: Path) -> dict[str, Any]:
    """One kubeconfig file as a mapping ({} when empty); ConfigError naming it when it is not one."""
    import yaml

    try:
        data = yaml.safe_load(read_input_file(path, "kubeconfig").decode("utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"{path}: cannot read the kubeconfig: {getattr(error, 'strerror', None) or error}",
            hint="check the file's permissions, or pass another --kubeconfig",
        ) from error
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{path}:{where} invalid kubeconfig: {problem}", hint=_HINT) from error
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: invalid kubeconfig: not a YAML mapping",
            hint="check the file with `kubectl config view`",
        )
    return data


def merge(files: list[Path]) -> MergedKubeconfig:
    """Read and merge `files` (existing ones, in KUBECONFIG's order) with kubectl's rules."""
    document: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "preferences": {}}
    document.update({section: [] for section in SECTIONS})
    origins: dict[tuple[str, str], Path] = {}
    unique = list(dict.fromkeys(path.absolute() for path in files))
    for path in unique:
        data = read_document(path)
        if not document.get("current-context") and data.get("current-context"):
            document["current-context"] = str(data["current-context"])
        for section in SECTIONS:
            for item in data.get(section) or []:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    continue
                if (section, item["name"]) in origins:
                    continue  # the first file to name it wins
                origins[(section, item["name"])] = path
                document[section].append(_resolved(section, item, path.parent))
    return MergedKubeconfig(tuple(unique), document, origins)


def _resolved(section: str, item: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`item` with its file paths made absolute against `folder`, as kubectl resolves them."""
    key = _ENTRY_KEY[section]
    body = item.get(key)
    if not isinstance(body, dict):
        return item
    body = dict(body)
    for name in FILE_FIELDS.get(section, ()):
        value = body.get(name)
        if isinstance(value, str) and value:
            body[name] = os.path.normpath(folder / Path(value).expanduser())
    plugin = body.get("exec")
    if section == "users" and isinstance(plugin, dict):
        command = plugin.get("command")
        # kubectl resolves a command given as a relative path, not a bare name looked up on PATH
        if isinstance(command, str) and os.sep in command and not os.path.isabs(command):
            body["exec"] = {**plugin, "command": os.path.normpath(folder / command)}
    return {**item, key: body}
