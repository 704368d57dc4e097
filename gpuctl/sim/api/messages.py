"""Requests and responses of the simulated API, independent of the HTTP server."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from gpuctl.sim.api.kinds import ResourceType

JSON = "application/json"


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes = b""
    path: str = ""
    query: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = urlsplit(self.target)
        self.path = parts.path.rstrip("/") or "/"
        self.query = {
            key: values[-1] for key, values in parse_qs(parts.query, keep_blank_values=True).items()
        }

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")

    def flag(self, name: str) -> bool:
        """A boolean query parameter, read like the API server's strconv.ParseBool: `watch=true`,
        `watch=1` and `watch=True` (what older Python clients send) all mean true."""
        return self.query.get(name, "") in ("1", "t", "T", "true", "TRUE", "True")


@dataclass
class Response:
    status: int
    body: bytes = b""
    content_type: str = JSON
    stream: Iterator[bytes] | None = None
    headers: list[tuple[str, str]] = field(default_factory=list)  # extra ones, e.g. Warning


@dataclass(frozen=True)
class Route:
    resource: ResourceType
    namespace: str
    name: str
    subresource: str
    watch: bool


def encode(obj: Any) -> bytes:
    return orjson.dumps(obj)  # compact UTF-8 JSON, as the stored objects (sim/api/encoded.py)
