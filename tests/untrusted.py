"""Hostile text as a node, a log or a file can hold it, and a colour terminal to print it on."""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator

import pytest

MARKUP = "[bold green]PASS[/] [link=http://x]y[/link]"
CLEAR = "\x1b[2J"  # erase the screen
CLIPBOARD = "\x1b]52;c;aGVsbG8=\x07"  # OSC 52: write "hello" to the clipboard
LINK = "\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\"  # OSC 8: "x" linking to http://evil
CSI = "\x9b31m"  # the 8-bit CSI: red, on terminals that read C1 controls
HOSTILE = f"{MARKUP} {CLEAR}{CLIPBOARD}{LINK} {CSI} ok\rFAKE PASS"
SHOWN = (  # HOSTILE as gpuctl shows it
    r"[bold green]PASS[/] [link=http://x]y[/link] \x1b[2J\x1b]52;c;aGVsbG8=\x07"
    r"\x1b]8;;http://evil\x1b\x\x1b]8;;\x1b\ \x9b31m ok\rFAKE PASS"
)

# What a terminal may receive from gpuctl itself: colours and styles (SGR), nothing else.
SGR = re.compile(r"\x1b\[[0-9;]*m")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class Terminal(io.StringIO):
    """A stream that says it is a terminal, so gpuctl prints to it as to a person's."""

    def isatty(self) -> bool:
        return True


def colour_terminal(monkeypatch: pytest.MonkeyPatch, columns: int = 400) -> None:
    """The environment of a 256-colour terminal `columns` wide, whatever the test runs under."""
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLORTERM", "truecolor")
    monkeypatch.setenv("COLUMNS", str(columns))


@contextlib.contextmanager
def printing_to(stdout: io.StringIO, stderr: io.StringIO | None = None) -> Iterator[None]:
    """sys.stdout (and sys.stderr) redirected in the test's own frame: pytest puts its capture
    back on them between a fixture's setup and the test."""
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr or stdout):
        yield


def shown_as_text(output: str) -> str:
    """`output` without gpuctl's own colours; fails if anything else would drive the terminal."""
    plain = SGR.sub("", output)
    leftover = _CONTROL.findall(plain)
    assert not leftover, f"control characters reached the terminal: {leftover!r} in {output!r}"
    return plain
