"""A kubeconfig user's exec credential plugin: bounded in time, and its failure named.

The kubernetes client runs the plugin (`users[].user.exec`) when it loads the kubeconfig, and
again when the credential expires, without a time limit; when the plugin fails it logs the reason
and goes on without a credential, so the server's 401 then blames the token. gpuctl hands the
client a kubeconfig whose plugins run through exec_timeout.py, which kills a plugin after
GPUCTL_EXEC_TIMEOUT seconds (default 120), and turns the client's log of a failed plugin into one
error naming the plugin (exit 3).
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuctl.bounds import EXEC_TIMEOUT, from_environment
from gpuctl.errors import UnreachableError
from gpuctl.kube.kubeconfigs import MergedKubeconfig
from gpuctl.shell import command_line

DEFAULT_EXEC_TIMEOUT_S = 120.0
SCRIPT = Path(__file__).with_name("exec_timeout.py")
TIMED_OUT = "exec: process returned 124"  # the client's words for exec_timeout.TIMED_OUT


@dataclass(frozen=True)
class Plugin:
    """The exec plugin of the user a command acts as, and where the kubeconfig names it."""

    kubeconfig: Path
    user: str
    argv: tuple[str, ...]

    def failure(self, logged: str) -> UnreachableError:
        """The error for the client's log line about this plugin."""
        where = f"{self.kubeconfig}: user {self.user!r}: credential plugin {self.argv[0]!r}"
        if logged.startswith(TIMED_OUT):
            return UnreachableError(
                f"{where} did not return within {exec_timeout_s():g} s (killed)",
                hint=f"run it yourself to see what it waits for (`{command_line(*self.argv)}`); "
                f"for a slow login raise {EXEC_TIMEOUT.name} (seconds)",
            )
        detail = logged.removeprefix("exec: ").strip().splitlines()[0]
        return UnreachableError(
            f"{where} failed: {detail}",
            hint=f"run it yourself to see why (`{command_line(*self.argv)}`), or log in again with your "
            "cloud's CLI",
        )


def exec_timeout_s() -> float:
    """How long a credential plugin may run: $GPUCTL_EXEC_TIMEOUT seconds, else 120."""
    return from_environment(EXEC_TIMEOUT, DEFAULT_EXEC_TIMEOUT_S)


def chosen_plugin(merged: MergedKubeconfig, context: str | None) -> Plugin | None:
    """The exec plugin of the chosen context's user, if it has one."""
    _, body = merged.entry("contexts", context or merged.current_context)
    user = str(body.get("user") or "")
    where, user_body = merged.entry("users", user)
    argv = _argv(user_body.get("exec"))
    return Plugin(where, user, argv) if argv else None


def with_bounded_plugins(document: dict[str, Any]) -> dict[str, Any]:
    """`document` (a merged kubeconfig) whose users' exec plugins run through exec_timeout.py."""
    seconds = f"{exec_timeout_s():g}"

    def bounded(entry: Any) -> Any:
        user = entry.get("user") if isinstance(entry, dict) else None
        argv = _argv(user.get("exec")) if isinstance(user, dict) else ()
        if not argv or not isinstance(user, dict):
            return entry
        runner = {"command": sys.executable, "args": ["-I", str(SCRIPT), seconds, *argv]}
        return {**entry, "user": {**user, "exec": {**user["exec"], **runner}}}

    return {**document, "users": [bounded(entry) for entry in document.get("users") or []]}


@contextlib.contextmanager
def failures(plugin: Plugin | None) -> Iterator[None]:
    """Raise the failure of `plugin` the client logs in the block as one error (instead of a log
    line on stderr and a 401 later)."""
    if plugin is None:
        yield
        return
    logged = _Logged()
    root = logging.getLogger()
    root.addHandler(logged)  # a handler on the root logger: the client's log lines print no more
    try:
        yield
    finally:
        root.removeHandler(logged)
    failure = next((line for line in logged.lines if line.startswith("exec:")), None)
    if failure is not None:
        raise plugin.failure(failure)


class _Logged(logging.Handler):
    """Keeps the messages the kubernetes client logs (it logs a failed plugin on the root logger)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _argv(plugin: Any) -> tuple[str, ...]:
    if not isinstance(plugin, dict) or not isinstance(plugin.get("command"), str):
        return ()
    args = plugin.get("args") or []
    if not isinstance(args, list):
        return ()
    return (plugin["command"], *(str(arg) for arg in args))
