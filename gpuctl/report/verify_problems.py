"""verify's table: each distinct problem once, with the nodes that have it, under the node table
(50 nodes with one driver fault give one paragraph, not 50 copies of the same hint)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuctl.core.verify.model import Check, CheckStatus, NodeResult
from gpuctl.report.safe_text import literal
from gpuctl.report.tables import node_ranges

if TYPE_CHECKING:
    from rich.console import Console

NODE_PLACEHOLDER = "NODE"


@dataclass
class SharedProblem:
    """One check failing (or warning) the same way on `nodes`."""

    check_id: str
    status: CheckStatus
    message: str  # the node's own name replaced by NODE where several nodes share it
    hint: str
    nodes: list[str] = field(default_factory=list)


def _generic(text: str, node: str) -> str:
    return re.sub(rf"(?<![\w.-]){re.escape(node)}(?![\w-])", NODE_PLACEHOLDER, text) if node else text


def shared_problems(nodes: tuple[NodeResult, ...]) -> list[SharedProblem]:
    """Each node's first problem, grouped by check, message and hint (failures first)."""
    return group_problems((node.name, node.first_problem) for node in nodes)


def group_problems(first_problems: Iterable[tuple[str, Check | None]]) -> list[SharedProblem]:
    """(node name, its first problem or None) pairs grouped by check, message and hint."""
    groups: dict[tuple[str, str, str], SharedProblem] = {}
    originals: dict[tuple[str, str, str], Check] = {}
    for name, check in first_problems:
        if check is None:
            continue
        key = (check.id, _generic(check.message, name), _generic(check.hint, name))
        if key not in groups:
            groups[key] = SharedProblem(check.id, check.status, *key[1:])
            originals[key] = check
        groups[key].nodes.append(name)
    for key, problem in groups.items():
        if len(problem.nodes) == 1:  # one node: its own words, no placeholder
            problem.message, problem.hint = originals[key].message, originals[key].hint
    return sorted(
        groups.values(), key=lambda p: (p.status is not CheckStatus.FAIL, -len(p.nodes), p.check_id)
    )


def print_shared_problems(nodes: tuple[NodeResult, ...], console: Console) -> None:
    """The problems paragraph; words wrap at the terminal's width, never inside a word."""
    from rich.padding import Padding
    from rich.text import Text

    problems = shared_problems(nodes)
    if not problems:
        return
    console.print(Text("Problems", style="bold"))
    for problem in problems:
        count = len(problem.nodes)
        style = "bold red" if problem.status is CheckStatus.FAIL else "yellow"
        where = f"{count} node{'s' if count > 1 else ''}: {node_ranges(problem.nodes)}"
        console.print(literal(f"{problem.check_id} {problem.status.value.upper()} on {where}", style=style))
        console.print(Padding(literal(problem.message), (0, 0, 0, 2)))
        if problem.hint:
            console.print(Padding(literal(f"hint: {problem.hint}"), (0, 0, 0, 2)))
