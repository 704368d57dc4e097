"""Run a gpuctl command as a process, signal it once it reached a state, collect how it ended.

Every child a test sends SIGINT to runs as `with_sigint_default(argv)`: a test run started as a
background job (`pytest &` in a script) has SIGINT ignored, its children would inherit that, and
their Ctrl-C tests would time out although gpuctl is fine."""

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
    """`argv` started with its stderr piped (text) and SIGINT at its default; killed on the way out
    when a failed assertion left it running, so no test leaves a process behind."""
    process = subprocess.Popen(
        with_sigint_default(argv), stdout=stdout, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


# Sets SIGINT to its default, then execs its arguments (the same process: signals sent to it reach
# the program). SIGPIPE and SIGXFSZ go back to their default too, as Popen leaves them, since this
# Python ignores them and an exec keeps an ignored signal ignored. An exec, not a `preexec_fn`,
# which is unsafe in a test process with threads; Popen's `restore_signals` leaves SIGINT alone.
_SIGINT_DEFAULT_THEN_EXEC = (
    "import os, signal, sys\n"
    "for name in ('SIGINT', 'SIGPIPE', 'SIGXFSZ'): signal.signal(getattr(signal, name), signal.SIG_DFL)\n"
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def with_sigint_default(argv: Sequence[str]) -> list[str]:
    """`argv` to run with SIGINT at its default disposition, whatever the test run inherited."""
    return [sys.executable, "-c", _SIGINT_DEFAULT_THEN_EXEC, *argv]


def interrupt(process: subprocess.Popen[str]) -> str:
    """Ctrl-C `process` and wait for it to end (30 s at most): its stderr."""
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    return stderr
