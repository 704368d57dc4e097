"""Run a gpuctl command as a process, signal it once it reached a state, collect how it ended."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

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
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_until(ready, "the command to reach the state under test")
        for sent in signals:
            process.send_signal(sent)
            time.sleep(0.005)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return process.returncode, stderr
