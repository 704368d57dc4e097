"""Server-side field validation (`?fieldValidation=Ignore|Warn|Strict`), as API servers do since 1.27.

Unknown fields, per the client models' schema (gpuctl/sim/api/schemas.py), are always pruned, as the real
decoder drops them; `Warn` (the default) also answers a `Warning: 299` header per field, `Strict`
refuses the request with the real messages:

- create/update: 400 `DaemonSet in version "v1" cannot be handled as a DaemonSet: strict decoding
  error: unknown field "spec.foo"`;
- JSON, merge and strategic-merge patches: 422 `"" is invalid: patch: Invalid value: ...: strict
  decoding error: unknown field "spec.foo"` (the value is the patch, not the whole patched object);
- server-side apply converts the patch to a typed object first, so an unknown field fails whatever
  the directive, with 500 `failed to create typed patch object (...): .spec.foo: field not declared
  in schema` (v1.31 behaviour).

Duplicate keys in a request body are not detected (the JSON decoder keeps the last one).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from gpuctl.sim.api import schemas
from gpuctl.sim.api.api_errors import ApiError, bad_request
from gpuctl.sim.api.kinds import ResourceType

Obj = dict[str, Any]
DIRECTIVES = ("Ignore", "Warn", "Strict")
# JSON name -> (container "" | "list" | "map", the child's shape, or None where anything goes)
Shape = dict[str, tuple[str, "Shape | None"]]
Path = tuple[Any, ...]  # str keys and (index, item) pairs for list elements

_shapes: dict[str, Shape] = {}
_kind_shapes: dict[ResourceType, Shape] = {}
_lock = threading.Lock()


def _shape(model: str) -> Shape:
    """The field tree of a model, built once per model (recursive models share their node)."""
    if model in _shapes:
        return _shapes[model]
    shape: Shape = {}
    _shapes[model] = shape
    for item in schemas.fields(model):
        child = _shape(item.type.element) if item.type.is_model else None
        shape[item.json_name] = (item.type.container, child)
    return shape


def kind_shape(resource: ResourceType) -> Shape:
    shape = _kind_shapes.get(resource)  # the hot path: one dict lookup per write
    if shape is None:
        with _lock:
            model = schemas.kind_model(resource)
            shape = _kind_shapes[resource] = _shape(model) if model else _custom_shape()
    return shape


def _custom_shape() -> Shape:
    """A custom resource: what a structural schema keeps at the top; spec and status are free."""
    anything: tuple[str, Shape | None] = ("", None)
    return {
        "apiVersion": anything,
        "kind": anything,
        "metadata": ("", _shape("V1ObjectMeta")),
        "spec": anything,
        "status": anything,
    }


def prune_unknown(obj: Obj, shape: Shape, path: Path = ()) -> list[Path]:
    """Drop the fields `shape` does not know from `obj`, in place; return their paths."""
    unknown: list[Path] = []
    for key in [key for key in obj if key not in shape]:
        unknown.append((*path, key))
        del obj[key]
    for key, value in obj.items():
        container, child = shape[key]
        if child is None:
            continue
        if container == "" and isinstance(value, dict):
            unknown += prune_unknown(value, child, (*path, key))
        elif container == "list" and isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    unknown += prune_unknown(item, child, (*path, key, (index, item)))
        elif container == "map" and isinstance(value, dict):
            for name, item in value.items():
                if isinstance(item, dict):
                    unknown += prune_unknown(item, child, (*path, key, name))
    return unknown


def decoder_path(path: Path) -> str:
    """The strict JSON decoder's spelling: spec.template.spec.containers[0].imagePullPolicyy."""
    text = ""
    for part in path:
        text += f"[{part[0]}]" if isinstance(part, tuple) else f".{part}"
    return text.lstrip(".")


def typed_path(path: Path) -> str:
    """structured-merge-diff's spelling: .spec.template.spec.containers[name="ctr"].imagePullPolicyy."""
    text = ""
    for part in path:
        if isinstance(part, tuple):
            index, item = part
            name = item.get("name")
            text += f'[name="{name}"]' if isinstance(name, str) else f"[{index}]"
        else:
            text += f".{part}"
    return text


@dataclass
class FieldValidation:
    """The request's directive and the warnings it collected (sent as `Warning: 299` headers)."""

    directive: str = "Warn"
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_query(cls, value: str | None, options_kind: str) -> FieldValidation:
        if not value:
            return cls()
        if value not in DIRECTIVES:
            raise ApiError(
                422,
                "Invalid",
                f'{options_kind}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: '
                f'"{value}": supported values: "", "Ignore", "Strict", "Warn"',
                {
                    "group": "meta.k8s.io",
                    "kind": options_kind,
                    "causes": [
                        {
                            "reason": "FieldValueNotSupported",
                            "message": f'Unsupported value: "{value}": supported values: '
                            '"", "Ignore", "Strict", "Warn"',
                            "field": "fieldValidation",
                        }
                    ],
                },
            )
        return cls(value)

    def _unknown(self, resource: ResourceType, obj: Obj) -> list[str]:
        return [f'unknown field "{decoder_path(path)}"' for path in prune_unknown(obj, kind_shape(resource))]

    def _report(self, errors: list[str]) -> bool:
        """True when the request must be refused (Strict); Warn collects the warnings."""
        if not errors or self.directive == "Ignore":
            return False
        if self.directive == "Warn":
            self.warnings += errors
            return False
        return True

    def check_decoded(self, resource: ResourceType, obj: Obj) -> None:
        """A create or update body."""
        errors = self._unknown(resource, obj)
        if self._report(errors):
            kind, version = resource.kind, resource.version
            raise bad_request(
                f'{kind} in version "{version}" cannot be handled as a {kind}: '
                "strict decoding error: " + ", ".join(errors)
            )

    def check_patched(self, resource: ResourceType, patched: Obj, patch: Any) -> None:
        """The object a JSON, merge or strategic-merge patch produced."""
        errors = self._unknown(resource, patched)
        if not self._report(errors):
            return
        value = json.dumps(json.dumps(patch, separators=(",", ":")))
        message = f"Invalid value: {value}: strict decoding error: " + ", ".join(errors)
        causes = [{"reason": "FieldValueInvalid", "message": message, "field": "patch"}]
        raise ApiError(422, "Invalid", f'"" is invalid: patch: {message}', {"causes": causes})

    @staticmethod
    def check_applied(resource: ResourceType, document: Obj, namespace: str, name: str) -> None:
        """A server-side apply document: its typed conversion refuses unknown fields outright."""
        paths = prune_unknown(document, kind_shape(resource))
        if not paths:
            return
        problems = [f"{typed_path(path)}: field not declared in schema" for path in paths]
        text = problems[0] if len(problems) == 1 else "errors:\n  " + "\n  ".join(problems)
        gvk = f"{resource.group}/{resource.version}, Kind={resource.kind}"
        raise ApiError(500, "", f"failed to create typed patch object ({namespace}/{name}; {gvk}): {text}")


def warning_header(message: str) -> str:
    """RFC 7234 warn-code 299 with the message as a quoted string, as the API server sends it."""
    return '299 - "' + message.replace("\\", "\\\\").replace('"', '\\"') + '"'
