"""What every table of gpuctl shares: words are never split across lines (a column is at least as
wide as its longest word, so rich wraps cells at spaces only), one spelling of GPU product names,
and node lists folded into ranges (gpu-[0-49]) where many nodes share one line."""

from __future__ import annotations

import re
from itertools import groupby
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.console import Console
    from rich.table import Column, Table

_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_FOLD_MIN = 8  # a column folded as a last resort keeps this many characters a line


def keep_words_whole(table: Table, width: int) -> Table:
    """Fit `table` into `width` columns by narrowing its wrapping columns, widest first, but never
    below their longest word, so rich breaks cells between words ("NVIDIA H100" / "80GB HBM3"),
    not inside one ("NVIDIA H1" / "00 80GB"). Only when the longest words alone do not fit is the
    foldable column (overflow="fold": free text such as taints or messages) with the longest word
    folded. Columns that are not foldable (node names, versions) are never cut inside a word: when
    they alone do not fit, the table is as wide as they need (printed wider than `width`, as
    `kubectl get -o wide` is; emit_table does not crop it). (Rich's own shrinking ignores words
    and crops columns.)"""
    columns = table.columns
    natural = [_longest(column, str.splitlines) for column in columns]
    floor = [
        natural[i] if column.no_wrap else _longest(column, str.split) for i, column in enumerate(columns)
    ]
    boxed = table.box is not None
    overhead = 3 * len(columns) + 1 if boxed else 2 * (len(columns) - 1) + 2 * table.pad_edge
    folded = [min(floor[i], _FOLD_MIN) if _foldable(column) else floor[i] for i, column in enumerate(columns)]
    if sum(folded) + overhead > width:
        # Even folded, the words that may not be cut do not fit: every word whole, and the table
        # as narrow as that allows but wider than `width` (emit_table does not crop it).
        for column, wanted, full in zip(columns, floor, natural, strict=True):
            if wanted < full:
                column.width = wanted
        table.width = sum(floor) + overhead
        return table
    widths = list(natural)
    excess = sum(widths) + overhead - width
    while excess > 0:
        wrapping = [i for i, column in enumerate(columns) if not column.no_wrap and widths[i] > floor[i]]
        if not wrapping:  # the words alone are too wide: fold the column with the longest one
            foldable = [i for i, column in enumerate(columns) if _foldable(column) and widths[i] > _FOLD_MIN]
            longest = max(foldable, key=lambda i: floor[i])  # there is one: folded, the table fits
            floor[longest] = max(_FOLD_MIN, widths[longest] - excess)
            continue
        widest = max(wrapping, key=lambda i: widths[i])  # one character at a time: widths stay even
        widths[widest] -= 1
        excess -= 1
    for column, wanted, full in zip(columns, widths, natural, strict=True):
        if wanted < full:
            column.width = wanted
    return table


def _foldable(column: Column) -> bool:
    return column.overflow == "fold" and not column.no_wrap


def emit_table(console: Console, table: Table) -> None:
    """Print `table`, a plain one (no box, one line per row, as the node tables are) off a terminal
    without rich's layout engine: the same lines, without its cost of a third of a millisecond per
    row (1.6 s for 5,000 nodes). Anything else, colour or a cell that would wrap, goes to rich."""
    lines = _plain_lines(table, console)
    if lines is None:
        console.print(table, crop=False)  # a table wider than the console (keep_words_whole) stays whole
        return
    # console.out: no markup, no wrapping, through the console (recording, capture, broken pipes)
    console.out("\n".join(line.rstrip() for line in lines), highlight=False)


def _plain_lines(table: Table, console: Console) -> list[str] | None:
    """The lines rich would print for `table` on `console`, or None where that is not simple."""
    if not _plain_layout(table, console):
        return None
    cells = [[column.header, *column.cells] for column in table.columns]
    title = table.title or ""
    strings = [cell for column in cells for cell in column if isinstance(cell, str)]
    if not isinstance(title, str) or any("[" in text for text in (title, *strings)):
        return None  # rich would read markup in a string
    columns = [[str(cell) for cell in column] for column in cells]
    widths = [max(map(len, texts)) for texts in columns]
    fits = sum(widths) + 2 * (len(widths) - 1) <= console.width  # else rich wraps
    if not fits or not all(text.isascii() and text.isprintable() for texts in columns for text in texts):
        return None  # wrapping, wide characters, line breaks: rich measures them
    rows = [
        "  ".join(texts[i].ljust(width) for texts, width in zip(columns, widths, strict=True))
        for i in range(len(columns[0]))
    ]
    return [title, *rows] if title else rows


def _plain_layout(table: Table, console: Console) -> bool:
    """No colour, no box or lines or edge padding, left-justified columns of natural width."""
    plain_table = table.box is None and not table.show_lines and not table.pad_edge and table.show_header
    extras = (
        table.caption or table.show_footer or table.expand or table.width or table.min_width or table.leading
    )
    plain_columns = all(
        column.justify == "left"
        and column.width is None
        and column.min_width is None
        and column.max_width is None
        for column in table.columns
    )
    return bool(
        not console.is_terminal
        and not console.color_system
        and plain_table
        and plain_columns
        and not extras
        and table.padding == (0, 1, 0, 1)
        and (not table.title or table.title_justify == "left")
        and not any(row.end_section for row in table.rows)
    )


def _longest(column: Column, split: Callable[[str], list[str]]) -> int:
    texts = [str(column.header), *(str(cell) for cell in column.cells)]
    return max((len(part) for text in texts for part in split(text)), default=1)


def product_name(name: str) -> str:
    """One spelling for a GPU product, whether it comes from nvidia-smi ("NVIDIA A100-SXM4-40GB") or
    from the node label GFD derived from it ("NVIDIA-A100-SXM4-40GB"): words separated by spaces."""
    return " ".join(name.replace("-", " ").split()) if name and name != "-" else name


def node_ranges(names: list[str]) -> str:
    """`gpu-0, gpu-1, gpu-2, gpu-7, cpu-a` → `cpu-a, gpu-[0-2,7]`: nodes numbered alike, folded."""
    numbered: dict[str, list[int]] = {}
    plain: list[str] = []
    for name in names:
        found = _NUMBERED.match(name)
        if found and not (len(found.group(2)) > 1 and found.group(2).startswith("0")):
            numbered.setdefault(found.group(1), []).append(int(found.group(2)))
        else:
            plain.append(name)
    parts = list(plain)
    for prefix, numbers in numbered.items():
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]}")
            continue
        spans = []
        ordered = sorted(set(numbers))
        for _, run in groupby(enumerate(ordered), key=lambda pair: pair[1] - pair[0]):
            values = [value for _, value in run]
            spans.append(str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}")
        parts.append(f"{prefix}[{','.join(spans)}]")
    return ", ".join(sorted(parts))
