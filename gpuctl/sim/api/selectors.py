"""Label and field selectors as the API server parses them (`?labelSelector=`, `?fieldSelector=`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]
Predicate = Callable[[Obj], bool]

_SET_TERM = re.compile(r"^\s*(!?)\s*([^\s!=()]+)\s*(?:(in|notin)\s*\(([^)]*)\))?\s*$")
_EQ_TERM = re.compile(r"^\s*([^\s!=]+)\s*(==|=|!=)\s*([^\s,]*)\s*$")


class SelectorError(ValueError):
    """An unparsable selector: the API answers 400 BadRequest."""


def _split_terms(selector: str) -> list[str]:
    """Split on commas that are not inside `in (a,b)` parentheses."""
    terms, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [term for term in terms if term.strip()]


def _label_term(term: str) -> Predicate:
    equality = _EQ_TERM.match(term)
    if equality:
        key, operator, value = equality.groups()
        if operator == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    match = _SET_TERM.match(term)
    if not match:
        raise SelectorError(f"unable to parse requirement: {term.strip()!r}")
    negate, key, operator, values_text = match.groups()
    if operator:
        if negate:
            raise SelectorError(f"unable to parse requirement: {term.strip()!r}")
        values = {value.strip() for value in values_text.split(",") if value.strip()}
        if operator == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if negate:
        return lambda labels: key not in labels
    return lambda labels: key in labels


def label_selector(selector: str | None) -> Predicate:
    """A predicate over an object's metadata.labels; empty selector matches everything."""
    if not selector or not selector.strip():
        return lambda _obj: True
    predicates = [_label_term(term) for term in _split_terms(selector)]

    def matches(obj: Obj) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(predicate(labels) for predicate in predicates)

    return matches


def field_value(obj: Obj, path: str) -> str:
    """The string value of a dotted field path, '' when absent (as the API server compares)."""
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, dict):
            return ""
        current = current.get(part)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


SUPPORTED_FIELDS = {
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "status.phase",
    "spec.unschedulable",
    "involvedObject.kind",
    "involvedObject.name",
    "involvedObject.namespace",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "type",
    "source",
    "spec.schedulerName",
    "spec.driver",  # resourceslices
    "spec.restartPolicy",
    "status.podIP",
    "regarding.kind",
    "regarding.name",
    "regarding.namespace",
    "regarding.uid",
}


def field_selector(selector: str | None) -> Predicate:
    """A predicate for `fieldSelector`: `=`, `==`, `!=` terms over the supported field paths."""
    if not selector or not selector.strip():
        return lambda _obj: True
    predicates: list[Predicate] = []
    for term in _split_terms(selector):
        match = _EQ_TERM.match(term) or re.match(r"^\s*([^\s!=]+)\s*(==|=|!=)\s*()\s*$", term)
        if not match:
            raise SelectorError(f"invalid field selector term {term.strip()!r}")
        path, operator, value = match.groups()
        if path not in SUPPORTED_FIELDS:
            raise SelectorError(f'field label not supported: "{path}"')
        predicates.append(_field_term(path, operator, value))
    return lambda obj: all(predicate(obj) for predicate in predicates)


def _field_term(path: str, operator: str, value: str) -> Predicate:
    if path == "source":
        path = "source.component"
    if operator == "!=":
        return lambda obj: field_value(obj, path) != value
    return lambda obj: field_value(obj, path) == value


def exact_field(selector: str | None, path: str) -> str | None:
    """The value of an equality term on `path` (an index lookup shortcut), else None."""
    if not selector:
        return None
    for term in _split_terms(selector):
        match = _EQ_TERM.match(term)
        if match and match.group(1) == path and match.group(2) in ("=", "=="):
            return match.group(3)
    return None
