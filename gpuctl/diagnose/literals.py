"""A cheap screen before the signature regexes: the literal text each one needs.

A signature's pattern can only match a text that contains, case-insensitively, the leading
literal of one of its top-level branches ("could not load NVML library|ERROR_LIBRARY_NOT_FOUND"
needs "could not load nvml library" or "error_library_not_found"). A few dozen `in` tests on the
lowercased text cost microseconds; one alternation of every pattern costs about a millisecond on
a 200-line device plugin log (the regex engine cannot scan for a literal through an alternation
of case-insensitive branches), once per GPU node. Only for ASCII text: there, IGNORECASE
equality is str.lower() equality.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_META = frozenset("\\()[].*+?{}|^$")
_OPTIONAL = frozenset("*?{")  # the character before these may be absent


def _depths(pattern: str) -> Iterator[tuple[int, str, int]]:
    """Each character of `pattern` with its group depth after it; -1 for one that is escaped or
    in a character class (it opens, closes or separates nothing)."""
    depth, in_class, escaped = 0, False, False
    for index, char in enumerate(pattern):
        literal = escaped or in_class or char == "\\"
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        yield index, char, -1 if literal else depth


def _top_level_branches(pattern: str) -> list[str]:
    branches: list[str] = []
    start = 0
    for index, char, depth in _depths(pattern):
        if char == "|" and depth == 0:
            branches.append(pattern[start:index])
            start = index + 1
    branches.append(pattern[start:])
    return branches


def _leading_literal(branch: str) -> str:
    literal: list[str] = []
    for char in branch:
        if char in _META:
            if char in _OPTIONAL and literal:
                literal.pop()
            break
        literal.append(char)
    return "".join(literal)


def _group_end(pattern: str) -> int:
    """Where the group that `pattern` starts with ends (the index after its `)`); -1: unbalanced."""
    return next((index + 1 for index, char, depth in _depths(pattern) if char == ")" and depth == 0), -1)


# What a group may open with for its content to be matched as written: capturing, named,
# non-capturing, or with case folding switched; a lookaround before a branch matches nothing.
_GROUP_OPENING = re.compile(r"\((?:\?P<\w+>|\?:|\?-?i:)?")
_LOOKAROUND = re.compile(r"\(\?<?[=!]")


def _branch_literals(branch: str) -> tuple[str, ...] | None:
    """Literals one of which a match of `branch` starts with, looking into a group it starts
    with; None where it has none. A word boundary or lookaround before it matches nothing, and is
    passed over."""
    while branch.startswith("\\b") or _LOOKAROUND.match(branch):
        end = 2 if branch.startswith("\\b") else _group_end(branch)
        if end < 0:
            return None
        branch = branch[end:]
    literal = _leading_literal(branch)
    if literal:
        return (literal,)
    opening = _GROUP_OPENING.match(branch)
    end = _group_end(branch) if opening else -1
    if opening is None or end < 0 or branch[end : end + 1] in ("?", "*", "{"):
        return None
    found: list[str] = []
    for inner in _top_level_branches(branch[opening.end() : end - 1]):
        literals = _branch_literals(inner)
        if literals is None:
            return None
        found += literals
    return tuple(found)


def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Lowercased literals one of which any match contains; None: no such screen for it."""
    if pattern.flags & re.VERBOSE:
        return None  # whitespace in the pattern is not literal there
    found: list[str] = []
    for branch in _top_level_branches(pattern.pattern):
        literals = _branch_literals(branch)
        if literals is None:
            return None
        found += (literal.lower() for literal in literals)
    if not all(literal.isascii() for literal in found):
        return None
    return tuple(found)


def may_match(literals: tuple[str, ...] | None, lowered: str) -> bool:
    return literals is None or any(literal in lowered for literal in literals)
