"""Ctrl-C and SIGTERM held back while a process is started whose handle the cleanup needs."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

HELD = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def held_signals() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back while the block runs; on leaving it they arrive. A signal
    between a child's start and the assignment of its handle would leave the child running with
    nothing to stop it. The child inherits them blocked: gpuctl unblocks them as it starts
    (cli/signals.py)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
