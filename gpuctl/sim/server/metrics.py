"""Request counters of the simulated cluster, served at GET /metrics in the Prometheus text format.

A real API server counts its requests in `apiserver_request_total{verb,resource,subresource,code}`;
the sim counts the same way, so that a benchmark (or a curious user) running gpuctl against a sim
in another process can read how many requests gpuctl made, by verb and resource. The verbs are
the sim's (the RBAC verbs: get, list, watch, create, update, patch, delete, deletecollection),
plus `discovery` for non-resource paths and `error` for requests the API refused (404, 409 ...).
"""

from __future__ import annotations

import threading
from collections import Counter

METRICS_PATH = "/metrics"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
METRIC = "apiserver_request_total"


def resource_of(path: str) -> tuple[str, str]:
    """(resource, subresource) named by an API path; ("", "") for non-resource paths."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    if parts[:2] == ["api", "v1"]:
        rest = parts[2:]
    elif parts[0] == "apis" and len(parts) >= 3:
        rest = parts[3:]
    else:
        return "", ""
    if rest[:1] == ["watch"]:
        rest = rest[1:]
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
        rest = rest[2:]  # a namespaced resource: namespaces/<ns>/<resource>/...
    if not rest:
        return "", ""
    return rest[0], rest[2] if len(rest) > 2 else ""


class RequestMetrics:
    """Thread-safe request counts by (verb, resource, subresource, HTTP status code)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[tuple[str, str, str, int]] = Counter()

    def count(self, verb: str, path: str, code: int) -> None:
        resource, subresource = resource_of(path)
        key = (verb, resource, subresource, code)
        with self._lock:
            self._counts[key] += 1

    def total(self) -> int:
        with self._lock:
            return sum(self._counts.values())

    def by_verb(self) -> dict[str, int]:
        by_verb: Counter[str] = Counter()
        with self._lock:
            for (verb, _, _, _), count in self._counts.items():
                by_verb[verb] += count
        return dict(by_verb)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()

    def render(self) -> bytes:
        """The counters in the Prometheus text exposition format, one sample per label set."""
        with self._lock:
            samples = sorted(self._counts.items())
        lines = [
            f"# HELP {METRIC} Requests served by the simulated cluster, by verb, resource and code.",
            f"# TYPE {METRIC} counter",
        ]
        for (verb, resource, subresource, code), count in samples:
            labels = f'code="{code}",resource="{resource}",subresource="{subresource}",verb="{verb}"'
            lines.append(f"{METRIC}{{{labels}}} {count}")
        return ("\n".join(lines) + "\n").encode()


def parse_metrics(text: str) -> dict[tuple[str, str, str, int], int]:
    """The samples of `apiserver_request_total` in a /metrics page: (verb, resource, subresource,
    code) → count. Reads what render() writes (and the same metric of a real API server)."""
    samples: dict[tuple[str, str, str, int], int] = {}
    for line in text.splitlines():
        if not line.startswith(METRIC + "{"):
            continue
        label_text, _, value = line[len(METRIC) + 1 :].rpartition("} ")
        labels = dict(pair.split("=", 1) for pair in label_text.split(",") if "=" in pair)
        clean = {key: raw.strip('"') for key, raw in labels.items()}
        key = (
            clean.get("verb", ""),
            clean.get("resource", ""),
            clean.get("subresource", ""),
            int(clean.get("code", "0") or 0),
        )
        samples[key] = samples.get(key, 0) + int(float(value))
    return samples
