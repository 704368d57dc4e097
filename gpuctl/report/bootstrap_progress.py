"""Live progress of a bootstrap run: per host, the current task and its ok/changed/failed counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.hosts.events import HostProgress, ProgressState

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live

COLUMNS = ("HOST", "TASK", "OK", "CHANGED", "FAILED", "UNREACHABLE", "SKIPPED")


def _style(host: HostProgress) -> str | None:
    if host.failed or host.unreachable:
        return "red"
    return "green" if host.done else None


def progress_renderable(state: ProgressState) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    play, hosts = state.snapshot()
    table = Table(
        box=None, pad_edge=False, title=Text(play or "starting ansible-playbook …"), title_justify="left"
    )
    for column in COLUMNS:
        table.add_column(
            column, overflow="ellipsis", no_wrap=True, max_width=60 if column == "TASK" else None
        )
    for host in hosts:
        task = "done" if host.done else host.current_task or "waiting"
        counts = (host.ok, host.changed, host.failed, host.unreachable, host.skipped)
        table.add_row(Text(host.name), Text(task), *(str(count) for count in counts), style=_style(host))
    return table


class LiveProgress:
    """A rich Live display refreshed from the runner's thread (rich's Live is thread-safe)."""

    def __init__(self, console: Console) -> None:
        from rich.live import Live

        self._live: Live = Live(console=console, refresh_per_second=8, transient=True)

    def __enter__(self) -> LiveProgress:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def update(self, state: ProgressState) -> None:
        self._live.update(progress_renderable(state))
