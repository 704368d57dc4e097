"""The one rich Console factory: no colour when NO_COLOR is set or the stream is not a terminal."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console
    from rich.segment import Segment

# Width used when the output is not a terminal (CI logs, pipes): wide enough that tables do not wrap.
PIPE_WIDTH = 160
_TRAILING_SPACE = re.compile(r"[ \t]+(?=\n|$)")


def make_console(stream: TextIO | None = None, *, stderr: bool = False) -> Console:
    """A Console writing to `stream` (default stdout, or stderr).

    Colour and styles only on a terminal and without NO_COLOR (https://no-color.org); on pipes the
    width is fixed so tables keep one line per row.
    """
    from rich.console import Console

    class PipeTolerantConsole(Console):
        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            # Table cells are padded to their column's width; off a terminal that padding would
            # end lines in spaces (diffs, grep and copy-paste see them), so it is cut.
            text = super()._render_buffer(buffer)
            return text if self.is_terminal else _TRAILING_SPACE.sub("", text)

        def on_broken_pipe(self) -> None:
            # `gpuctl status | head -1`: the reader has what it wanted; that is no error (rich
            # itself exits 1 here). Later writes go to /dev/null so the exit stays quiet.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise SystemExit(0)

    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(target, "isatty", lambda: False)())
    no_color = bool(os.environ.get("NO_COLOR"))
    columns = os.environ.get("COLUMNS", "")
    width = None if is_tty else (int(columns) if columns.isdigit() else PIPE_WIDTH)
    return PipeTolerantConsole(
        file=target,
        no_color=no_color,
        color_system="auto" if is_tty and not no_color else None,
        force_terminal=False if not is_tty else None,
        highlight=False,
        emoji=False,
        width=width,
        soft_wrap=False,
    )
