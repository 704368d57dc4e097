"""CustomResourceDefinitions (apiextensions.k8s.io/v1) and the custom resources they define.

A stored CRD serves its kind at once, as an API server does after NamesAccepted and Established:
the resource types come from the store on each request (a handful of CRDs: no cache to invalidate),
so creating or deleting a CRD changes discovery and routing with the next request. Custom objects
go through the same writes as built-in kinds (create, update, patch, server-side apply, the status
subresource, watch); their schema is not enforced beyond the top-level fields a structural schema
keeps (apiVersion, kind, metadata, spec, status).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuctl.sim.api import kinds, tables
from gpuctl.sim.api.kinds import ResourceType
from gpuctl.sim.runtime.crd_objects import established_status
from gpuctl.sim.runtime.store import Store

Obj = dict[str, Any]
__all__ = ["CRD", "established_status", "lookup", "served", "table"]
CRD = kinds.BY_PATH[("apiextensions.k8s.io", "v1", "customresourcedefinitions")]
STATIC_GROUPS = frozenset(resource.group for resource in kinds.RESOURCE_TYPES)


def is_custom(resource: ResourceType) -> bool:
    """A kind a CRD defines (not one the sim serves natively)."""
    return resource.group not in STATIC_GROUPS


def defined_types(crd: Obj) -> list[ResourceType]:
    """The resource types a CRD serves, one per served version, storage version first."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group, kind, plural = spec.get("group"), names.get("kind"), names.get("plural")
    if not (isinstance(group, str) and isinstance(kind, str) and isinstance(plural, str)):
        return []
    versions = [v for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("served", True)]
    versions.sort(key=lambda version: not version.get("storage"))
    return [
        ResourceType(
            group,
            str(version.get("name", "")),
            kind,
            plural,
            spec.get("scope") == "Namespaced",
            tuple(names.get("shortNames") or ()),
            tuple(sub for sub in ("status", "scale") if sub in (version.get("subresources") or {})),
            categories=tuple(names.get("categories") or ()),
        )
        for version in versions
    ]


def custom_types(store: Store) -> list[ResourceType]:
    return [resource for crd in store.items(CRD.key) for resource in defined_types(crd)]


def served(store: Store) -> Sequence[ResourceType]:
    """Every resource type served now: the built-in kinds, then those of the stored CRDs."""
    custom = custom_types(store)
    return (*kinds.RESOURCE_TYPES, *custom) if custom else kinds.RESOURCE_TYPES


def lookup(store: Store, group: str, version: str, plural: str) -> ResourceType | None:
    found = kinds.lookup(group, version, plural)
    if found is not None or group in STATIC_GROUPS:
        return found
    return next(
        (r for r in custom_types(store) if (r.group, r.version, r.plural) == (group, version, plural)),
        None,
    )


def table(store: Store, resource: ResourceType, items: list[Obj], version: str, include: str) -> Obj:
    """The Table `kubectl get` asks for; a custom kind's columns follow its CRD's
    additionalPrinterColumns (simple `.a.b` paths), as the API server's table convertor does."""
    crd = store.get(CRD.key, "", f"{resource.plural}.{resource.group}") if is_custom(resource) else None
    printer: list[Obj] = []
    for version_spec in ((crd or {}).get("spec") or {}).get("versions") or []:
        if version_spec.get("name") == resource.version:
            printer = list(version_spec.get("additionalPrinterColumns") or [])
    if not printer:
        return tables.table(resource.kind, items, version, include)
    columns = [{"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}]
    columns += [
        {
            "name": column.get("name", ""),
            "type": column.get("type", "string"),
            "format": column.get("format", ""),
            "description": column.get("description", ""),
            "priority": int(column.get("priority", 0)),
        }
        for column in printer
    ]

    def row(obj: Obj) -> list[Any]:
        cells: list[Any] = [obj["metadata"]["name"]]
        for column in printer:
            value: Any = obj
            for key in str(column.get("jsonPath", "")).strip(".").split("."):
                value = value.get(key) if isinstance(value, dict) else None
            cells.append(tables.age(value) if column.get("type") == "date" and value else value)
        return cells

    return tables.table(resource.kind, items, version, include, custom=(columns, row))


# -- the CRD object's own lifecycle ------------------------------------------------------------


def validate(crd: Obj) -> list[str]:
    """The checks a client is likely to trip over: the name must be <plural>.<group>, and a
    served version must be the storage version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    errors = []
    expected = f"{names.get('plural', '')}.{spec.get('group', '')}"
    if crd["metadata"].get("name") != expected:
        name = crd["metadata"].get("name")
        errors.append(f'metadata.name: Invalid value: "{name}": must be spec.names.plural+"."+spec.group')
    if not names.get("kind") or not names.get("plural"):
        errors.append("spec.names: Required value: kind and plural are required")
    if sum(1 for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")) != 1:
        errors.append("spec.versions: Invalid value: must have exactly one version marked as storage")
    if spec.get("group") in STATIC_GROUPS:
        errors.append(f'spec.group: Invalid value: "{spec.get("group")}": served natively by this API server')
    return errors


def removed(store: Store, crd: Obj) -> None:
    """Deleting a CRD deletes every object of its kind (the API server's finalizer does)."""
    for resource in defined_types(crd)[:1]:
        for obj in store.items(resource.key):
            store.remove(resource.key, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
