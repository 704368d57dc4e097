"""The Ansible connection variables of an inventory host (ansible_port, ansible_host, ansible_user,
the private key file, ansible_become), as gpuctl's SSH probes and ansible-playbook read them.

Each must be a value Ansible and ssh take as it is meant; anything else refuses the host before
any connection (exit 2, naming host and variable) instead of quietly becoming something else: an
`ansible_port` of 0 read as ssh's 22, `ansible_become: perhaps` read as false, a list where a
user name goes. Values holding a Jinja template are Ansible's to render and left alone, except the
port, which gpuctl's own SSH connection needs as a number.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

PORT_VARS = ("ansible_port", "ansible_ssh_port")
# Ansible's old names second: the first one set wins, as in Ansible's ssh connection plugin.
_NAMED_VARS = (("ansible_host", "ansible_ssh_host"), ("ansible_user", "ansible_ssh_user"))
KEY_VARS = ("ansible_ssh_private_key_file", "ansible_private_key_file")
_BOOLEAN_VARS = ("ansible_become",)
_BOOLEAN_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0", "y", "n", "t", "f"})
_MAX_PORT = 65535
NAMES = (*PORT_VARS, *(name for names in _NAMED_VARS for name in names), *KEY_VARS, *_BOOLEAN_VARS)


def first_set(merged: Mapping[str, Any], names: tuple[str, ...]) -> tuple[str, Any]:
    """(the first of `names` set to something, its value); ("", None) when none is."""
    return next(((name, merged[name]) for name in names if merged.get(name) is not None), ("", None))


def port_number(merged: Mapping[str, Any]) -> int | None:
    """The host's SSH port (None: unset, ssh's default); call connection_problem first."""
    _, value = first_set(merged, PORT_VARS)
    return None if value is None or str(value).strip() == "" else int(str(value).strip())


def connection_problem(merged: Mapping[str, Any]) -> tuple[str, str] | None:
    """(variable, what is wrong with it) for the first connection variable Ansible would not take
    as meant; None when all are fine."""
    checks: list[tuple[tuple[str, ...], Callable[[Any], str]]] = [
        (PORT_VARS, _port_problem),
        *((names, _name_problem) for names in _NAMED_VARS),
        (KEY_VARS, _path_problem),
        (_BOOLEAN_VARS, _boolean_problem),
    ]
    for names, check in checks:
        name, value = first_set(merged, names)
        problem = check(value) if name else ""
        if problem:
            return name, problem
    return None


def _port_problem(value: Any) -> str:
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    if text == "":
        return ""
    if text is not None and text.isascii() and text.isdigit() and 0 < int(text) <= _MAX_PORT:
        return ""
    return f"must be a TCP port number (1-{_MAX_PORT}), got {value!r}"


def _templated(value: Any) -> bool:
    return isinstance(value, str) and "{{" in value


def _name_problem(value: Any) -> str:
    """A host name, address or user name: one word of printable characters."""
    if _templated(value) or (isinstance(value, str) and value.isprintable() and not value.split()[1:]):
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ""  # YAML reads some names as numbers; ssh takes them as text
    return f"must be one host name, address or user name, got {value!r}"


def _path_problem(value: Any) -> str:
    if isinstance(value, str) and value.strip() and value.isprintable():
        return ""
    return f"must be the path of a private key file, got {value!r}"


def _boolean_problem(value: Any) -> str:
    if isinstance(value, bool) or _templated(value):
        return ""
    if isinstance(value, (str, int)) and str(value).strip().lower() in _BOOLEAN_WORDS:
        return ""
    return f"must be true or false, got {value!r}"
