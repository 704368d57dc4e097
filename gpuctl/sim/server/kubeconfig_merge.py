"""The sim's kubeconfig, written without losing anyone else's: a new file, or, like kind and minikube
do, the sim's cluster, user and context merged into an existing kubeconfig (its other entries kept)
and taken out again when the sim stops, with the previous current-context restored.

It carries the sim's bearer token, so it is written owner-only (0600), never through a symbolic
link, and replaced atomically from a file of a random name (gpuctl.private_files)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gpuctl.errors import ConfigError
from gpuctl.input_files import check_input_file
from gpuctl.private_files import read_text_nofollow, refuse_link, write_private_file

SIM_ENTRY = "gpuctl-sim"
_SECTIONS = ("clusters", "contexts", "users")


@dataclass(frozen=True)
class KubeconfigClaim:
    """What writing the sim's kubeconfig did, so that stopping the sim can undo exactly that."""

    path: Path
    created: bool  # the file is the sim's alone: remove it when the sim stops
    previous_context: str = ""  # the merged file's current-context before the sim's ("" none)


def _load(path: Path) -> dict[str, Any] | None:
    """The kubeconfig at `path` as a dict, None when absent; refuse anything that is not one."""
    refuse_link(path)
    check_input_file(path, "kubeconfig")  # a FIFO would block the read, a device is no file to write
    try:
        text = read_text_nofollow(path)
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(
            f"{path}: cannot read the existing file: {getattr(error, 'strerror', None) or error}",
            hint="pass another --kubeconfig path; gpuctl never overwrites a file it cannot read",
        ) from error
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        data = "not yaml"
    if data is None:
        return {}
    if not isinstance(data, dict) or (data.get("kind") not in (None, "Config")):
        raise ConfigError(
            f"{path}: exists and is not a kubeconfig; gpuctl will not overwrite it",
            hint="pass a new path, e.g. `gpuctl sim up --kubeconfig ~/.kube/gpuctl-sim.yaml`",
        )
    return data


def _only_sim_entries(data: dict[str, Any]) -> bool:
    names = [entry.get("name") for section in _SECTIONS for entry in data.get(section) or []]
    return all(name == SIM_ENTRY for name in names)


def _sim_entries(url: str, token: str, authority_data: str) -> dict[str, dict[str, Any]]:
    return {
        "clusters": {
            "name": SIM_ENTRY,
            "cluster": {"server": url, "certificate-authority-data": authority_data},
        },
        "contexts": {
            "name": SIM_ENTRY,
            "context": {"cluster": SIM_ENTRY, "user": SIM_ENTRY, "namespace": "default"},
        },
        "users": {"name": SIM_ENTRY, "user": {"token": token}},
    }


def _without_sim(data: dict[str, Any]) -> dict[str, Any]:
    for section in _SECTIONS:
        entries = [entry for entry in data.get(section) or [] if entry.get("name") != SIM_ENTRY]
        data[section] = entries
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    """Replace `path` atomically with an owner-only file: it holds the sim's token now, whatever
    the mode of the kubeconfig it was merged into (kubectl writes kubeconfigs 0600 as well)."""
    write_private_file(path, yaml.safe_dump(data, sort_keys=False))


def claim_kubeconfig(
    path: Path, url: str, token: str, authority_data: str, fresh_text: str
) -> KubeconfigClaim:
    """Point `path` at the sim: write `fresh_text` to a new file (or over a stale one of the sim's
    alone), or merge the sim's entries into the kubeconfig already there."""
    existing = _load(path)
    if existing is None:
        write_private_file(path, fresh_text, exclusive=True)
        return KubeconfigClaim(path=path, created=True)
    if _only_sim_entries(existing):
        write_private_file(path, fresh_text)
        return KubeconfigClaim(path=path, created=True)
    previous = str(existing.get("current-context") or "")
    merged = _without_sim(existing)
    merged.setdefault("apiVersion", "v1")
    merged.setdefault("kind", "Config")
    for section, entry in _sim_entries(url, token, authority_data).items():
        merged[section].append(entry)
    merged["current-context"] = SIM_ENTRY
    _write(path, merged)
    return KubeconfigClaim(
        path=path, created=False, previous_context="" if previous == SIM_ENTRY else previous
    )


def release_kubeconfig(claim: KubeconfigClaim) -> None:
    """Undo `claim`: remove the sim's own file, or take the sim's entries out of a merged one."""
    if claim.created:
        with contextlib.suppress(ConfigError):
            data = _load(claim.path)
            if data is not None and _only_sim_entries(data):
                claim.path.unlink(missing_ok=True)
        return
    with contextlib.suppress(ConfigError, OSError):
        data = _load(claim.path)
        if data is None:
            return
        restored = _without_sim(data)
        if restored.get("current-context") == SIM_ENTRY:
            if claim.previous_context:
                restored["current-context"] = claim.previous_context
            else:
                restored.pop("current-context", None)
        _write(claim.path, restored)


def check_kubeconfig_target(path: Path) -> None:
    """Refuse (exit 2) a path holding something other than a kubeconfig, before starting anything."""
    _load(path)
