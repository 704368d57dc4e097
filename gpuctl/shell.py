"""Command lines printed for people to paste: every word shell-quoted, because a path, name or
host that comes from the user or the cluster (a space, a `;`, a `$(...)`) must reach the command
as one word and never run as shell syntax. Standard library only, so every layer may use it."""

from __future__ import annotations

import shlex
from os import PathLike, fspath


def command_line(*words: str | PathLike[str] | int) -> str:
    """`words` as one shell command line, each quoted only where the shell needs it:
    command_line("gpuctl", "preflight", "-i", "/a b/hosts.yml") -> "gpuctl preflight -i '/a b/hosts.yml'"."""
    return shlex.join(fspath(word) if isinstance(word, PathLike) else str(word) for word in words)
