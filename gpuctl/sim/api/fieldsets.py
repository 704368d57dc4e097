"""Field sets, as server-side apply tracks them (structured-merge-diff's `fieldpath.Set`).

An object is walked into nodes, each named by a path of elements: `("f", "spec")` for a map
field, `("k", (("name", "ctr"),))` for the item of an associative list (its merge keys), `("v", x)`
for the item of a set list. Which lists are associative, which are sets and which structs and
maps are atomic follows the `x-kubernetes-list-type`/`-list-map-keys`, `+structType`/`+mapType`
markers of k8s.io/api for the kinds gpuctl and kubectl write here; any other list is atomic, as
it is for the real API server (a list with no list type is one value).

A node is a *leaf* when it is compared by value (a scalar, an atomic list or map, an empty map);
an applied configuration owns its leaves and its list items (`ToFieldSet`). managedFields carry a
set as `fieldsV1`: `{"f:spec": {"f:containers": {"k:{\\"name\\":\\"ctr\\"}": {".": {}, ...}}}}`,
where `.` marks an item that is owned itself as well as through its fields.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

Obj = dict[str, Any]
Element = tuple[str, Any]  # ("f", field) | ("k", ((key, value), ...)) | ("v", value)
FieldPath = tuple[Element, ...]

# list field -> its keys (x-kubernetes-list-type: map): PodSpec, Container, ObjectMeta, conditions
ASSOCIATIVE_LISTS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "volumeDevices": ("devicePath",),
    "ports": ("containerPort", "protocol"),
    "imagePullSecrets": ("name",),
    "hostAliases": ("ip",),
    "resourceClaims": ("name",),
    "topologySpreadConstraints": ("topologyKey", "whenUnsatisfiable"),
    "ownerReferences": ("uid",),
    "conditions": ("type",),
}
KEY_DEFAULTS = {"protocol": "TCP"}  # a list-map key with a default in the schema (container ports)
ATOMIC_MAPS = {"selector", "nodeSelector"}  # LabelSelector: +structType=atomic; +mapType=atomic
# Go maps (not structs): a write that adds one owns it as well as its entries (".": {})
GO_MAPS = {"labels", "annotations", "data", "binaryData", "limits", "requests", "capacity", "allocatable"}
_SCALARS = (str, int, float, bool, type(None))
_ORDER = {"f": 0, "k": 1, "v": 2}


class Node(NamedTuple):  # a tuple: created for every field of every write
    value: Any
    leaf: bool
    item: bool  # an element of an associative or set list


def field_name(path: FieldPath) -> str:
    return str(path[-1][1]) if path and path[-1][0] == "f" else ""


def list_keys(path: FieldPath, items: list[Any]) -> tuple[str, ...] | None:
    """The keys of an associative list at `path`; () for a set list; None for an atomic one."""
    name = field_name(path)
    if name == "finalizers" and path == (("f", "metadata"), ("f", "finalizers")):
        scalar = all(isinstance(item, _SCALARS) for item in items)
        return () if scalar and len(set(items)) == len(items) else None
    keys = ASSOCIATIVE_LISTS.get(name)
    if keys is None or not all(isinstance(item, dict) and keys[0] in item for item in items):
        return None
    elements = [item_element(item, keys) for item in items]
    if any(not isinstance(value, _SCALARS) for _, pairs in elements for _, value in pairs):
        return None
    return keys if len(set(elements)) == len(elements) else None  # duplicates: one value


def item_element(item: Any, keys: tuple[str, ...]) -> Element:
    if not keys:
        return ("v", item)
    pairs = ((key, item.get(key, KEY_DEFAULTS.get(key))) for key in sorted(keys))
    return ("k", tuple((key, value) for key, value in pairs if value is not None))


def nodes(obj: Obj) -> dict[FieldPath, Node]:
    """Every node of `obj` below its root, by path."""
    found: dict[FieldPath, Node] = {}
    for key, value in obj.items():
        _walk(value, (("f", key),), found, item=False)
    return found


def _walk(value: Any, path: FieldPath, found: dict[FieldPath, Node], *, item: bool) -> None:
    if isinstance(value, dict) and value and field_name(path) not in ATOMIC_MAPS:
        found[path] = Node(value, False, item)
        for key, child in value.items():
            _walk(child, (*path, ("f", key)), found, item=False)
        return
    keys = list_keys(path, value) if isinstance(value, list) and value else None
    if keys is None:
        found[path] = Node(value, True, item)
        return
    found[path] = Node(value, False, item)
    for element in value:
        _walk(element, (*path, item_element(element, keys)), found, item=True)


def applied(obj: Obj) -> set[FieldPath]:
    """What an applied configuration owns: its leaves and list items."""
    return {path for path, node in nodes(obj).items() if node.leaf or node.item}


def updated(after: dict[FieldPath, Node], paths: Iterable[FieldPath]) -> set[FieldPath]:
    """What an update owns of the nodes it added or modified: leaves, list items, and the Go maps
    and lists it created (a struct's own node is not tracked: Go always serialises it)."""
    owned = set()
    for path in paths:
        node = after[path]
        creates_container = isinstance(node.value, list) and field_name(path) != "containers"
        if node.leaf or node.item or creates_container or field_name(path) in GO_MAPS:
            owned.add(path)
    return owned


@dataclass(frozen=True)
class Comparison:
    added: frozenset[FieldPath]
    removed: frozenset[FieldPath]
    modified: frozenset[FieldPath]
    after: dict[FieldPath, Node]

    @property
    def changed(self) -> frozenset[FieldPath]:
        return self.added | self.modified

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.modified)


