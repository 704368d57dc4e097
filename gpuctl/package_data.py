"""Locate the files gpuctl ships: the Ansible playbooks and the Kubernetes templates.

Installed from a wheel they are package data (`gpuctl.playbooks`, `gpuctl.templates`, mapped by
setup.py from the repository's top-level folders); in a source checkout the folders themselves.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from gpuctl.errors import ConfigError

_REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_SUFFIX = ".yaml.j2"


def _shipped_dir(package: str, repo_folder: str, marker: str) -> Path | None:
    """The first folder holding `marker` (a glob): where the import system puts `package` (a wheel
    or an editable install), else the repository checkout's `repo_folder`."""
    try:
        spec = importlib.util.find_spec(package)
    except (ModuleNotFoundError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for candidate in [*(Path(location) for location in locations), _REPO_ROOT / repo_folder]:
        if candidate.is_dir() and any(candidate.glob(marker)):
            return candidate
    return None


def playbooks_dir() -> Path:
    """The folder holding site.yml and roles/."""
    found = _shipped_dir("gpuctl.playbooks", "playbooks", "site.yml")
    if found is None:
        raise ConfigError(
            "the gpuctl playbooks (site.yml) are missing from this installation",
            hint="reinstall gpuctl (`pip install --force-reinstall gpuctl`)",
        )
    return found


def templates_dir() -> Path:
    """The folder holding the `*.yaml.j2` Kubernetes templates."""
    found = _shipped_dir("gpuctl.templates", "templates", f"*{TEMPLATE_SUFFIX}")
    return found if found is not None else _REPO_ROOT / "templates"


def role_defaults_files() -> list[Path]:
    """defaults/main.yml of every shipped role (for the list of known gpuctl_* settings)."""
    try:
        roles = playbooks_dir() / "roles"
    except ConfigError:
        return []
    return sorted(roles.glob("*/defaults/main.yml"))


@functools.cache
def role_default(role: str, key: str) -> Any:
    """A shipped role's default (defaults/main.yml): the one home of host-side defaults such as
    the driver branch, which the playbooks use without gpuctl and gpuctl reads from there."""
    import yaml

    path = playbooks_dir() / "roles" / role / "defaults" / "main.yml"
    defaults = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if key not in defaults:
        raise ConfigError(
            f"{path}: {key} is missing", hint="reinstall gpuctl (`pip install --force-reinstall gpuctl`)"
        )
    return defaults[key]


def default_driver_branch() -> str:
    from gpuctl.defaults import DRIVER_BRANCH_KEY, DRIVER_ROLE

    return str(role_default(DRIVER_ROLE, DRIVER_BRANCH_KEY))


def default_toolkit_version() -> str:
    """The NVIDIA container toolkit version the toolkit role installs (Debian revision included)."""
    from gpuctl.defaults import TOOLKIT_ROLE, TOOLKIT_VERSION_KEY

    return str(role_default(TOOLKIT_ROLE, TOOLKIT_VERSION_KEY))


def min_free_disk_gib() -> float:
    """Below this much free space preflight fails a host (the preflight role's threshold)."""
    from gpuctl.defaults import MIN_FREE_MIB_KEY, PREFLIGHT_ROLE

    return int(role_default(PREFLIGHT_ROLE, MIN_FREE_MIB_KEY)) / 1024
