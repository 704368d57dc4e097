"""Typed access to one mapping of a YAML file, every error naming `source: path` (the scenario
file of the simulated cluster uses it; subclasses set the hint)."""

from __future__ import annotations

from typing import Any

from gpuctl.bounds import DAY_S
from gpuctl.errors import ConfigError


class Fields:
    hint = ""  # the next step named in every error
    """Typed access to one mapping of the scenario, every error naming `source: path`."""

    def __init__(self, data: Any, path: str, source: str, allowed: set[str]) -> None:
        self.source = source
        self.path = path
        if not isinstance(data, dict):
            self.fail(path or "(top level)", f"must be a mapping, got {type_name(data)}")
        unknown = sorted(str(key) for key in data if key not in allowed)
        if unknown:
            self.fail(self.at(unknown[0]), f"unknown field (known: {', '.join(sorted(allowed))})")
        self.data: dict[str, Any] = data

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, where: str, problem: str) -> None:
        raise ConfigError(f"{self.source}: {where}: {problem}", hint=self.hint)

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def integer(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(self.at(key), f"must be an integer, got {type_name(value)}")
        if value < minimum:
            self.fail(self.at(key), f"must be >= {minimum}")
        return int(value)

    def number(self, key: str, default: float, maximum: float = DAY_S) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(self.at(key), f"must be a number, got {type_name(value)}")
        if value < 0:
            self.fail(self.at(key), "must be >= 0")
        if not value <= maximum:  # also YAML's .nan and .inf, which are floats too
            self.fail(self.at(key), f"must be <= {maximum:g}, got {value}")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail(self.at(key), f"must be true or false, got {type_name(value)}")
        return bool(value)

    def string(self, key: str, default: str) -> str:
        value = self.data.get(key, default)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key != "name":
            value = str(value)  # driverVersion: 550.90 unquoted is still meant as text
        if not isinstance(value, str) or not value:
            self.fail(self.at(key), f"must be a non-empty string, got {type_name(value)}")
        return str(value)

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.data.get(key, default)
        if value not in choices:
            self.fail(self.at(key), f"must be one of {', '.join(choices)}, got {value!r}")
        return str(value)

    def string_list(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = self.data.get(key, list(default))
        if not isinstance(value, list):
            self.fail(self.at(key), f"must be a list, got {type_name(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item:
                self.fail(f"{self.at(key)}[{index}]", "must be a non-empty string")
        return tuple(value)


def type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer"}
    if value is None:
        return "nothing (null)"
    return names.get(type(value), type(value).__name__)
