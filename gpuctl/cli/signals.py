"""Ctrl-C and SIGTERM end every long-running command the same way: cleanup first, then exit 130."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import typer

from gpuctl.errors import ExitCode
from gpuctl.held_signals import HELD


@contextlib.contextmanager
def signals_as_interrupt() -> Iterator[None]:
    """SIGTERM (CI cancelling a job) and SIGINT raise KeyboardInterrupt in the main thread.

    SIGINT is set explicitly: a process started in the background by a non-interactive shell
    (`gpuctl verify & ... kill -INT $!`) inherits SIGINT as ignored, and Python then never raises
    KeyboardInterrupt, so the command's cleanup would never run.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    interrupted = False

    def interrupt(_signum: int, _frame: Any) -> None:
        # The first signal interrupts; more Ctrl-C must not cut the cleanup short, nor kill
        # gpuctl on its way out: signals stay ignored until the process exits with 130.
        nonlocal interrupted
        interrupted = True
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous_term = signal.signal(signal.SIGTERM, interrupt)
    previous_int = signal.signal(signal.SIGINT, interrupt)
    # A process started while its parent held them blocked (sim up --detach starting its server)
    # inherits them blocked: they would never arrive.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, HELD)
    try:
        yield
    finally:
        if not interrupted:
            signal.signal(signal.SIGTERM, previous_term)
            signal.signal(signal.SIGINT, previous_int)


@contextlib.contextmanager
def interruptible(cleanup: str) -> Iterator[None]:
    """Run a command's body so that Ctrl-C or SIGTERM unwinds it (its `finally` blocks clean up),
    then says `interrupted: <cleanup>` on stderr and exits 130."""
    with signals_as_interrupt():
        try:
            yield
        except KeyboardInterrupt:
            sys.stderr.write(f"interrupted: {cleanup}\n")
            raise typer.Exit(int(ExitCode.INTERRUPTED)) from None
