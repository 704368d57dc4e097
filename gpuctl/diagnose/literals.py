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

_META = frozenset("\\()[].*+?{}|^$")
_OPTIONAL = frozenset("*?{")  # the character before these may be absent


def _top_level_branches(pattern: str) -> list[str]:
    branches: list[str] = []
    current: list[str] = []
    depth, in_class, escaped = 0, False, False
    for char in pattern:
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
        elif char == "|" and depth == 0:
            branches.append("".join(current))
            current = []
            continue
        current.append(char)
    branches.append("".join(current))
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


def required_literals(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Lowercased literals one of which any match contains; None: no such screen for it."""
    if pattern.flags & re.VERBOSE:
        return None  # whitespace in the pattern is not literal there
    literals = tuple(_leading_literal(branch).lower() for branch in _top_level_branches(pattern.pattern))
    if not all(literals) or not all(literal.isascii() for literal in literals):
        return None
    return literals


def may_match(literals: tuple[str, ...] | None, lowered: str) -> bool:
    return literals is None or any(literal in lowered for literal in literals)
