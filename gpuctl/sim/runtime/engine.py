"""One timer thread drives every controller (scheduler, kubelet, DaemonSets): a heap of due
callbacks, run under the store lock. No thread per pod, no polling."""

from __future__ import annotations

import heapq
import itertools
import sys
import threading
import time
import traceback
from collections.abc import Callable


class Engine:
    def __init__(self, store_lock: threading.RLock) -> None:
        self._store_lock = store_lock
        self._wakeup = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._sequence = itertools.count()
        self._pending_keys: set[str] = set()
        self._stopped = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="gpuctl-sim-engine", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._wakeup:
            self._stopped = True
            self._wakeup.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def at(self, delay: float, callback: Callable[[], None]) -> None:
        """Run `callback` (under the store lock) `delay` seconds from now."""
        with self._wakeup:
            heapq.heappush(self._heap, (time.monotonic() + delay, next(self._sequence), callback))
            self._wakeup.notify()

    def soon(self, key: str, callback: Callable[[], None], delay: float = 0.005) -> None:
        """Debounced: many requests for `key` within `delay` run `callback` once."""
        with self._wakeup:
            if key in self._pending_keys:
                return
            self._pending_keys.add(key)

        def run() -> None:
            with self._wakeup:
                self._pending_keys.discard(key)
            callback()

        self.at(delay, run)

    def _next_due(self) -> Callable[[], None] | None:
        with self._wakeup:
            while not self._stopped:
                if self._heap:
                    due, _, callback = self._heap[0]
                    wait = due - time.monotonic()
                    if wait <= 0:
                        heapq.heappop(self._heap)
                        return callback
                    self._wakeup.wait(wait)
                else:
                    self._wakeup.wait()
            return None

    def _loop(self) -> None:
        while True:
            callback = self._next_due()
            if callback is None:
                return
            try:
                with self._store_lock:
                    callback()
            except Exception:  # one failing controller must not stop the thread that drives all
                traceback.print_exc(file=sys.stderr)
