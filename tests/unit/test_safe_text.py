"""Text from nodes, logs, hosts and files prints as text: markup shown as written, control
characters as visible escapes, on gpuctl's console whichever way a renderer builds its lines."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from rich.console import RenderableType
from rich.table import Table
from rich.text import Text

from gpuctl.core.bootstrap import BootstrapResult, host_outcomes
from gpuctl.core.explain import explain as explain_text
from gpuctl.core.preflight import HostReport, PreflightResult
from gpuctl.hosts.events import FailedTask, ProgressState
from gpuctl.hosts.findings import Finding
from gpuctl.report import bootstrap, explain, preflight
from gpuctl.report.bootstrap_progress import progress_renderable
from gpuctl.report.console import make_console
from gpuctl.report.safe_text import literal, visible, visible_text
from tests.untrusted import (
    CLEAR,
    CLIPBOARD,
    HOSTILE,
    LINK,
    MARKUP,
    SGR,
    SHOWN,
    Terminal,
    colour_terminal,
    printing_to,
    shown_as_text,
)


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """A colour terminal 400 columns wide; what it received."""
    colour_terminal(monkeypatch)
    return Terminal()


def test_visible_escapes_every_control_character_and_keeps_lines() -> None:
    assert visible(HOSTILE) == SHOWN
    assert visible("line 1\r\nline 2\n\tindented") == "line 1\nline 2\n\tindented"
    assert visible("a\x00b\x08c\x7fd\x85e\u202ef\u2028") == r"a\x00b\x08c\x7fd\x85e\u202ef\u2028"
    assert visible(SHOWN) == SHOWN  # the escapes are printable ASCII: showing twice changes nothing
    plain = "NVIDIA H100 80GB HBM3 — 8 GPUs, ≥ 550"
    assert visible(plain) is plain


def test_literal_and_visible_text_keep_markup_as_written_and_styles() -> None:
    assert literal(HOSTILE, style="red").plain == SHOWN
    styled = Text.assemble(("ok ", "green"), (f"{CLEAR}x", "bold red"))
    expected = Text.assemble(("ok ", "green"), (r"\x1b[2Jx", "bold red"))
    assert _styled(visible_text(styled)) == _styled(expected)


def _styled(text: Text) -> list[tuple[str, str]]:
    """Each character with the style it is shown in."""
    from rich.console import Console

    console = Console(file=io.StringIO(), force_terminal=True)
    return [(char, str(segment.style)) for segment in text.render(console) for char in segment.text]


def _table_with(cell: str | Text) -> Table:
    table = Table(box=None)
    table.add_column("NODE")
    table.add_column("PROBLEM")
    table.add_row("gpu-0", cell)
    return table


@pytest.mark.parametrize(
    "printed",
    [
        lambda: HOSTILE,
        lambda: Text(HOSTILE, style="yellow"),  # rich drops CR and BEL here, but keeps ESC
        lambda: _table_with(HOSTILE),
        lambda: _table_with(Text(HOSTILE)),
        lambda: _table_with(literal(HOSTILE)),
    ],
    ids=["string", "Text", "table string cell", "table Text cell", "table literal cell"],
)
def test_the_console_never_reads_markup_nor_passes_escapes(
    terminal: Terminal, printed: Callable[[], RenderableType]
) -> None:
    with printing_to(terminal):
        console = make_console()
        console.print(printed())
    assert console.is_terminal
    assert console.color_system == "truecolor"
    text = shown_as_text(terminal.getvalue())
    assert MARKUP in text
    assert r"\x1b]52;c;aGVsbG8=" in text
    assert r"\x1b]8;;http://evil" in text


def test_explain_listing(terminal: Terminal) -> None:
    pasted = f"{MARKUP} {LINK} nvml error: driver/library version mismatch{CLIPBOARD}\n"
    with printing_to(terminal):
        explain.print_table(explain_text(text=pasted), make_console())
    assert SGR.search(terminal.getvalue())  # a colour terminal: the match's title is bold
    text = shown_as_text(terminal.getvalue())
    assert f"line:  {MARKUP} " + r"\x1b]8;;http://evil" in text


def test_preflight_table(terminal: Terminal) -> None:
    finding = Finding(id="driver.loaded", status="fail", message=HOSTILE, hint=f"see {MARKUP}")
    host = HostReport(name="gpu-0", address=f"gpu-0{CLEAR}", reachable=True, findings=(finding,))
    result = PreflightResult(inventory="hosts.yml", hosts=(host,), warnings=(f"inventory says {LINK}",))
    with printing_to(terminal):
        preflight.print_wide(result, make_console())
    assert SGR.search(terminal.getvalue())
    text = shown_as_text(terminal.getvalue())
    assert SHOWN in text
    assert f"hint: see {MARKUP}" in text
    assert r"gpu-0\x1b[2J" in text


def test_bootstrap_host_table_and_progress(terminal: Terminal) -> None:
    state = ProgressState()
    state.add_host("gpu-0")
    state.apply({"event": "playbook_on_play_start", "event_data": {"play": f"{MARKUP}{CLEAR}"}})
    state.apply({"event": "runner_on_start", "event_data": {"host": "gpu-0", "task": f"{MARKUP} {LINK}"}})
    with printing_to(terminal):
        make_console().print(progress_renderable(state, width=400))
    failed = FailedTask(host="gpu-0", task=f"Driver | {MARKUP}", message=HOSTILE)
    result = BootstrapResult(
        phase="host",
        check=False,
        inventory="hosts.yml",
        playbook="site.yml",
        status="failed",
        hosts=host_outcomes(state, {"gpu-0"}),
        failed_tasks=(failed,),
        duration_s=1.0,
        error=f"ansible said {CLIPBOARD}",
        warnings=(f"group_vars says {LINK}",),
    )
    with printing_to(terminal):
        bootstrap.print_host_table(result, make_console())
    assert SGR.search(terminal.getvalue())
    text = shown_as_text(terminal.getvalue())
    assert f"{MARKUP} " + r"\x1b]8;;" in text  # the running task, cut to the TASK column
    assert SHOWN in text  # the failed task's message
    assert r"error: ansible said \x1b]52;c;aGVsbG8=\x07" in text
