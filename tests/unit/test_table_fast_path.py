"""Plain tables printed off a terminal without rich's layout come out byte for byte as rich prints
them; tables it cannot print that way go to rich."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from rich.table import Table
from rich.text import Text

from gpuctl.report.console import make_console
from gpuctl.report.tables import _plain_lines, emit_table, keep_words_whole


def _nodes(rows: int, *, title: str | None = "GPU nodes", product: str = "NVIDIA H100 80GB HBM3") -> Table:
    table = Table(title=title, title_justify="left", box=None, pad_edge=False)
    for column in ("NODE", "GPUS exp/cap/alloc/seen", "PRODUCT"):
        table.add_column(column, overflow="fold")
    for column in ("DRIVER", "STATUS"):
        table.add_column(column, no_wrap=True)
    table.add_column("PROBLEM", overflow="fold")
    for index in range(rows):
        problem = "plugin.nvml-library-missing" if index % 7 == 3 else "-"
        status = Text("FAIL" if index % 7 == 3 else "PASS", style="red" if index % 7 == 3 else "green")
        table.add_row(f"gpu-{index}", "8/8/8/-", product, "550.90.07", status, Text(problem), style="yellow")
    return table


def _both(build: Callable[[], Table], width: int | None = None) -> tuple[str, str]:
    outputs = []
    for printer in ("rich", "fast"):
        stream = io.StringIO()
        console = make_console(stream)
        if width is not None:
            console.width = width
        table = keep_words_whole(build(), console.width)
        if printer == "rich":
            console.print(table)
        else:
            emit_table(console, table)
        outputs.append(stream.getvalue())
    return outputs[0], outputs[1]


@pytest.mark.parametrize(
    "build",
    [lambda: _nodes(600), lambda: _nodes(1), lambda: _nodes(0), lambda: _nodes(5, title=None)],
    ids=["600 rows", "one row", "no rows", "no title"],
)
def test_a_plain_table_is_printed_as_rich_prints_it(build: Callable[[], Table]) -> None:
    rich_output, fast_output = _both(build)
    assert fast_output == rich_output
    console = make_console(io.StringIO())
    assert _plain_lines(build(), console) is not None  # the fast path ran


def test_tables_it_cannot_lay_out_go_to_rich() -> None:
    narrow = lambda: _nodes(3, product="NVIDIA H100 80GB HBM3 with a very long product name")  # noqa: E731
    rich_output, fast_output = _both(narrow, width=60)
    assert fast_output == rich_output  # wrapped by rich, between words
    assert "with a" in rich_output
    assert len(max(rich_output.splitlines(), key=len)) <= 60
    console = make_console(io.StringIO())
    console.width = 60
    assert _plain_lines(keep_words_whole(narrow(), 60), console) is None
    unicode_cells = _nodes(2, product="NVIDIA H100 — 80 GB")
    assert _plain_lines(unicode_cells, make_console(io.StringIO())) is None


def test_markup_a_centred_title_and_sections_go_to_rich() -> None:
    console = make_console(io.StringIO())
    markup = _nodes(2)
    markup.add_row("[bold]gpu-9[/bold]", "8/8/8/8", "x", "y", "PASS", "-")
    centred = _nodes(2)
    centred.title_justify = "center"
    sectioned = _nodes(2)
    sectioned.rows[0].end_section = True
    for table in (markup, centred, sectioned):
        assert _plain_lines(table, console) is None
    rich_output, fast_output = _both(lambda: markup)
    assert fast_output == rich_output
    assert "[bold]gpu-9[/bold]" in fast_output  # gpuctl's console shows markup as written


def test_a_recording_console_records_the_table() -> None:
    from rich.console import Console

    console = Console(width=120, record=True, force_terminal=False, file=io.StringIO())
    table = keep_words_whole(_nodes(3), console.width)
    assert _plain_lines(table, console) is not None
    emit_table(console, table)
    recorded = console.export_text()
    assert recorded.splitlines()[2].split() == [
        "gpu-0",
        "8/8/8/-",
        "NVIDIA",
        "H100",
        "80GB",
        "HBM3",
        "550.90.07",
        "PASS",
        "-",
    ]
