"""Validation of the gpuctl_* inventory settings, before any host is touched.

The playbooks assert the same rules in their first play; checking here first gives a message that
names the file and the key, and fails before an SSH connection is opened.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gpuctl.errors import ConfigError
from gpuctl.hosts.inventory import NODE_NAME_VAR, Host, Inventory
from gpuctl.package_data import default_driver_branch
from gpuctl.shell import command_line
from gpuctl.urls import redact_url

Check = Callable[[Any], str]  # returns "" when the value is fine, else what is wrong

_BOOL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0"})
_VERSION_RE = re.compile(r"^\d+\.\d+(\.\d+)?(-[0-9A-Za-z.~+]+)?$")
_TOOLKIT_VERSION_RE = re.compile(r"^\d+\.\d+\.\d+(-[0-9A-Za-z.~+]+)?$")
_URL_RE = re.compile(r"^(https?://[^\s/]+|file:///?)\S*$")
_SERIAL_RE = re.compile(r"^[1-9]\d*$")
# gpuctl_driver_branch when the inventory leaves it unset (playbooks/roles/nvidia_driver/defaults/main.yml).


def _branch(value: Any) -> str:
    text = str(value)
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not text.isdigit():
        return f'must be digits like "550", got {text!r}'
    return "" if len(text) == 3 else f'must be three digits like "550", got {text!r}'


def _boolean(value: Any) -> str:
    if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _BOOL_WORDS):
        return ""
    return f"must be true or false, got {value!r}"


def _one_of(*choices: str) -> Check:
    def check(value: Any) -> str:
        if isinstance(value, str) and value in choices:
            return ""
        shown = ", ".join(repr(choice) for choice in choices)
        return f"must be one of {shown}, got {value!r}"

    return check


def _matching(pattern: re.Pattern[str], example: str, *, empty_ok: bool) -> Check:
    def check(value: Any) -> str:
        text = str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
        if text is not None and ((empty_ok and text == "") or pattern.match(text)):
            return ""
        return f"must look like {example!r}{' or be empty' if empty_ok else ''}, got {value!r}"

    return check


def _url(value: Any) -> str:
    if value == "" or (isinstance(value, str) and _URL_RE.match(value)):
        return ""
    shown = redact_url(value) if isinstance(value, str) else value  # a mirror's URL may hold a password
    return f"must be an http://, https:// or file:// URL (empty: the public default), got {shown!r}"


def _serial(value: Any) -> str:
    if isinstance(value, (int, str)) and not isinstance(value, bool) and _SERIAL_RE.match(str(value)):
        return ""
    return f"must be a positive number of hosts rebooted at a time, got {value!r}"


CHECKS: dict[str, Check] = {
    "gpuctl_driver_branch": _branch,
    "gpuctl_driver_version": _matching(_VERSION_RE, "550.90.07", empty_ok=True),
    "gpuctl_driver_open_kernel_modules": _boolean,
    "gpuctl_driver_source": _one_of("cuda_repo", "distribution"),
    "gpuctl_cuda_repo_url": _url,
    "gpuctl_cuda_repo_key_url": _url,
    "gpuctl_toolkit_version": _matching(_TOOLKIT_VERSION_RE, "1.17.8-1", empty_ok=False),
    "gpuctl_toolkit_repo_url": _url,
    "gpuctl_toolkit_repo_key_url": _url,
    "gpuctl_distribution_repo_url": _url,
    "gpuctl_distribution_repo_key_url": _url,
    "gpuctl_distribution_security_repo_url": _url,
    "gpuctl_container_runtime": _one_of("", "containerd", "docker", "crio"),
    "gpuctl_nvidia_runtime_default": _boolean,
    "gpuctl_cdi_enabled": _boolean,
    "gpuctl_reboot_policy": _one_of("if_needed", "never"),
    "gpuctl_reboot_serial": _serial,
    "gpuctl_fabricmanager": _one_of("auto", "true", "false", "yes", "no"),
    "gpuctl_fabric": _one_of("auto", "ib", "roce", "efa", "none"),
}


def validate_inventory(inventory: Inventory, known_settings: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """Raise one ConfigError listing every invalid gpuctl_* value; return warnings (unknown keys)."""
    warnings: dict[str, None] = {}
    problems: dict[str, str] = {}  # message -> key, in inventory order, once per file and key
    for host in inventory.hosts:
        for key, value in sorted(host.vars.items()):
            problem = _value_problem(inventory, key, value)
            if problem:
                problems.setdefault(problem, key)
            warning = _unknown_key_warning(inventory, key, known_settings)
            if warning:
                warnings[warning] = None
        pin = _driver_pin_problem(inventory, host)
        if pin:
            problems.setdefault(pin, "gpuctl_driver_version")
    if problems:
        raise _invalid_settings_error(inventory, problems)
    return tuple(warnings)


def _invalid_settings_error(inventory: Inventory, problems: dict[str, str]) -> ConfigError:
    """One error line: the only problem as it is, or `N invalid gpuctl settings: a; b; c`."""
    messages, keys = list(problems), list(dict.fromkeys(problems.values()))
    if len(messages) == 1:
        return ConfigError(messages[0], hint=_fix_hint(inventory, keys[0]))
    return ConfigError(
        f"{inventory.path}: {len(messages)} invalid gpuctl settings: {'; '.join(messages)}",
        hint=_fix_hint(inventory, ", ".join(keys)),
    )


def _value_problem(inventory: Inventory, key: str, value: Any) -> str:
    check = CHECKS.get(key)
    if check is None or _is_template(value):
        return ""
    # Booleans may arrive as INI strings; the fabricmanager switch may be a YAML boolean.
    if key == "gpuctl_fabricmanager" and isinstance(value, bool):
        return ""
    problem = check(value)
    return f"{origin_of(inventory.path, key)}: {key}: {problem}" if problem else ""


def _driver_pin_problem(inventory: Inventory, host: Host) -> str:
    branch = str(host.vars.get("gpuctl_driver_branch", default_driver_branch()))
    version = str(host.vars.get("gpuctl_driver_version", "") or "")
    if not branch or not version or _is_template(branch) or _is_template(version):
        return ""
    if CHECKS["gpuctl_driver_branch"](branch) or version.startswith(branch + "."):
        return ""  # an invalid branch is reported by itself
    key = "gpuctl_driver_version"
    problem = f"{version!r} is not on driver branch {branch!r} (gpuctl_driver_branch)"
    return f"{origin_of(inventory.path, key)}: {key}: {problem}"


def _unknown_key_warning(inventory: Inventory, key: str, known: frozenset[str]) -> str:
    if not known or key in known or key in CHECKS:
        return ""
    close = difflib.get_close_matches(key, sorted(known | set(CHECKS)), n=1)
    suggestion = f" (did you mean {close[0]}?)" if close else ""
    where = origin_of(inventory.path, key)
    return f"{where}: {key}: unknown gpuctl setting, ignored by the playbooks{suggestion}"


def _fix_hint(inventory: Inventory, key: str) -> str:
    return (
        f"fix {key} (the settings are documented in inventories/sample/group_vars/all/), then rerun "
        f"`{command_line('gpuctl', 'preflight', '--inventory', inventory.path)}`"
    )


def _is_template(value: Any) -> bool:
    return isinstance(value, str) and ("{{" in value or "{%" in value)


def origin_of(inventory_path: Path, key: str) -> str:
    """The file that set `key`: the first of the inventory, its host_vars and group_vars that sets it
    (ansible-core's own origin tags live in a private module gpuctl does not import)."""
    return _display_path(_search_origin(inventory_path, key) or str(inventory_path))


def _search_origin(inventory_path: Path, key: str) -> str | None:
    base = inventory_path if inventory_path.is_dir() else inventory_path.parent
    candidates = [] if inventory_path.is_dir() else [inventory_path]
    for folder in ("host_vars", "group_vars"):
        candidates.extend(sorted(path for path in (base / folder).rglob("*") if path.is_file()))
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*[:=]", re.MULTILINE)
    for candidate in candidates:
        try:
            if pattern.search(candidate.read_text(errors="replace")):
                return str(candidate)
        except OSError:
            continue
    return None


def _display_path(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path


def known_settings(defaults_files: list[Path]) -> frozenset[str]:
    """Every gpuctl_* variable the roles declare in their defaults/main.yml."""
    import yaml

    names: set[str] = set()
    for path in defaults_files:
        try:
            data = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if isinstance(data, Mapping):
            names.update(str(key) for key in data if str(key).startswith("gpuctl_"))
    return frozenset(names | {NODE_NAME_VAR})  # gpuctl's own setting, not the playbooks'
