"""JSON patch (RFC 6902), JSON merge patch (RFC 7386) and strategic merge patch.

Strategic merge follows the Kubernetes struct tags for the lists that matter here: containers,
env, volumes, ports, conditions ... merge by key; node spec.taints and pod tolerations have no
patchMergeKey, so a patch replaces them whole (as the real API server does).
"""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]

# list field name → merge key (the `patchMergeKey` struct tags of k8s.io/api)
MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "conditions": "type",
    "ownerReferences": "uid",
    "addresses": "type",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
}
PRIMITIVE_SET_LISTS = {"finalizers"}  # patchStrategy: merge on a list of strings


class PatchError(ValueError):
    """An invalid patch document: the API answers 422 (or 400 for malformed JSON)."""


# -- RFC 6902 ---------------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _walk(doc: Any, parts: list[str]) -> Any:
    for part in parts:
        if isinstance(doc, list):
            doc = doc[_index(part, len(doc))]
        elif isinstance(doc, dict) and part in doc:
            doc = doc[part]
        else:
            raise PatchError(f"path not found: /{'/'.join(parts)}")
    return doc


def _index(part: str, length: int, allow_end: bool = False) -> int:
    if part == "-" and allow_end:
        return length
    try:
        index = int(part)
    except ValueError:
        raise PatchError(f"invalid array index {part!r}") from None
    if index < 0 or index > length or (index == length and not allow_end):
        raise PatchError(f"array index {index} out of range")
    return index


def json_patch(doc: Obj, operations: Any) -> Obj:
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    result = copy.deepcopy(doc)
    for operation in operations:
        if not isinstance(operation, dict) or "op" not in operation or "path" not in operation:
            raise PatchError(f"invalid JSON patch operation: {operation!r}")
        result = _apply_operation(result, operation)
    return result


def _apply_operation(doc: Any, operation: Obj) -> Any:
    op, parts = operation["op"], _pointer(operation["path"])
    if op == "test":
        if _walk(doc, parts) != operation.get("value"):
            raise PatchError(f"test operation failed at {operation['path']}")
        return doc
    if op in ("move", "copy"):
        value = copy.deepcopy(_walk(doc, _pointer(operation.get("from", ""))))
        if op == "move":
            doc = _remove(doc, _pointer(operation["from"]))
        return _add(doc, parts, value)
    if op == "remove":
        return _remove(doc, parts)
    if op == "add":
        return _add(doc, parts, copy.deepcopy(operation.get("value")))
    if op == "replace":
        _walk(doc, parts)  # must exist
        return _add(_remove(doc, parts), parts, copy.deepcopy(operation.get("value")))
    raise PatchError(f"unknown JSON patch op {op!r}")


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    if isinstance(parent, list):
        parent.insert(_index(parts[-1], len(parent), allow_end=True), value)
    elif isinstance(parent, dict):
        parent[parts[-1]] = value
    else:
        raise PatchError(f"cannot add at /{'/'.join(parts)}")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, parts[:-1])
    if isinstance(parent, list):
        parent.pop(_index(parts[-1], len(parent)))
    elif isinstance(parent, dict) and parts[-1] in parent:
        del parent[parts[-1]]
    else:
        raise PatchError(f"path not found: /{'/'.join(parts)}")
    return doc


# -- RFC 7386 ---------------------------------------------------------------------------------


def merge_patch(doc: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- strategic merge patch --------------------------------------------------------------------


def strategic_merge(doc: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if not key.startswith("$"):  # $setElementOrder/, $retainKeys: ordering hints we do not need
            _merge_field(result, key, value)
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            result[field] = [item for item in result.get(field) or [] if item not in value]
    return result


def _merge_field(result: dict[str, Any], key: str, value: Any) -> None:
    merged: Any
    if value is None:
        merged = None
    elif isinstance(value, list) and key in MERGE_KEYS:
        merged = _merge_list(result.get(key) or [], value, MERGE_KEYS[key])
    elif isinstance(value, list) and key in PRIMITIVE_SET_LISTS:
        current = list(result.get(key) or [])
        merged = current + [item for item in value if item not in current]
    elif isinstance(value, dict):
        merged = strategic_merge(result.get(key), value)
    else:
        merged = copy.deepcopy(value)
    if merged is None:
        result.pop(key, None)
    else:
        result[key] = merged


def _merge_list(current: list[Any], patch: list[Any], merge_key: str) -> list[Any]:
    if any(isinstance(item, dict) and item.get("$patch") == "replace" for item in patch):
        return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
    result = [copy.deepcopy(item) for item in current]
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            result.append(copy.deepcopy(item))
            continue
        position = next(
            (
                i
                for i, old in enumerate(result)
                if isinstance(old, dict) and old.get(merge_key) == item[merge_key]
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if position is not None:
                result.pop(position)
        elif position is None:
            result.append(strategic_merge({}, item))
        else:
            result[position] = strategic_merge(result[position], item)
    return result
