"""Field ownership: metadata.managedFields kept as the API server keeps them.

Every write is recorded for its field manager (the `fieldManager` query parameter, else the
User-Agent's product, as the API server defaults it: `kubectl-edit`, `kubectl-set`,
`OpenAPI-Generator` ...):

- an update (create, PUT, JSON/merge/strategic-merge patch) owns what it added or changed, and
  takes it from every other manager (updates are always forced);
- an apply owns exactly the fields of its configuration. Changing a field another manager owns,
  to a different value, is a 409 Conflict naming each field and manager, unless `force=true`,
  which takes the fields over; the same value is shared ownership. A field the manager applied
  before and now omits is removed, unless another manager owns it too.

Server-set metadata (name, uid, resourceVersion ...), apiVersion and kind are owned by no one;
status belongs to writes of the status subresource where a kind has one.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from itertools import groupby
from typing import TYPE_CHECKING, Any

from gpuctl.sim.api import fieldsets
from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.fieldsets import FieldPath, Node
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.api.kinds import ResourceType
    from gpuctl.sim.api.messages import Request

Obj = dict[str, Any]
APPLY, UPDATE = "Apply", "Update"
_STRIPPED_METADATA = (
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "generation",
    "managedFields",
    "resourceVersion",
)


@dataclass(frozen=True)
class Writer:
    """Who sends a write: `field_manager` as the request named it ("" if not), and `force`."""

    field_manager: str = ""
    user_agent: str = ""
    force: bool = False

    @classmethod
    def of(cls, request: Request) -> Writer:
        return cls(request.query.get("fieldManager", ""), request.header("user-agent"), request.flag("force"))

    @property
    def manager(self) -> str:
        """The manager an update is recorded for: the API server's default is the User-Agent up to
        its first '/', printable characters only, 128 at most."""
        if self.field_manager:
            return self.field_manager
        product = self.user_agent.split("/")[0]
        return "".join(char for char in product if char.isprintable())[:128]


@dataclass
class Entry:
    """One managedFields entry: a manager's fields, for one operation and subresource."""

    manager: str
    operation: str
    api_version: str
    time: str = ""
    subresource: str = ""
    fields: set[FieldPath] = field(default_factory=set)

    @classmethod
    def decode(cls, item: Obj) -> Entry:
        fields = fieldsets.from_fields_v1(item.get("fieldsV1") or {})
        return cls(
            str(item.get("manager", "")),
            str(item["operation"]),
            str(item.get("apiVersion", "")),
            str(item.get("time") or ""),
            str(item.get("subresource", "")),
            fields,
        )

    def encode(self) -> Obj:
        item: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version}
        if self.time:
            item["time"] = self.time
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = fieldsets.to_fields_v1(self.fields)
        if self.subresource:
            item["subresource"] = self.subresource
        return item

    def is_for(self, manager: str, operation: str, subresource: str, api_version: str) -> bool:
        same = (self.manager, self.operation, self.subresource) == (manager, operation, subresource)
        return same and (operation == APPLY or self.api_version == api_version)

    @property
    def identity(self) -> str:
        """The API server's key for a manager (the entry without time and fields; appliers without
        their apiVersion): conflicts are grouped and sorted by it."""
        key: Obj = {"manager": self.manager, "operation": self.operation}
        if self.operation == UPDATE and self.api_version:
            key["apiVersion"] = self.api_version
        if self.subresource:
            key["subresource"] = self.subresource
        return json.dumps(key, separators=(",", ":"))

    @property
    def described(self) -> str:
        """How a conflict names the manager: `"kubectl-edit" using apps/v1` for an updater."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        return f"{text} using {self.api_version}" if self.operation == UPDATE else text


# -- scope and storage ------------------------------------------------------------------------


def _in_scope(path: FieldPath, resource: ResourceType, subresource: str) -> bool:
    top = path[0][1]
    if subresource == "status":
        return bool(top == "status")
    if top in ("apiVersion", "kind") or (top == "status" and "status" in resource.subresources):
        return False
    return top != "metadata" or (len(path) > 1 and path[1][1] not in _STRIPPED_METADATA)


def _scoped(resource: ResourceType, obj: Obj, subresource: str) -> dict[FieldPath, Node]:
    return {
        path: node for path, node in fieldsets.nodes(obj).items() if _in_scope(path, resource, subresource)
    }


def _entries(obj: Obj | None) -> list[Entry]:
    """The object's entries; none when it has none or they cannot be read (the live object's
    are then used, as the API server does for clients that do not understand them)."""
    raw = ((obj or {}).get("metadata") or {}).get("managedFields")
    if not isinstance(raw, list):
        return []
    try:
        return [Entry.decode(item) for item in raw]
    except (ValueError, TypeError, KeyError, AttributeError):
        return []


def _take(entries: list[Entry], manager: str, operation: str, subresource: str, api_version: str) -> Entry:
    """Remove and return the manager's entry (a new, empty one if it has none)."""
    for entry in entries:
        if entry.is_for(manager, operation, subresource, api_version):
            entries.remove(entry)
            return entry
    return Entry(manager, operation, api_version, subresource=subresource)


def _store(obj: Obj, entries: list[Entry]) -> None:
    kept = sorted(
        (entry for entry in entries if entry.fields),
        key=lambda e: (e.operation, e.time, e.manager, e.api_version, e.subresource),
    )
    metadata = obj.setdefault("metadata", {})
    if kept:
        metadata["managedFields"] = [entry.encode() for entry in kept]
    else:
        metadata.pop("managedFields", None)


# -- update and apply -------------------------------------------------------------------------


