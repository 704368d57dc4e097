"""Live counts of one verify run's pods: written by the run's threads, read by a display."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class ProgressCounts:
    nodes: int
    pods: int
    created: int
    running: int
    done: int
    elapsed_s: float
    timeout_s: float


class PodProgress:
    """How far the verification pods have got: created, running, done (any outcome)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._nodes = 0
        self._pods = 0
        self._timeout_s = 0.0
        self._created = 0
        self._phases: dict[str, str] = {}
        self._done: set[str] = set()

    def planned(self, *, nodes: int, pods: int, timeout_s: float) -> None:
        with self._lock:
            self._nodes, self._pods, self._timeout_s = nodes, pods, timeout_s

    def created(self) -> None:
        with self._lock:
            self._created += 1

    def phase(self, pod: str, phase: str) -> None:
        with self._lock:
            self._phases[pod] = phase

    def finished(self, pod: str) -> None:
        with self._lock:
            self._done.add(pod)

    def counts(self) -> ProgressCounts:
        with self._lock:
            running = sum(p == "Running" for pod, p in self._phases.items() if pod not in self._done)
            elapsed = time.monotonic() - self._started
            return ProgressCounts(
                self._nodes, self._pods, self._created, running, len(self._done), elapsed, self._timeout_s
            )
