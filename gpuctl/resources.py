"""Locate the files gpuctl ships: the Ansible playbooks and the Kubernetes templates.

Installed from a wheel they are package data (`gpuctl.playbooks`, `gpuctl.templates`, mapped by
setup.py from the repository's top-level folders); in a source checkout the folders themselves.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from gpuctl.errors import ConfigError

_REPO_ROOT = Path(__file__).resolve().parent.parent


def _package_dir(package: str, marker: str) -> Path | None:
    try:
        traversable = importlib.resources.files(package)
    except (ModuleNotFoundError, TypeError):
        return None
    # Editable installs and namespace packages give a MultiplexedPath: take its first real folder.
    paths = getattr(traversable, "_paths", None)
    candidate = Path(str(paths[0] if paths else traversable))
    return candidate if (candidate / marker).exists() else None


def playbooks_dir() -> Path:
    """The folder holding site.yml and roles/."""
    found = _package_dir("gpuctl.playbooks", "site.yml")
    if found is not None:
        return found
    repo = _REPO_ROOT / "playbooks"
    if (repo / "site.yml").exists():
        return repo
    raise ConfigError(
        "the gpuctl playbooks (site.yml) are missing from this installation",
        hint="reinstall gpuctl (`pip install --force-reinstall gpuctl`)",
    )


def templates_dir() -> Path:
    """The folder holding the `*.yaml.j2` Kubernetes templates."""
    found = _package_dir("gpuctl.templates", ".")
    return found if found is not None else _REPO_ROOT / "templates"


def role_defaults_files() -> list[Path]:
    """defaults/main.yml of every shipped role (for the list of known gpuctl_* settings)."""
    try:
        roles = playbooks_dir() / "roles"
    except ConfigError:
        return []
    return sorted(roles.glob("*/defaults/main.yml"))
