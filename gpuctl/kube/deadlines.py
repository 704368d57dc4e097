"""A deadline for each API request as a whole: connecting, sending, the answer and its body.

urllib3's timeouts bound each connect and each socket read. A server, or a proxy in front of it,
that sends a byte every few seconds never trips them, and gpuctl waited for ever. Here a request
runs inside `bounded(seconds)`; a watchdog thread shuts the socket of a request whose deadline
has passed down, which ends its blocked read at once, and the block raises RequestTimedOut, which
client.api_call names (exit 3).

The watchdog learns which connection a request uses from the connection itself: `install` gives
the client's pools a connection class that tells the request running on its thread when it
starts sending (urllib3 picks the connection from its pool inside the call). A connection that
is still connecting when the deadline passes is shut down once it has a socket: its connect is
bounded by the connect timeout.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

from gpuctl.bounds import REQUEST_TIMEOUT, from_environment

DEFAULT_REQUEST_TIMEOUT_S = 60.0
# How soon the watchdog looks again at an expired request whose connection has no socket yet.
UNCONNECTED_RECHECK_S = 0.2


def request_timeout_s() -> float:
    """The bound of one API request as a whole: $GPUCTL_REQUEST_TIMEOUT seconds, else 60."""
    return from_environment(REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT_S)


class RequestTimedOut(Exception):
    """A request (with the reading of its answer) outlived its deadline. Not an OSError: urllib3
    retries OSErrors, and a request out of time must not start again."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no complete answer within {seconds:g} s")
        self.seconds = seconds


class _Clock:
    """One request's deadline and the connection it is using."""

    __slots__ = ("connection", "deadline", "expired", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.connection: Any = None
        self.expired = False


class _Watchdog:
    """One daemon thread for the process, waking at the earliest deadline of the requests in
    flight (a few hundred at most: one per worker thread)."""

    def __init__(self) -> None:
        self._clocks: set[_Clock] = set()
        self._changed = threading.Condition()
        self._wake_at = float("inf")
        self._thread: threading.Thread | None = None

    def watch(self, clock: _Clock) -> None:
        with self._changed:
            self._clocks.add(clock)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="gpuctl-deadlines", daemon=True)
                self._thread.start()
            if clock.deadline < self._wake_at:
                self._changed.notify()

    def forget(self, clock: _Clock) -> None:
        with self._changed:
            self._clocks.discard(clock)

    def attach(self, clock: _Clock, connection: Any) -> None:
        """`clock`'s request now sends on `connection`; RequestTimedOut if its time is up (a
        retry urllib3 starts after the watchdog shut the first connection down)."""
        with self._changed:
            if clock.expired:
                raise RequestTimedOut(clock.seconds)
            clock.connection = connection

    def _run(self) -> None:
        with self._changed:
            while True:
                now = time.monotonic()
                for clock in [clock for clock in self._clocks if clock.deadline <= now]:
                    self._expire(clock)
                self._wake_at = min((clock.deadline for clock in self._clocks), default=float("inf"))
                self._changed.wait(None if self._wake_at == float("inf") else self._wake_at - now)

    def _expire(self, clock: _Clock) -> None:
        clock.expired = True
        sock = getattr(clock.connection, "sock", None)
        if sock is None:
            clock.deadline += UNCONNECTED_RECHECK_S  # not connected yet: look again shortly
            return
        self._clocks.discard(clock)
        with contextlib.suppress(OSError):
            # socket.socket's own shutdown, also for an SSLSocket: the reading thread's blocked
            # recv returns at once, and the TLS state stays the reading thread's to tear down.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)


_WATCHDOG = _Watchdog()
_running = threading.local()  # .clock: the _Clock of the request this thread is in, if any


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Bound the request this thread sends in the block, and the reading of its answer, to
    `seconds` in all. Inside another bounded block, the outer deadline holds."""
    if getattr(_running, "clock", None) is not None:
        yield
        return
    clock = _Clock(seconds)
    _running.clock = clock
    _WATCHDOG.watch(clock)
    try:
        yield
    except Exception as error:
        if clock.expired and not isinstance(error, RequestTimedOut):
            raise RequestTimedOut(seconds) from error
        raise
    finally:
        _running.clock = None
        _WATCHDOG.forget(clock)


def remaining_s() -> float:
    """Seconds left to the request this thread is in (inf outside `bounded`)."""
    clock: _Clock | None = getattr(_running, "clock", None)
    return float("inf") if clock is None else clock.deadline - time.monotonic()


def install(rest_client: Any) -> None:
    """Give the pools of a kubernetes RESTClientObject connections that report to `bounded`
    (before its first request: urllib3 creates a pool at the first request to a host)."""
    manager = rest_client.pool_manager
    manager.pool_classes_by_scheme = {
        scheme: _reporting_pool(pool_class) for scheme, pool_class in manager.pool_classes_by_scheme.items()
    }


@functools.cache
def _reporting_pool(pool_class: type[Any]) -> type[Any]:
    """`pool_class` (urllib3's, or SOCKS's) with a connection class that reports to `bounded`."""
    connection_class = type(
        f"Bounded{pool_class.ConnectionCls.__name__}", (_ReportingConnection, pool_class.ConnectionCls), {}
    )
    return type(f"Bounded{pool_class.__name__}", (pool_class,), {"ConnectionCls": connection_class})


class _ReportingConnection:
    """Mixed into a urllib3 connection class: a request starting on it tells the watchdog."""

    def request(self, *args: Any, **kwargs: Any) -> Any:
        clock: _Clock | None = getattr(_running, "clock", None)
        if clock is not None:
            _WATCHDOG.attach(clock, self)
        return super().request(*args, **kwargs)  # type: ignore[misc] # the urllib3 class it is mixed into