def record_update(
    resource: ResourceType, before: Obj | None, after: Obj, writer: Writer, subresource: str
) -> None:
    """Set `after`'s managedFields for an update of `before` (None: a create) by `writer`."""
    entries = _entries(after) if subresource != "status" else []
    entries = entries or _entries(before)
    comparison = fieldsets.compare(
        _scoped(resource, before or {}, subresource), _scoped(resource, after, subresource)
    )
    mine = _take(entries, writer.manager, UPDATE, subresource, resource.api_version)
    for entry in [*entries, mine]:
        entry.fields -= comparison.removed
    for entry in entries:
        entry.fields -= comparison.changed
    taken = fieldsets.updated(comparison.after, comparison.changed)
    if taken:
        mine.fields |= taken
        mine.time = rfc3339()
    _store(after, [*entries, mine])


def apply(resource: ResourceType, live: Obj | None, config: Obj, writer: Writer, subresource: str) -> Obj:
    """`config` applied to `live` (None: a create) by `writer`: the merged object, pruned of
    what the manager no longer applies, with its managedFields. Raises the API's 409 Conflict."""
    base: Obj = copy.deepcopy(live) if live is not None else {}
    entries = _entries(base)
    mine = _take(entries, writer.field_manager, APPLY, subresource, resource.api_version)
    owned = {path for path in fieldsets.applied(config) if _in_scope(path, resource, subresource)}
    merged: Obj = merge(base, config)
    for path in sorted(_pruned(mine.fields, owned, entries), key=len):
        remove(merged, path)
    comparison = fieldsets.compare(
        _scoped(resource, live or {}, subresource), _scoped(resource, merged, subresource)
    )
    conflicts = [(entry, path) for entry in entries for path in entry.fields & comparison.changed]
    if conflicts and not writer.force:
        raise conflict_error(conflicts)
    for entry in entries:
        entry.fields -= comparison.changed | comparison.removed
    if not mine.time or not comparison.empty:
        mine.time = rfc3339()
    mine.fields, mine.api_version = owned, resource.api_version
    _store(merged, [*entries, mine])
    return merged


def _pruned(before: set[FieldPath], owned: set[FieldPath], others: list[Entry]) -> set[FieldPath]:
    """What an applier owned and no longer applies, that no one else owns either. A field on the
    way to an owned one stays (structured-merge-diff's EnsureNamedFieldsAreMembers)."""
    kept = owned.union(*(entry.fields for entry in others))
    on_the_way = {path[:end] for path in kept for end in range(1, len(path)) if path[end - 1][0] == "f"}
    return before - kept - on_the_way


def conflict_error(conflicts: list[tuple[Entry, FieldPath]]) -> ApiError:
    """The API server's 409 for an apply that would change fields other managers own."""
    ordered = sorted(conflicts, key=lambda pair: (pair[0].identity, fieldsets.path_order(pair[1])))
    causes = [
        {
            "reason": "FieldManagerConflict",
            "message": f"conflict with {entry.described}",
            "field": fieldsets.path_string(path),
        }
        for entry, path in ordered
    ]
    if len(ordered) == 1:
        message = f"Apply failed with 1 conflict: {causes[0]['message']}: {causes[0]['field']}"
    else:
        lines = []
        for _, group in groupby(ordered, key=lambda pair: pair[0].identity):
            pairs = list(group)
            lines.append(f"conflicts with {pairs[0][0].described}:")
            lines += [f"- {fieldsets.path_string(path)}" for _, path in pairs]
        message = f"Apply failed with {len(ordered)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


# -- merging and removing by the same field types ---------------------------------------------


def merge(live: Any, config: Any, path: FieldPath = ()) -> Any:
    """`config` merged into `live` (changed in place): maps field by field, associative lists item
    by item, set lists as unions; atomic values are replaced, a null removes the field."""
    if isinstance(live, dict) and isinstance(config, dict):
        if fieldsets.field_name(path) in fieldsets.ATOMIC_MAPS:
            return config
        for key, value in config.items():
            merged = merge(live.get(key), value, (*path, ("f", key)))
            if merged is None:
                live.pop(key, None)
            else:
                live[key] = merged
        return live
    if isinstance(live, list) and isinstance(config, list):
        keys = fieldsets.list_keys(path, config)
        if keys is not None and fieldsets.list_keys(path, live) is not None:
            return _merge_items(live, config, path, keys)
    return config


def _merge_items(live: list[Any], config: list[Any], path: FieldPath, keys: tuple[str, ...]) -> list[Any]:
    if not keys:
        return live + [value for value in config if value not in live]
    positions = {fieldsets.item_element(item, keys): index for index, item in enumerate(live)}
    for item in config:
        element = fieldsets.item_element(item, keys)
        if element in positions:
            live[positions[element]] = merge(live[positions[element]], item, (*path, element))
        else:
            live.append(item)
    return live


def _child(node: Any, element: fieldsets.Element) -> tuple[Any, Any]:
    """(the child at `element`, its key in `node`: a field name or a list index); (None, None)."""
    kind, value = element
    if kind == "f":
        return (node.get(value), value) if isinstance(node, dict) and value in node else (None, None)
    keys = tuple(key for key, _ in value) if kind == "k" else ()
    for index, item in enumerate(node if isinstance(node, list) else []):
        if (not keys or isinstance(item, dict)) and fieldsets.item_element(item, keys) == element:
            return item, index
    return None, None


def remove(obj: Obj, path: FieldPath) -> None:
    """Remove the node at `path` if it is there, and the maps and lists that leaves empty."""
    trail: list[tuple[Any, Any]] = []  # (container, key in it) down to the node
    node: Any = obj
    for element in path:
        child, key = _child(node, element)
        if key is None:
            return
        trail.append((node, key))
        node = child
    for container, key in reversed(trail):
        del container[key]
        if container or container is obj:
            return
