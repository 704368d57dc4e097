"""Run a gpuctl command as a process, signal it once it reached a state, collect how it ended."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence

from tests.polling import wait_until


def interrupt_when(
    args: Sequence[str],
    ready: Callable[[], object],
    signals: Sequence[signal.Signals],
    *,
    launcher: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> tuple[int, str]:
    """Start `python [launcher] -m gpuctl ARGS`, send `signals` once `ready()` holds; its exit
    code and stderr. `launcher`: arguments placed before `-m` (e.g. `-c SCRIPT` that sets up the
    process before it execs gpuctl)."""
    argv = [sys.executable, *launcher, "-m", "gpuctl", *args]
    with running(argv, env=env) as process:
        wait_until(ready, "the command to reach the state under test")
        for sent in signals:
            process.send_signal(sent)
            time.sleep(0.005)
        _, stderr = process.communicate(timeout=30)
    return process.returncode, stderr


@contextlib.contextmanager
def running(
    argv: Sequence[str], *, stdout: int = subprocess.PIPE, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """`argv` started with its stderr piped (text); killed on the way out when a failed assertion
    left it running, so no test leaves a process behind."""
    process = subprocess.Popen(list(argv), stdout=stdout, stderr=subprocess.PIPE, text=True, env=env)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def interrupt(process: subprocess.Popen[str]) -> str:
    """Ctrl-C `process` and wait for it to end (30 s at most): its stderr."""
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    return stderr
