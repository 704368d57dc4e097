"""Progress of a bootstrap run: on a terminal a live table (per host, the current task and its
ok/changed/failed counts; per GPU node, its device plugin and GPUs); elsewhere (a pipe, a CI log)
plain lines on stderr while the cluster phase waits for the GPUs."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from gpuctl.core.bootstrap import NodeReadiness
from gpuctl.core.upgrade import StepResult
from gpuctl.report.bootstrap_upgrade import step_line
from gpuctl.report.safe_text import literal

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.live import Live


class HostProgress(Protocol):
    """What the table shows of one host: the runner's per-host counts (the report reads, never
    imports, the host layer)."""

    @property
    def name(self) -> str: ...
    @property
    def current_task(self) -> str: ...
    @property
    def ok(self) -> int: ...
    @property
    def changed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def unreachable(self) -> int: ...
    @property
    def skipped(self) -> int: ...
    @property
    def done(self) -> bool: ...


class ProgressState(Protocol):
    """A running playbook: its current play and its hosts, read in one consistent snapshot."""

    def snapshot(self) -> tuple[str, Sequence[HostProgress]]: ...


COLUMNS = ("HOST", "TASK", "OK", "CHANGED", "FAILED", "UNREACHABLE", "SKIPPED")


def _style(host: HostProgress) -> str | None:
    if host.failed or host.unreachable:
        return "red"
    return "green" if host.done else None


def progress_renderable(state: ProgressState, width: int | None = None) -> RenderableType:
    """The progress table; on a terminal `width` columns wide only the task name is shortened."""
    from rich.table import Table

    play, hosts = state.snapshot()
    table = Table(
        box=None, pad_edge=False, title=literal(play or "starting ansible-playbook …"), title_justify="left"
    )
    widths = _fixed_widths(hosts)
    task_width = TASK_MAX_WIDTH if width is None else width - sum(widths.values()) - 2 * (len(COLUMNS) - 1)
    for column in COLUMNS:
        if column == "TASK":
            table.add_column(
                column,
                overflow="ellipsis",
                no_wrap=True,
                max_width=max(TASK_MIN_WIDTH, min(task_width, TASK_MAX_WIDTH)),
            )
        else:
            table.add_column(column, no_wrap=True, min_width=widths[column])
    for host in hosts:
        task = "done" if host.done else host.current_task or "waiting"
        counts = (host.ok, host.changed, host.failed, host.unreachable, host.skipped)
        table.add_row(
            literal(host.name), literal(task), *(str(count) for count in counts), style=_style(host)
        )
    return table


TASK_MAX_WIDTH = 60
TASK_MIN_WIDTH = 8


def _fixed_widths(hosts: Sequence[HostProgress]) -> dict[str, int]:
    """Widths of the columns that are never cut: the host names and the counts."""
    widths = {column: len(column) for column in COLUMNS if column != "TASK"}
    widths["HOST"] = max([widths["HOST"], *(len(host.name) for host in hosts)])
    counts = [(host.ok, host.changed, host.failed, host.unreachable, host.skipped) for host in hosts]
    for index, column in enumerate(COLUMNS[2:]):
        widths[column] = max([widths[column], *(len(str(row[index])) for row in counts)])
    return widths


class LiveProgress:
    """A rich Live display refreshed from the runner's thread (rich's Live is thread-safe)."""

    def __init__(self, console: Console) -> None:
        from rich.live import Live

        self._console = console
        self._live: Live = Live(console=console, refresh_per_second=8, transient=True)

    def __enter__(self) -> LiveProgress:
        self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.__exit__(None, None, None)

    def update(self, state: ProgressState) -> None:
        self._live.update(progress_renderable(state, width=self._console.width))

    def update_nodes(self, states: list[NodeReadiness]) -> None:
        """The cluster phase's wait: nodes ready / expected, and each node's GPUs advertised."""
        self._live.update(nodes_renderable(states))

    def step(self, node: str, step: str, result: StepResult | None) -> None:
        """A node-by-node upgrade step: the one in flight live, each finished one printed above."""
        from rich.text import Text

        if result is None:
            self._live.update(Text(step_line(node, step, None)))
            return
        style = "green" if result.status == "ok" else "red"
        self._live.console.print(literal(step_line(node, step, result), style=style), soft_wrap=True)


def nodes_renderable(states: list[NodeReadiness]) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    ready = sum(state.ready for state in states)
    validated = any(state.validator is not None for state in states)  # a stack with its own validator
    table = Table(box=None, pad_edge=False)
    for column in (
        "NODE",
        *(("OPERATOR VALIDATOR",) if validated else ()),
        "DEVICE PLUGIN",
        "GPUS ADVERTISED",
    ):
        table.add_column(column)
    for state in states:
        wanted = "≥1" if state.expected is None else str(state.expected)
        plugin = "ready" if state.plugin_ready else "waiting"
        style = "green" if state.ready else "red" if state.terminal else None
        validator = (literal(state.validator or "-"),) if validated else ()
        table.add_row(literal(state.node), *validator, plugin, f"{state.allocatable}/{wanted}", style=style)
    return Group(Text(f"waiting for the GPUs: {ready}/{len(states)} node(s) ready"), table)


# Plain progress lines: one when what the wait is for changes (at most every PLAIN_MIN_S), and
# one every PLAIN_EVERY_S while nothing changes, so a log shows the run is alive and on what.
PLAIN_MIN_S = 2.0
PLAIN_EVERY_S = 10.0
NODES_NAMED = 5  # a line names the first nodes still waiting, then counts the rest


class PlainProgress:
    """The cluster phase's wait as plain lines on `console` (stderr), for a pipe or a CI log."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._last_line = ""
        self._last_time = 0.0

    def update_nodes(self, states: list[NodeReadiness]) -> None:
        line = waiting_line(states)
        now = time.monotonic()
        changed = line != self._last_line and now - self._last_time >= PLAIN_MIN_S
        if changed or now - self._last_time >= PLAIN_EVERY_S:
            self._console.print(literal(line), soft_wrap=True)
            self._last_line, self._last_time = line, now

    def step(self, node: str, step: str, result: StepResult | None) -> None:
        """A node-by-node upgrade step, one line as it ends (a log shows every step and its time)."""
        if result is not None:
            self._console.print(literal(step_line(node, step, result)), soft_wrap=True)