def compare(before: dict[FieldPath, Node], after: dict[FieldPath, Node]) -> Comparison:
    modified = {path for path in before.keys() & after.keys() if _differs(before[path], after[path])}
    added, removed = after.keys() - before.keys(), before.keys() - after.keys()
    return Comparison(frozenset(added), frozenset(removed), frozenset(modified), after)


def _differs(old: Node, new: Node) -> bool:
    if old.leaf and new.leaf:
        return bool(old.value != new.value)
    return type(old.value) is not type(new.value)  # an empty map that got fields is no change


# -- fieldsV1 ---------------------------------------------------------------------------------


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode_element(element: Element) -> str:
    kind, value = element
    if kind == "k":
        return "k:" + _compact(dict(value))
    return f"{kind}:{value}" if kind == "f" else "v:" + _compact(value)


def decode_element(text: str) -> Element:
    kind, _, rest = text.partition(":")
    if kind == "f":
        return ("f", rest)
    if kind == "k":
        return ("k", tuple(sorted(json.loads(rest).items())))
    if kind == "v":
        return ("v", json.loads(rest))
    raise ValueError(f"unknown path element {text!r}")


def _element_order(element: Element) -> tuple[int, str]:
    return _ORDER[element[0]], _compact(element[1])


def to_fields_v1(paths: Iterable[FieldPath]) -> Obj:
    """The fieldsV1 object of a set of paths. Shared between callers (objects of one shape, such
    as thousands of pods from one template, have the same set): never mutate the answer, as stored
    objects are never mutated in place."""
    return _fields_v1(frozenset(paths))


@functools.lru_cache(maxsize=1024)
def _fields_v1(paths: frozenset[FieldPath]) -> Obj:
    trie: dict[Any, Any] = {}
    for path in paths:
        node = trie
        for element in path:
            node = node.setdefault(element, {})
        node[None] = True  # the path itself is in the set
    return _serialise(trie)


def _serialise(trie: dict[Any, Any]) -> Obj:
    out: Obj = {".": {}} if trie.get(None) and len(trie) > 1 else {}
    for element in sorted((key for key in trie if key is not None), key=_element_order):
        out[encode_element(element)] = _serialise(trie[element])
    return out


def from_fields_v1(fields: Obj, prefix: FieldPath = ()) -> set[FieldPath]:
    """The set a fieldsV1 object encodes; ValueError when it is not one."""
    if not isinstance(fields, dict):
        raise ValueError("fieldsV1 must be an object")
    paths = {prefix} if prefix and (not fields or "." in fields) else set()
    for key, child in fields.items():
        if key != ".":
            paths |= from_fields_v1(child, (*prefix, decode_element(key)))
    return paths


def _go_string(value: Any) -> str:
    """structured-merge-diff's value.ToString: strings quoted, the rest as Go prints them."""
    if isinstance(value, str):
        return _compact(value)
    if isinstance(value, bool) or value is None:
        return _compact(value)
    return str(value)


def path_string(path: FieldPath) -> str:
    """`.spec.template.spec.containers[name="ctr"].image`, as conflicts name a field."""
    text = ""
    for kind, value in path:
        if kind == "f":
            text += f".{value}"
        elif kind == "k":
            text += "[" + ",".join(f"{key}={_go_string(item)}" for key, item in value) + "]"
        else:
            text += f"[={_go_string(value)}]"
    return text


def path_order(path: FieldPath) -> tuple[tuple[int, int, str], ...]:
    """The order `fieldpath.Set.Iterate` walks a set in: at each level its members, then the
    paths through its children."""
    last = len(path) - 1
    return tuple((int(index != last), *_element_order(element)) for index, element in enumerate(path))
