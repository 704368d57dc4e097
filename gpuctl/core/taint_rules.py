"""Kubernetes syntax rules for taints and label selectors, checked before any request.

Catching a bad `--key` or `--selector` here gives a one-line error naming the flag (exit 2)
instead of an API server 422/400 halfway through a run.
"""

from __future__ import annotations

import re

from gpuctl.errors import ConfigError
from gpuctl.kube.nodes import TAINT_EFFECTS, Taint

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_NAME_RE = re.compile(rf"^{_NAME}$")
_DNS_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_SET_RE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s+\((?P<values>[^()]*)\)$")
_EQUALITY_RE = re.compile(r"^(?P<key>[^=!\s]+)\s*(?P<op>==|!=|=)\s*(?P<value>\S*)$")
_EXISTS_RE = re.compile(r"^(?P<bang>!?)\s*(?P<key>[^=!\s(),]+)$")
MAX_NAME = 63
MAX_PREFIX = 253


def qualified_name_problem(key: str) -> str:
    """Why `key` is not a valid label/taint key (empty string when it is)."""
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return "the prefix before '/' is empty"
    if prefix and (len(prefix) > MAX_PREFIX or not _DNS_SUBDOMAIN_RE.match(prefix)):
        return f"prefix {prefix!r} must be a lower-case DNS subdomain"
    if not name or len(name) > MAX_NAME or not _NAME_RE.match(name):
        return (
            "name part must be 1-63 characters: letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return ""


def value_problem(value: str) -> str:
    """Why `value` is not a valid label/taint value (empty string when it is)."""
    if value and (len(value) > MAX_NAME or not _NAME_RE.match(value)):
        return (
            "must be at most 63 characters: letters, digits, '-', '_' or '.', "
            "starting and ending with a letter or digit"
        )
    return ""


def taint_spec(key: str, value: str, effect: str) -> Taint:
    """Validate the taint flags and build the spec, or raise ConfigError naming the flag."""
    hint = "e.g. `gpuctl taint-gpu-nodes --key nvidia.com/gpu --value present --effect NoSchedule`"
    problem = qualified_name_problem(key)
    if problem:
        raise ConfigError(f"--key {key!r}: {problem}", hint=hint)
    problem = value_problem(value)
    if problem:
        raise ConfigError(f"--value {value!r}: {problem}", hint=hint)
    if effect not in TAINT_EFFECTS:
        raise ConfigError(f"--effect {effect!r}: must be one of {', '.join(TAINT_EFFECTS)}", hint=hint)
    return Taint(key=key, value=value, effect=effect)


def _split_requirements(selector: str) -> list[str]:
    """Split on the commas that separate requirements, not those inside `in (a,b)`."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return parts


def _requirement_problem(requirement: str) -> str:
    for pattern in (_SET_RE, _EQUALITY_RE, _EXISTS_RE):
        match = pattern.match(requirement)
        if match is None:
            continue
        problem = qualified_name_problem(match.group("key"))
        if problem:
            return f"key {match.group('key')!r}: {problem}"
        values = match.groupdict().get("values")
        candidates = [part.strip() for part in values.split(",")] if values is not None else []
        if "value" in match.groupdict():
            candidates = [match.group("value")]
        for candidate in candidates:
            if value_problem(candidate):
                return f"value {candidate!r}: {value_problem(candidate)}"
        return ""
    return f"cannot parse {requirement!r}"


def check_label_selector(selector: str) -> None:
    """Raise ConfigError when `selector` is not a valid Kubernetes label selector."""
    hint = "e.g. --selector 'nvidia.com/gpu.present=true' or --selector 'pool in (gpu,a100)'"
    if not selector.strip():
        raise ConfigError("--selector: empty label selector", hint=hint)
    for requirement in _split_requirements(selector):
        problem = _requirement_problem(requirement) if requirement else "empty requirement"
        if problem:
            raise ConfigError(f"--selector {selector!r}: {problem}", hint=hint)
