"""Files gpuctl writes that hold credentials or sit next to them: owner-only, never through a link.

The usual place for them is a folder other users can write to as well (/tmp, a shared project
folder). There, another user can plant a symbolic link at the name gpuctl is about to write, so
that gpuctl truncates or fills a file of the victim's choosing, or read a file gpuctl left
readable. So every such file is created 0600 under a name nobody can guess (then renamed into
place, which replaces a link rather than following it), or opened with O_NOFOLLOW; a link already
at the path is refused with one line naming it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import IO

from gpuctl.errors import ConfigError
from gpuctl.shell import command_line

PRIVATE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def refuse_link(path: Path) -> None:
    """Exit 2 when `path` is a symbolic link: gpuctl writes its own files only at real paths."""
    if path.is_symlink():
        raise ConfigError(
            f"{path}: is a symbolic link; gpuctl does not write credentials through a link "
            "(someone else may have planted it)",
            hint=f"remove the link (`{command_line('rm', path)}`) or pass the file it points to "
            f"({os.path.realpath(path)})",
        )


def write_private_file(path: Path, text: str, *, exclusive: bool = False) -> None:
    """Write `text` to `path`, owner-only. `exclusive`: the file must not exist yet (O_EXCL), as
    for a new kubeconfig; otherwise it is replaced atomically by a file written beside it."""
    refuse_link(path)
    if exclusive:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, PRIVATE_MODE)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    temporary = staged_file(path, text)
    try:
        temporary.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def staged_file(path: Path, text: str, *, mode: int = PRIVATE_MODE) -> Path:
    """`text` written to a new file beside `path` (the caller renames it over `path`, or removes
    it). mkstemp creates it O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, under a random name in the same
    folder, so a link planted there is never written through and the rename is atomic; `mode` is
    set on the open file before anything is written."""
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            if mode != PRIVATE_MODE:
                os.fchmod(handle.fileno(), mode)
            handle.write(text)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return Path(temporary)


def open_private_log(path: Path) -> IO[bytes]:
    """`path` opened for writing from its start, owner-only: a file of ours is truncated, a link
    or another user's file there is refused (OSError) rather than followed or written."""
    refuse_link(path)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW, PRIVATE_MODE)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise PermissionError(f"{path} is not a regular file of this user's")
        os.fchmod(descriptor, PRIVATE_MODE)
        os.ftruncate(descriptor, 0)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "wb")


def read_text_nofollow(path: Path) -> str:
    """The text of `path`, refusing (OSError) to read it through a symbolic link."""
    descriptor = os.open(path, os.O_RDONLY | _NOFOLLOW)
    with os.fdopen(descriptor, encoding="utf-8") as handle:
        return handle.read()
