"""Files gpuctl reads that the user names: inventories (and the group_vars/host_vars beside them),
scenarios, kubeconfigs, `explain FILE`, `--expect-gpus @FILE`. Each is read here, and refused
unless it is a regular file of a sane size.

What else a path can name makes a reader misbehave: opening a FIFO blocks until some writer opens
it (forever, when none does), a device like /dev/zero never ends, /dev/stdin reads whatever the
shell connected, a socket cannot be opened at all, and a 10 GB file fills the memory. So the file's
kind is checked with stat before anything opens it, and again on the open descriptor (opened
non-blocking, so a FIFO put there in between cannot block either), and no more than the limit is
read. A process substitution (`<(cmd)`) is a pipe too: it is refused like a FIFO, with a hint.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from gpuctl.errors import ConfigError

MIB = 1 << 20
# A YAML or INI input (kubeconfig, scenario, inventory, group_vars): the largest real ones are a
# few MB (a 10,000-host inventory is about 1 MB).
YAML_LIMIT = 16 * MIB
# Text to explain (logs, describe output): larger, but bounded, as it is held in memory.
TEXT_LIMIT = 64 * MIB
# The files a tree check looks at (an inventory folder, group_vars/, host_vars/): beyond this
# many entries the rest are left to the reader.
TREE_ENTRIES = 10_000

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO or pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _problem(status: os.stat_result, limit: int) -> str:
    """What makes a file with this status unfit to read ("" when it is fit)."""
    for test, kind in _KINDS:
        if test(status.st_mode):
            return f"is {kind}, not a regular file"
    if not stat.S_ISREG(status.st_mode):
        return "is not a regular file"
    if status.st_size > limit:
        return f"is {_size(status.st_size)}, more than the {_size(limit)} gpuctl reads"
    return ""


def _size(count: int) -> str:
    return f"{count / MIB:.0f} MiB" if count >= MIB else f"{count} bytes"


def refusal(path: Path, what: str, *, limit: int = YAML_LIMIT, hint: str = "") -> ConfigError | None:
    """The error for `path` when it exists and is not a regular file of at most `limit` bytes;
    None when it is one, or cannot be stat'ed (the reader's own open names a missing file)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    problem = _problem(status, limit)
    return _error(path, what, problem, hint) if problem else None


def check_input_file(path: Path, what: str, *, limit: int = YAML_LIMIT, hint: str = "") -> None:
    """Raise ConfigError (exit 2) naming `path` as `what` when it is no regular file of at most
    `limit` bytes; a path that does not exist is left to the reader's own message."""
    error = refusal(path, what, limit=limit, hint=hint)
    if error is not None:
        raise error


def read_input_file(path: Path, what: str, *, limit: int = YAML_LIMIT, hint: str = "") -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes; ConfigError naming it as
    `what` otherwise. OSError (a missing or unreadable file) is the caller's to say."""
    check_input_file(path, what, limit=limit, hint=hint)
    descriptor = os.open(path, _OPEN_FLAGS)
    with os.fdopen(descriptor, "rb") as handle:
        problem = _problem(os.fstat(descriptor), limit)  # what was opened, if it changed since
        data = b"" if problem else handle.read(limit + 1)
    if len(data) > limit:
        problem = f"is more than the {_size(limit)} gpuctl reads"
    if problem:
        raise _error(path, what, problem, hint)
    return data


def read_stream(stream: object, what: str, *, limit: int = TEXT_LIMIT, hint: str = "") -> bytes:
    """An open stream (standard input) read to its end; ConfigError naming it as `what` when it
    holds more than `limit` bytes (/dev/zero never ends)."""
    read = getattr(stream, "read", None)
    chunks: list[bytes] = []
    size = 0
    while read is not None and size <= limit:
        chunk = read(min(MIB, limit + 1 - size))
        if not chunk:
            break
        chunk = chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise ConfigError(f"{what} is more than the {_size(limit)} gpuctl reads", hint=hint)
    return b"".join(chunks)


def check_tree(folder: Path, what: str, *, limit: int = YAML_LIMIT, hint: str = "") -> None:
    """Raise ConfigError for the first entry under `folder` that is no regular file of at most
    `limit` bytes (sub-folders are walked, not refused; hidden entries are skipped, as Ansible
    skips them). A folder that is missing is fine."""
    for path in _tree(folder):
        check_input_file(path, what, limit=limit, hint=hint)


def _tree(folder: Path) -> Iterator[Path]:
    """Up to TREE_ENTRIES non-folder entries under `folder`, links to folders not followed."""
    seen = 0
    for root, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            seen += 1
            if seen > TREE_ENTRIES:
                return
            yield Path(root) / name


def _error(path: Path, what: str, problem: str, hint: str) -> ConfigError:
    return ConfigError(f"{path}: {what} {problem}", hint=hint or _hint(what, problem))


def _hint(what: str, problem: str) -> str:
    if "FIFO" in problem:
        return (
            f"make the {what} a regular file (`cat PIPE > FILE`, then use FILE): a pipe or `<(...)` "
            "can be read only once, and a FIFO nobody writes to never ends"
        )
    if "directory" in problem:
        return f"pass the {what} itself, not the folder it is in"
    if "MiB" in problem:
        return f"pass the {what} itself: this is larger than any real one (a log or an image?)"
    return f"pass a regular file as the {what} (a device or socket never holds one)"