def waiting_line(states: list[NodeReadiness]) -> str:
    """`waiting for 2 of 4 GPU node(s): gpu-2 device plugin not running; gpu-3 0/8 GPUs ...`."""
    waiting = [state for state in states if not state.ready and not state.terminal]
    stuck = [state for state in states if state.terminal]
    ready = len(states) - len(waiting) - len(stuck)
    if not waiting:
        text = f"{ready} of {len(states)} GPU node(s) ready"
    else:
        named = "; ".join(_node_state(state) for state in waiting[:NODES_NAMED])
        more = f"; {len(waiting) - NODES_NAMED} more" if len(waiting) > NODES_NAMED else ""
        text = f"waiting for {len(waiting)} of {len(states)} GPU node(s): {named}{more}"
    if stuck:
        names = ", ".join(state.node for state in stuck[:NODES_NAMED])
        more = f" and {len(stuck) - NODES_NAMED} more" if len(stuck) > NODES_NAMED else ""
        text += f"; not waiting for {names}{more} (cannot get their GPUs, see the report)"
    return text


def _node_state(state: NodeReadiness) -> str:
    wanted = "≥1" if state.expected is None else str(state.expected)
    if state.validator not in (None, "ready"):
        return f"{state.node} Operator validator {state.validator or 'not running'}"
    if not state.plugin_ready:
        return f"{state.node} device plugin not running"
    return f"{state.node} {state.allocatable}/{wanted} GPUs advertised"
