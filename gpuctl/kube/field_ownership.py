"""What server-side apply will do with an object, read from its managedFields, so gpuctl sends an
apply only when it changes something and can adopt an object another tool created.

managedFields record, per field manager, the fields it owns as `fieldsV1`: a tree whose keys are
`f:NAME` (a field), `k:{"name":"x"}` (the item of a list merged by its keys, such as volumes by
name or volumeMounts by mountPath), `v:VALUE` (the item of a set) and `.` (the node itself), e.g.
`{"f:spec": {"f:template": {"f:spec": {"f:volumes": {"k:{\"name\":\"dev\"}": {".": {}, ...}}}}}}`.

A manifest gpuctl applies *declares* a path of that tree when it has the field or list item there.
Two questions are answered here:

- does gpuctl's own applier own a path its manifest no longer declares? Then the API server
  removes it on the next apply, so that apply is needed (`undeclared_owned`);
- which items did other managers add to the lists gpuctl's manifest declares (NVIDIA's static
  manifest names its kubelet socket volume `device-plugin`, gpuctl `kubelet-device-plugins-dir`)?
  Merged by name, both stay: two volumes for one host path. Adopting the object moves those items
  to gpuctl's applier, as `kubectl apply --server-side` moves what the client-side kubectl applied
  (csaupgrade), so gpuctl's next apply removes them (`foreign_items`, `adopted_managed_fields`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

Tree = dict[str, Any]  # a fieldsV1 tree
FieldPath = tuple[str, ...]  # its keys from the root, e.g. ("f:spec", "f:volumes", 'k:{"name":"x"}')

APPLY = "Apply"
# The keys of the lists the API server merges item by item (x-kubernetes-list-map-keys of
# k8s.io/api) among the fields of the objects gpuctl applies; any other list is one value.
LIST_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "ports": ("containerPort", "protocol"),
    "imagePullSecrets": ("name",),
}
_KEY_DEFAULTS = {"protocol": "TCP"}  # a list key the API server defaults (container ports)
_MISSING = object()


def is_subset(wanted: Any, live: Any, name: str = "") -> bool:
    """Every field of `wanted` has the same value in `live`: maps field by field, merged lists
    item by item by their keys (`live` may hold other items), any other list element by element."""
    if isinstance(wanted, dict):
        return isinstance(live, dict) and all(is_subset(v, live.get(k), k) for k, v in wanted.items())
    if isinstance(wanted, list):
        if not isinstance(live, list):
            return False
        keys = LIST_KEYS.get(name)
        if keys and all(isinstance(item, dict) for item in (*wanted, *live)):
            return all(any(_same_keys(w, item, keys) and is_subset(w, item) for item in live) for w in wanted)
        return len(wanted) == len(live) and all(is_subset(w, i) for w, i in zip(wanted, live, strict=True))
    return bool(wanted == live)


def _same_keys(one: dict[str, Any], other: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return all(_key(one, key) == _key(other, key) for key in keys)


def _key(item: dict[str, Any], key: str) -> Any:
    return item.get(key, _KEY_DEFAULTS.get(key))


# -- reading managedFields ----------------------------------------------------------------------


def _entries(live: dict[str, Any]) -> list[dict[str, Any]]:
    entries = (live.get("metadata") or {}).get("managedFields")
    return [entry for entry in entries if isinstance(entry, dict)] if isinstance(entries, list) else []


def _is_applier(entry: dict[str, Any], manager: str) -> bool:
    return (
        entry.get("manager") == manager and entry.get("operation") == APPLY and not entry.get("subresource")
    )


def _owned_paths(tree: Tree, prefix: FieldPath = ()) -> Iterator[FieldPath]:
    """The paths a tree owns: its leaves and the nodes marked `.`."""
    for key, child in tree.items():
        if key == ".":
            continue
        path = (*prefix, key)
        if not isinstance(child, dict) or not child or "." in child:
            yield path
        if isinstance(child, dict):
            yield from _owned_paths(child, path)


def _child(node: Any, key: str) -> Any:
    """The part of a manifest (or object) at one fieldsV1 key, or _MISSING."""
    kind, _, rest = key.partition(":")
    if kind == "f":
        return node.get(rest, _MISSING) if isinstance(node, dict) else _MISSING
    if kind == "k" and isinstance(node, list):
        wanted = json.loads(rest)
        return next(
            (
                item
                for item in node
                if isinstance(item, dict) and all(_key(item, k) == v for k, v in wanted.items())
            ),
            _MISSING,
        )
    if kind == "v" and isinstance(node, list):
        value = json.loads(rest)
        return value if value in node else _MISSING
    return _MISSING


def _declares(manifest: Any, path: FieldPath) -> bool:
    node = manifest
    for key in path:
        node = _child(node, key)
        if node is _MISSING:
            return False
    return True


def undeclared_owned(manifest: dict[str, Any], live: dict[str, Any], manager: str) -> list[str]:
    """What `manager`'s applies own of `live` that `manifest` no longer declares (the next apply
    removes it), as `.spec.x[name="y"]` paths."""
    found = []
    for entry in _entries(live):
        if _is_applier(entry, manager) and isinstance(entry.get("fieldsV1"), dict):
            paths = _owned_paths(entry["fieldsV1"])
            found += [path_string(path) for path in paths if not _declares(manifest, path)]
    return found


def foreign_items(manifest: dict[str, Any], live: dict[str, Any], manager: str) -> dict[FieldPath, list[str]]:
    """The items other managers own in the lists `manifest` declares, that it has not (path →
    the managers owning it); the object's metadata and status are left out."""
    found: dict[FieldPath, list[str]] = {}
    for entry in _entries(live):
        tree = entry.get("fieldsV1")
        if _is_applier(entry, manager) or entry.get("subresource") or not isinstance(tree, dict):
            continue
        content = {key: child for key, child in tree.items() if key not in ("f:metadata", "f:status")}
        for path in _items_not_declared(content, manifest, ()):
            found.setdefault(path, []).append(str(entry.get("manager", "")))
    return found


