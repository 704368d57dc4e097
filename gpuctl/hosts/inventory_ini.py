"""Where an INI inventory that Ansible refused goes wrong: the line number and its text.

Ansible's ini plugin knows the line it stopped at but drops it from the error it raises (its message
is then as bare as "not enough values to unpack"), so a refused file is read once more by the same
plugin, which records the line it failed on.
"""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Python's own errors from inside the plugin say nothing about inventories.
_PYTHON_ERROR = re.compile(r"(not enough|too many) values to unpack|invalid literal|index out of range")

INI_SHAPES = (
    "an INI line is a section `[group]`, `[group:vars]` or `[group:children]`, a host "
    "`name key=value ...`, or `key=value` under :vars"
)


@dataclass(frozen=True)
class IniFailure:
    line: int  # 1-based
    text: str  # the line as written, stripped
    reason: str  # ansible's message, or "malformed line" for a Python error from inside it


def ini_failure(path: Path) -> IniFailure | None:
    """The line of `path` that ansible's ini plugin refuses, or None when it reads the file."""
    from ansible.inventory.data import InventoryData
    from ansible.parsing.dataloader import DataLoader
    from ansible.plugins.inventory.ini import InventoryModule

    class LineTracking(InventoryModule):  # type: ignore[misc]
        failed_line = 0
        reason = ""

        def _parse(self, lines: Any) -> None:
            try:
                super()._parse(lines)
            except Exception as error:
                origin = getattr(self, "_origin", None)
                self.failed_line = int(getattr(origin, "line_num", 0) or getattr(self, "lineno", 0) or 0)
                self.reason = str(error)
                raise

    plugin = LineTracking()
    # Any failure is reported through the line the plugin stopped at.
    quiet = io.StringIO()
    with contextlib.redirect_stderr(quiet), contextlib.redirect_stdout(quiet), contextlib.suppress(Exception):
        plugin.parse(InventoryData(), DataLoader(), str(path.resolve()))
    if not plugin.failed_line:
        return None
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    text = lines[plugin.failed_line - 1].strip() if plugin.failed_line <= len(lines) else ""
    reason = "malformed line" if _PYTHON_ERROR.search(plugin.reason) else plugin.reason.strip()
    if text.startswith("[") and not text.endswith("]"):
        reason = "a section header without its closing ']'"
    return IniFailure(line=plugin.failed_line, text=text, reason=reason)
