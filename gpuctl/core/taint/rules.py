"""The taint flags and label selectors of `taint-gpu-nodes`, checked before any request.

Catching a bad `--key` or `--selector` here gives a one-line error naming the flag (exit 2)
instead of an API server 422/400 halfway through a run.
"""

from __future__ import annotations

import re

from gpuctl.defaults import GPU_TAINT_EFFECT, GPU_TAINT_KEY, GPU_TAINT_VALUE
from gpuctl.errors import ConfigError
from gpuctl.kube.nodes import TAINT_EFFECTS, Taint
from gpuctl.names import qualified_name_problem, value_problem

_SET_RE = re.compile(r"^(?P<key>\S+)\s+(?P<op>in|notin)\s+\((?P<values>[^()]*)\)$")
_EQUALITY_RE = re.compile(r"^(?P<key>[^=!\s]+)\s*(?P<op>==|!=|=)\s*(?P<value>\S*)$")
_EXISTS_RE = re.compile(r"^(?P<bang>!?)\s*(?P<key>[^=!\s(),]+)$")


# The taint gpuctl sets by default (bootstrap, the demo, `taint-gpu-nodes` without flags).
DEFAULT_TAINT = Taint(key=GPU_TAINT_KEY, value=GPU_TAINT_VALUE, effect=GPU_TAINT_EFFECT)


def taint_spec(key: str, value: str, effect: str) -> Taint:
    """Validate the taint flags and build the spec, or raise ConfigError naming the flag."""
    hint = (
        f"e.g. `gpuctl taint-gpu-nodes --key {GPU_TAINT_KEY} --value {GPU_TAINT_VALUE} "
        f"--effect {GPU_TAINT_EFFECT}`"
    )
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