def _items_not_declared(tree: Tree, node: Any, prefix: FieldPath) -> Iterator[FieldPath]:
    for key, child in tree.items():
        if not key.startswith(("f:", "k:")):
            continue
        part = _child(node, key)
        if part is _MISSING:
            if key.startswith("k:"):  # an item in a list the manifest declares
                yield (*prefix, key)
            continue
        if isinstance(child, dict):
            yield from _items_not_declared(child, part, (*prefix, key))


# -- adopting -----------------------------------------------------------------------------------


def adopted_managed_fields(
    live: dict[str, Any], items: list[FieldPath], manager: str
) -> list[dict[str, Any]]:
    """`live`'s managedFields with `items` (and everything under them) moved from the managers
    that own them to `manager`'s applier (created if it has no entry yet)."""
    entries = copy.deepcopy(_entries(live))
    mine = next((entry for entry in entries if _is_applier(entry, manager)), None)
    if mine is None:
        mine = {
            "manager": manager,
            "operation": APPLY,
            "apiVersion": live.get("apiVersion", ""),
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "fieldsType": "FieldsV1",
            "fieldsV1": {},
        }
        entries.append(mine)
    emptied = []
    for entry in entries:
        if entry is mine or entry.get("subresource") or not isinstance(entry.get("fieldsV1"), dict):
            continue
        taken_any = False
        for path in items:
            taken = _pop(entry["fieldsV1"], path)
            if taken is not None:
                _put(mine["fieldsV1"], path, taken)
                taken_any = True
        if taken_any and not entry["fieldsV1"]:
            emptied.append(entry)  # a manager left owning nothing has no entry
    return [entry for entry in entries if all(entry is not gone for gone in emptied)]


def _pop(tree: Tree, path: FieldPath) -> Tree | None:
    """Remove the subtree at `path` and the parents it leaves empty (an empty node would read as
    an owned leaf); None when the tree has nothing there."""
    parent: Any = tree
    for key in path[:-1]:
        parent = parent.get(key)
        if not isinstance(parent, dict):
            return None
    taken = parent.pop(path[-1], None)
    if taken is None:
        return None
    for depth in range(len(path) - 1, 0, -1):
        node = _at(tree, path[:depth])
        if node == {}:
            _at(tree, path[: depth - 1]).pop(path[depth - 1])
    return taken if isinstance(taken, dict) else {}


def _at(tree: Tree, path: FieldPath) -> Tree:
    node = tree
    for key in path:
        node = node[key]
    return node


def _put(tree: Tree, path: FieldPath, subtree: Tree) -> None:
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = _merged(node.get(path[-1], {}), subtree)


def _merged(one: Tree, other: Tree) -> Tree:
    merged = dict(one)
    for key, child in other.items():
        merged[key] = _merged(merged.get(key, {}), child) if isinstance(child, dict) else child
    return merged


def without_items(obj: dict[str, Any], items: list[FieldPath]) -> dict[str, Any]:
    """A copy of `obj` without these list items: what an adopting apply leaves (for a dry run,
    whose answer still shows them: the ownership move was a dry run too)."""
    result = copy.deepcopy(obj)
    for path in items:
        parent = result
        for key in path[:-1]:
            parent = _child(parent, key)
            if parent is _MISSING:
                break
        else:
            item = _child(parent, path[-1])
            if item is not _MISSING and isinstance(parent, list):
                parent.remove(item)
    return result


def path_string(path: FieldPath) -> str:
    """`.spec.template.spec.volumes[name="device-plugin"]`, as the API server names a field."""
    text = ""
    for key in path:
        kind, _, rest = key.partition(":")
        if kind == "f":
            text += f".{rest}"
        elif kind == "k":
            text += (
                "["
                + ",".join(f"{name}={json.dumps(value)}" for name, value in json.loads(rest).items())
                + "]"
            )
        else:
            text += f"[={rest}]"
    return text
