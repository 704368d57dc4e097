"""Files gpuctl writes where the user says (verify --report, render --out, sim up --kubeconfig and
the record and log beside it): never over a file the same command reads, never through a link.

Typing `--report K` for `--kubeconfig K` (or a --report path that KUBECONFIG lists, or a sim
kubeconfig whose sidecar name is the scenario) would otherwise lose the user's file to an HTML
page or a pid record, and exit 0. So each command names the files it reads (`Input`), and one
check compares every path it is about to write with them before any work starts: resolved paths
(a symbolic link or `../` names the same file) and, for files that exist, device and inode (a
hard link does too).

The write itself goes to a file of an unpredictable name created O_EXCL|O_NOFOLLOW beside the
target (gpuctl.private_files.staged_file), then renamed over it: a link planted at the target is
replaced by the rename, not followed, and one planted at the temporary name cannot be, as that
name is not known beforehand and O_EXCL refuses any entry already there.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gpuctl.errors import ConfigError
from gpuctl.private_files import staged_file


@dataclass(frozen=True)
class Input:
    """A file the command reads, as the user named it, and what it is ("kubeconfig", "scenario")."""

    path: Path
    what: str


@dataclass(frozen=True)
class OutputFile:
    """A file the command writes: the flag and value that name it, and the path it writes (the
    value itself, or a file derived from it such as the sim's record beside its kubeconfig)."""

    flag: str
    value: Path
    path: Path


def inputs(what: str, paths: Iterable[Path | str | None]) -> list[Input]:
    """`paths` (None and "" skipped) as inputs of one kind."""
    return [Input(Path(path), what) for path in paths if path]


def refuse_inputs(outputs: Iterable[OutputFile], read: Iterable[Input], hint: str) -> None:
    """ConfigError (exit 2) naming both files when an output is one of the files read."""
    read = list(read)
    for output in outputs:
        for source in read:
            if _same_file(output.path, source.path):
                derived = "" if output.path == output.value else f" would write {output.path}, which"
                raise ConfigError(
                    f"{output.flag} {output.value}:{derived} is the {source.what} {source.path} "
                    "this command reads; gpuctl never writes over its own input",
                    hint=hint,
                )


def _same_file(first: Path, second: Path) -> bool:
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    with contextlib.suppress(OSError, ValueError):
        return os.path.samefile(first, second)
    return False


def stage_output(path: Path, text: str) -> Path:
    """`text` in a new file beside `path`, for the caller to rename over `path` (or remove): mode
    as the umask allows, like any file the user's shell would create."""
    return staged_file(path, text, mode=0o666 & ~_umask())


def write_output(path: Path, text: str) -> None:
    """Write `text` whole over `path` or not at all: staged beside it, then renamed over it."""
    staged = stage_output(path, text)
    try:
        staged.replace(path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


def _umask() -> int:
    # Reading the umask means setting it: 0o077 meanwhile, so a file another thread creates in
    # this instant is private, never more open than the user asked.
    mask = os.umask(0o077)
    os.umask(mask)
    return mask
