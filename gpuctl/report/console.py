"""The one rich Console factory: no colour when NO_COLOR is set or the stream is not a terminal,
and no text it prints can drive the terminal (report/safe_text.py)."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from gpuctl.bounds import COLUMNS
from gpuctl.report.safe_text import visible, visible_text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.segment import Segment
    from rich.text import Text

# Width used when the output is not a terminal (CI logs, pipes): wide enough that tables do not wrap.
PIPE_WIDTH = 160
_TRAILING_SPACE = re.compile(r"[ \t]+(?=\n|$)")


def make_console(stream: TextIO | None = None, *, stderr: bool = False) -> Console:
    """A Console writing to `stream` (default stdout, or stderr).

    Colour and styles only on a terminal and without NO_COLOR (https://no-color.org); on pipes the
    width is fixed so tables keep one line per row. Strings are never read as markup (gpuctl styles
    its own words with Text styles), and every string and Text is shown through safe_text.visible
    as it is laid out, so that text from a node, a log or a file prints as text, whichever renderer
    forgot to say so.
    """
    from rich.console import Console
    from rich.text import Text

    class PipeTolerantConsole(Console):
        def render_str(self, text: str, **options: Any) -> Text:
            # Every str printed or put in a table (and measured for its column) comes here.
            return super().render_str(visible(text), **options)

        def render(
            self, renderable: RenderableType, options: ConsoleOptions | None = None
        ) -> Iterable[Segment]:
            # Text made directly (Text(...)) is laid out here, recursively, inside tables too.
            if isinstance(renderable, Text):
                renderable = visible_text(renderable)
            return super().render(renderable, options)

        def _render_buffer(self, buffer: Iterable[Segment]) -> str:
            # Table cells are padded to their column's width; off a terminal that padding would
            # end lines in spaces (diffs, grep and copy-paste see them), so it is cut.
            text = super()._render_buffer(buffer)
            return text if self.is_terminal else _TRAILING_SPACE.sub("", text)

        def on_broken_pipe(self) -> None:
            # `gpuctl verify 2>&1 | head -1`: the reader has what it wanted; rich would exit 1
            # here. Later output goes to /dev/null and the command ends with its own status.
            # (Standard output is guarded before rich sees its errors: gpuctl/cli/stdout_guard.py.)
            self.quiet = True
            with contextlib.suppress(OSError, ValueError):
                descriptor = os.open(os.devnull, os.O_WRONLY)
                os.dup2(descriptor, self.file.fileno())
                os.close(descriptor)

    target = stream if stream is not None else (sys.stderr if stderr else sys.stdout)
    is_tty = bool(getattr(target, "isatty", lambda: False)())
    no_color = bool(os.environ.get("NO_COLOR"))
    columns = os.environ.get("COLUMNS", "")
    width = None if is_tty else (int(columns) if COLUMNS.accepts(columns) else PIPE_WIDTH)
    return PipeTolerantConsole(
        file=target,
        no_color=no_color,
        color_system="auto" if is_tty and not no_color else None,
        force_terminal=False if not is_tty else None,
        markup=False,
        highlight=False,
        emoji=False,
        width=width,
        soft_wrap=False,
    )
