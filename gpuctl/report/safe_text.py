"""Text from nodes, pods, logs, hosts and files, made safe to show: what it says is printed, never
what it would do to a terminal.

A node's nvidia-smi, a pod's log, an Ansible task's output or a label can hold terminal escapes
(clear the screen, rewrite a line with a carriage return, an OSC 8 link, an OSC 52 clipboard write)
and rich markup (`[green]PASS[/]`). gpuctl's consoles never read markup (report/console.py), and
every control character is shown as Python writes it in a string literal: ESC as the four
characters `\\x1b`, a carriage return as `\\r`, the C1 CSI as `\\x9b`. That notation rather than
Unicode's control pictures (␛): it is ASCII, so it survives any locale, CI log and XML file; it
covers every code point (control pictures exist for C0 and DEL only, not for C1 or the bidi
controls); and it is the notation of Python's repr() and of C strings, which programmers read
and can search for. Newlines and tabs stay: they move the cursor only as text does.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.style import StyleType
    from rich.text import Text

# C0 but tab and newline; DEL; C1 (0x9b is CSI, 0x9d OSC on terminals that read 8-bit controls);
# the bidirectional controls that reorder what is shown ("Trojan Source"), and the Unicode line
# and paragraph separators that splitlines() and some terminals take for line breaks.
_CONTROL_CODES = (
    [code for code in range(0x20) if chr(code) not in "\t\n"]
    + list(range(0x7F, 0xA0))
    + [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029]
)
_CONTROL = re.compile("[" + "".join(re.escape(chr(code)) for code in _CONTROL_CODES) + "]+")
# ascii() of one character: '\x1b' → \x1b, '\r' → \r, '\u202e' → \u202e
_PLACEHOLDERS = {code: ascii(chr(code))[1:-1] for code in _CONTROL_CODES}


def has_controls(text: str) -> bool:
    """Whether `text` holds a character that `visible` replaces."""
    return _CONTROL.search(text) is not None


def visible(text: str) -> str:
    """`text` with every control character replaced by its escape (`\\x1b`, `\\r`, `\\x9b`);
    Windows line endings (CRLF) become plain newlines, as a terminal would show them."""
    if not has_controls(text):
        return text
    return text.replace("\r\n", "\n").translate(_PLACEHOLDERS)


def literal(text: str, style: StyleType = "") -> Text:
    """`text` as a rich Text: its markup shown as written, its control characters visible."""
    from rich.text import Text

    return Text(visible(text), style=style)


def visible_text(text: Text) -> Text:
    """A rich Text with the control characters left in it made visible, its styles kept. (Text
    drops BEL, backspace, CR, VT and FF when it is made, but keeps ESC and the rest.)"""
    plain = text.plain
    if not has_controls(plain):
        return text
    from rich.text import Span, Text

    cuts = [offset for found in _CONTROL.finditer(plain) for offset in found.span()]
    shown = text.blank_copy()
    for piece in text.divide(cuts):
        piece.style = ""  # the whole text's style is the copy's already
        if _CONTROL.fullmatch(piece.plain):
            placeholder = visible(piece.plain)
            spans = [Span(0, len(placeholder), span.style) for span in piece.spans]
            shown.append_text(Text(placeholder, spans=spans))
        else:
            shown.append_text(piece)
    return shown


def visible_line(text: str, limit: int) -> str:
    """`text` made visible and folded onto one line (a message quotes it: a server's answer, a
    reason phrase), at most `limit` characters of it, then `...`."""
    line = " ".join(visible(text).split())
    return line if len(line) <= limit else line[:limit] + "..."
