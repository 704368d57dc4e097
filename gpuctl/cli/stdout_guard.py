"""Standard output that closes or fills while a command prints does not change its exit status.

`gpuctl verify | head -1` with a failing node must still exit 1: the reader left, the nodes still
fail. So while a command runs, sys.stdout is this guard: a write or flush that fails because the
reader left (EPIPE) or the terminal hung up (EIO) is remembered, later output is dropped, and the
command ends as it would have, with its own status (as kubectl and most CLIs do). A full disk
(ENOSPC: `gpuctl status > /dev/full`) is remembered too, and said on stderr once the command ended:
its output was lost, so the run cannot count as a success (exit 2 unless the command failed with
its own code).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO

from gpuctl.errors import ExitCode

# The reader is gone: nothing to say, nobody to say it to.
GONE = frozenset({errno.EPIPE, errno.EIO})
# The output was lost where it was going (a full disk, a file over its size limit, stdout closed).
LOST = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EBADF})
_GONE_EVENTS = select.POLLERR | select.POLLHUP | select.POLLNVAL


class GuardedStdout:
    """sys.stdout while a command runs: writes that fail for GONE or LOST reasons are remembered
    in `failure`, not raised, and later output is dropped; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        if self.failure is None:
            with self._kept():
                return self.stream.write(text)
        return len(text)

    def flush(self) -> None:
        if self.failure is None:
            with self._kept():
                self.stream.flush()

    @contextlib.contextmanager
    def _kept(self) -> Iterator[None]:
        try:
            yield
        except OSError as error:
            if error.errno not in GONE | LOST:
                raise
            self.failure = error
            discard(self.stream)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def discard(stream: Any) -> None:
    """Send what is still to be written to `stream`, and everything after, to /dev/null: the
    interpreter's own flush at exit then finds nothing to complain about."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        descriptor = os.open(os.devnull, os.O_WRONLY)
        os.dup2(descriptor, stream.fileno())
        os.close(descriptor)


def stdout_gone() -> bool:
    """Whether standard output stopped taking output (a loop that prints, like `verify --watch`,
    stops then)."""
    guard = sys.stdout
    return isinstance(guard, GuardedStdout) and guard.failure is not None


def sleep_while_read(seconds: float) -> bool:
    """Sleep `seconds` and say True, or say False (at once) when standard output's reader left:
    a pipe whose reading end is closed reports POLLERR on its writing end, so a loop that prints
    only now and then (`verify --watch | head -1`) stops without waiting for its next line."""
    if stdout_gone():
        return False
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):  # not a real file (tests capture it)
        time.sleep(seconds)
        return True
    poller = select.poll()
    poller.register(descriptor, 0)  # POLLERR and POLLHUP are reported whatever is asked
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if any(events & _GONE_EVENTS for _, events in poller.poll(left * 1000)):
            if isinstance(sys.stdout, GuardedStdout):
                sys.stdout.failure = BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
            return False
    return True


@contextlib.contextmanager
def guarded_stdout() -> Iterator[GuardedStdout]:
    """sys.stdout guarded for the block, flushed at its end, then put back."""
    original = sys.stdout
    with contextlib.ExitStack() as closing:
        if original is None:  # `gpuctl status >&-`: Python starts without sys.stdout
            guard = GuardedStdout(closing.enter_context(open(os.devnull, "w", encoding="utf-8")))
            guard.failure = OSError(errno.EBADF, "it is closed")
        else:
            guard = GuardedStdout(original)
        sys.stdout = guard
        try:
            yield guard
        finally:
            guard.flush()
            sys.stdout = original


def final_status(guard: GuardedStdout, code: int) -> int:
    """The exit status of a command that ended with `code`: the same, unless its output was lost
    (then it is said on stderr, and a success becomes exit 2)."""
    failure = guard.failure
    if failure is None or failure.errno in GONE:
        return code
    hint = (
        "give the command a standard output (drop `>&-`; `> /dev/null` discards it), then rerun"
        if failure.errno == errno.EBADF
        else "free space where standard output goes, or send it elsewhere (`> FILE` on another "
        "disk), then rerun"
    )
    with contextlib.suppress(OSError, AttributeError):  # stderr may be gone too
        sys.stderr.write(f"error: cannot write standard output: {failure.strerror or failure}\n")
        sys.stderr.write(f"hint: {hint}\n")
    return code if code != ExitCode.OK else int(ExitCode.USAGE)
