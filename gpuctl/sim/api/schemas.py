"""The schemas of the served kinds, read from the official client's models.

`kubernetes.client.models.V1DaemonSet.openapi_types` and `.attribute_map` give each field's JSON name
and type ('str', 'List[V1Container]', 'Dict[str, str]', 'V1ObjectMeta' ...). The OpenAPI documents
(gpuctl/sim/api/openapi.py) and server-side field validation (gpuctl/sim/api/validation.py) both read them
through this module. `kubernetes` is imported on first use only: the sim starts without it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpuctl.sim.api.kinds import RESOURCE_TYPES, ResourceType

# Models of k8s.io/apimachinery/pkg/apis/meta/v1: every group's kinds share them.
META_MODELS = {
    "V1ObjectMeta",
    "V1ListMeta",
    "V1LabelSelector",
    "V1LabelSelectorRequirement",
    "V1ManagedFieldsEntry",
    "V1OwnerReference",
    "V1Status",
    "V1StatusDetails",
    "V1StatusCause",
    "V1DeleteOptions",
    "V1Preconditions",
    "V1Condition",
    "V1ShardInfo",
}
META_PACKAGE = "io.k8s.apimachinery.pkg.apis.meta.v1"
# Core models that no served core kind reaches first (the core PodTemplate kind is not served).
CORE_MODELS = {"V1PodTemplateSpec"}
PRIMITIVES = {"str", "int", "bool", "float", "datetime", "date", "bytes", "object"}
_lock = threading.Lock()


@dataclass(frozen=True)
class FieldType:
    """A field's type: `container` is "", "list" or "map"; `element` a primitive or a model name."""

    container: str
    element: str

    @property
    def is_model(self) -> bool:
        return self.element not in PRIMITIVES and "[" not in self.element


@dataclass(frozen=True)
class Field:
    json_name: str
    type: FieldType
    description: str
    required: bool


def parse_type(text: str) -> FieldType:
    """Both spellings of the client's types: 'List[X]'/'Dict[str, X]' (pydantic models, client 37+)
    and 'list[X]'/'dict(str, X)' (the older generated models)."""
    for opening, closing, container in (("List[", "]", "list"), ("list[", "]", "list")):
        if text.startswith(opening) and text.endswith(closing):
            return FieldType(container, text[len(opening) : -len(closing)])
    for opening, closing in (("Dict[str, ", "]"), ("dict(str, ", ")")):
        if text.startswith(opening) and text.endswith(closing):
            return FieldType("map", text[len(opening) : -len(closing)])
    return FieldType("", text)


def _models() -> Any:
    from kubernetes.client import models

    return models


def package(group: str) -> str:
    """`apps` -> io.k8s.api.apps.v1's package stem; the core group is `core`."""
    return group.split(".", maxsplit=1)[0] if group else "core"


def kind_model(resource: ResourceType, suffix: str = "") -> str:
    """The client's model class for a kind (or its list): V1DaemonSet, CoreV1Event, V1PodList;
    "" when the client has none (SelfSubjectAccessReview has no list)."""
    plain = f"{resource.version.capitalize()}{resource.kind}{suffix}"
    for name in (plain, f"{package(resource.group).capitalize()}{plain}"):
        if hasattr(_models(), name):
            return name
    return ""


def description(model: str) -> str:
    doc = getattr(_models(), model).__doc__ or ""
    return " ".join(doc.split("Attributes:")[0].split())


def fields(model: str) -> list[Field]:
    """The model's fields in JSON names, sorted like the real schemas."""
    cls = getattr(_models(), model)
    # Descriptions and required fields come from the pydantic models (client 37+); older clients'
    # models carry neither in a readable form, so their schemas have types only.
    model_fields = getattr(cls, "model_fields", {})
    by_json = {info.serialization_alias or name: info for name, info in model_fields.items()}
    found = []
    for attribute, type_text in cls.openapi_types.items():
        json_name = cls.attribute_map[attribute]
        info = by_json.get(json_name) or model_fields.get(attribute)
        required = info.is_required() if info is not None else False
        text = (info.description if info is not None else None) or ""
        found.append(Field(json_name, parse_type(type_text), text, required))
    return sorted(found, key=lambda field: field.json_name)


def served_kinds() -> list[tuple[ResourceType, str]]:
    """(resource, model) for every served kind, core group first: see `definition_names`."""
    return [(resource, kind_model(resource)) for resource in RESOURCE_TYPES]


@cache
def _definition_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for resource, model in served_kinds():
        for top in filter(None, (model, kind_model(resource, "List"))):
            _claim(top, f"io.k8s.api.{package(resource.group)}.{resource.version}", names)
    for model in ("V1Status", "V1DeleteOptions"):  # what deletes answer and take
        _claim(model, META_PACKAGE, names)
    return names


def _claim(model: str, package_name: str, names: dict[str, str]) -> None:
    """Name `model` and every model it reaches. The client's class names drop the Go package, so a
    model takes the package of the first served kind that reaches it; kinds are walked core group
    first, hence PodSpec is io.k8s.api.core.v1.PodSpec even though DaemonSets reach it too."""
    if model in names:
        return
    if model in META_MODELS:
        package_name = META_PACKAGE
        names[model] = f"{META_PACKAGE}.{model[2:]}"
    else:
        if model in CORE_MODELS:
            package_name = "io.k8s.api.core.v1"
        bare = model
        for prefix in ("Core", "Apps", "Rbac", "Node", "Coordination", "Scheduling", "Authorization"):
            if model.startswith(prefix + "V1"):
                package_name = f"io.k8s.api.{prefix.lower()}.v1"
                bare = model[len(prefix) :]
        names[model] = f"{package_name}.{bare[2:]}"
    for field in fields(model):
        if field.type.is_model:
            _claim(field.type.element, package_name, names)


def definition_names() -> dict[str, str]:
    """Model class name -> the real schema name (io.k8s.api.apps.v1.DaemonSet ...); cached."""
    with _lock:
        return _definition_names()
