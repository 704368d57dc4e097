"""The one error family of gpuctl: caught once at the top, printed as one line plus a hint."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Stable, documented exit codes (README, `gpuctl --help`)."""

    OK = 0
    CHECK_FAILED = 1
    USAGE = 2
    UNREACHABLE = 3
    INTERNAL = 70  # a bug in gpuctl (EX_SOFTWARE)
    INTERRUPTED = 130


class GpuctlError(Exception):
    """A failure the user can act on: a one-line message, a hint naming the next step."""

    exit_code: ExitCode = ExitCode.USAGE

    def __init__(self, message: str, hint: str = "", exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class ConfigError(GpuctlError):
    """Bad flag, missing or invalid file, unknown context, invalid scenario or inventory (exit 2)."""

    exit_code = ExitCode.USAGE


class NotImplementedYet(GpuctlError):
    """A command whose body belongs to a later release (exit 2)."""

    exit_code = ExitCode.USAGE


class UnreachableError(GpuctlError):
    """Cannot reach or be authorised by the cluster or the hosts (exit 3)."""

    exit_code = ExitCode.UNREACHABLE
