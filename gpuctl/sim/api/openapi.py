"""OpenAPI v3 documents of the simulated API: `GET /openapi/v3` and `/openapi/v3/<api|apis/g>/<v>`.

kubectl reads them to decide how to validate (`QueryParamVerifierV3`: a PATCH operation of the kind
that lists a `fieldValidation` query parameter means "let the server validate") and for `kubectl
explain`. Schemas come from the official client's models (gpuctl/sim/api/schemas.py).

The PATCH request bodies deliberately do not list application/strategic-merge-patch+json: kubectl
would then compute client-side apply patches from these schemas, which carry no
x-kubernetes-patch-merge-key/-strategy, and replace lists (containers, env, tolerations) it should
merge. Without it, kubectl uses its compiled-in Go types, as it does for any server without the
extensions. The sim still accepts strategic merge patches.

Documents are built on first request (importing `kubernetes` then) and cached for the process.
"""

from __future__ import annotations

import hashlib
import json
import threading
from functools import cache
from typing import Any

from gpuctl.sim.api import schemas
from gpuctl.sim.api.kinds import RESOURCE_TYPES, ResourceType, ungated

Obj = dict[str, Any]
REF = "#/components/schemas/"
META = schemas.META_PACKAGE
PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml")
PRIMITIVE_SCHEMAS: dict[str, Obj] = {
    "str": {"type": "string"},
    "int": {"type": "integer", "format": "int64"},
    "bool": {"type": "boolean"},
    "float": {"type": "number", "format": "double"},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "bytes": {"type": "string", "format": "byte"},
    "object": {},  # IntOrString, RawExtension, FieldsV1: the models do not say which
}
QUERY_PARAMETERS = {
    "pretty": "If 'true', then the output is pretty printed.",
    "dryRun": "When present, indicates that modifications should not be persisted. Valid values: All",
    "fieldManager": "fieldManager is a name associated with the actor or entity that is making these "
    "changes.",
    "fieldValidation": "fieldValidation instructs the server on how to handle objects in the request "
    "(POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: Ignore, Warn (the "
    "default), Strict.",
    "force": 'Force is going to "force" Apply requests. It must be unset for non-apply patch requests.',
    "labelSelector": "A selector to restrict the list of returned objects by their labels.",
    "fieldSelector": "A selector to restrict the list of returned objects by their fields.",
    "resourceVersion": "resourceVersion sets a constraint on what resource versions a request may be "
    "served from.",
    "watch": "Watch for changes to the described resources and return them as a stream of add, update, "
    "and remove notifications.",
    "timeoutSeconds": "Timeout for the list/watch call.",
    "limit": "limit is a maximum number of responses to return for a list call.",
    "gracePeriodSeconds": "The duration in seconds before the object should be deleted.",
    "propagationPolicy": "Whether and how garbage collection will be performed.",
}
LIST_PARAMETERS = ("labelSelector", "fieldSelector", "limit", "resourceVersion", "timeoutSeconds", "watch")
WRITE_PARAMETERS = ("dryRun", "fieldManager", "fieldValidation")
_lock = threading.Lock()


def group_version_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _ref(name: str) -> Obj:
    return {"$ref": REF + name}


def _content(schema: Obj, media_types: tuple[str, ...] = ("application/json",)) -> Obj:
    return {media_type: {"schema": schema} for media_type in media_types}


def _query(name: str) -> Obj:
    kind = "integer" if name in ("limit", "timeoutSeconds", "gracePeriodSeconds") else "string"
    kind = "boolean" if name in ("watch", "force") else kind
    return {
        "name": name,
        "in": "query",
        "description": QUERY_PARAMETERS[name],
        "schema": {"type": kind, "uniqueItems": True},
    }


def _path_parameter(name: str) -> Obj:
    description = f"{name} of the resource" if name == "name" else "object name and auth scope"
    return {
        "name": name,
        "in": "path",
        "description": description,
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    }


# -- components.schemas ----------------------------------------------------------------------
def _element(element: str, names: dict[str, str]) -> Obj:
    if element in names:
        return {"allOf": [_ref(names[element])], "default": {}}
    return dict(PRIMITIVE_SCHEMAS.get(element, {}))


def _property(item: schemas.Field, names: dict[str, str]) -> Obj:
    element = _element(item.type.element, names)
    if item.type.container == "list":
        prop: Obj = {"type": "array", "items": element}
    elif item.type.container == "map":
        prop = {"type": "object", "additionalProperties": element}
    else:
        prop = element
    if item.description:
        prop["description"] = item.description
    return prop


def _model_schema(model: str, names: dict[str, str], gvk: Obj | None) -> Obj:
    model_fields = schemas.fields(model)
    schema: Obj = {
        "description": schemas.description(model),
        "type": "object",
        "properties": {item.json_name: _property(item, names) for item in model_fields},
    }
    required = [item.json_name for item in model_fields if item.required]
    if required:
        schema["required"] = required
    if gvk is not None:
        schema["x-kubernetes-group-version-kind"] = [gvk]
    return schema


def _reachable(models: list[str]) -> list[str]:
    seen: list[str] = []
    pending = list(models)
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.append(model)
        pending += [item.type.element for item in schemas.fields(model) if item.type.is_model]
    return seen


def _components(served: list[ResourceType], names: dict[str, str]) -> Obj:
    tops: dict[str, Obj] = {}
    for resource in served:
        gvk = {"group": resource.group, "kind": resource.kind, "version": resource.version}
        tops[schemas.kind_model(resource)] = gvk
        if listing := schemas.kind_model(resource, "List"):
            tops[listing] = dict(gvk, kind=f"{resource.kind}List")
    components = {
        names[model]: _model_schema(model, names, tops.get(model))
        for model in sorted(_reachable([*tops, "V1Status", "V1DeleteOptions"]))
    }
    components[f"{META}.Patch"] = {
        "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH "
        "request body.",
        "type": "object",
    }
    return dict(sorted(components.items()))


# -- paths -----------------------------------------------------------------------------------
def _operation(resource: ResourceType, action: str, operation_id: str, parameters: tuple[str, ...]) -> Obj:
    group = resource.group.removesuffix(".k8s.io").split(".")
    tag = "".join([group[0] or "core", *(part.capitalize() for part in group[1:])]) + f"_{resource.version}"
    return {
        "tags": [tag],
        "operationId": operation_id,
        "parameters": [_query(name) for name in parameters],
        "responses": {"401": {"description": "Unauthorized"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": resource.group,
            "version": resource.version,
            "kind": resource.kind,
        },
    }


def _respond(operation: Obj, schema: Obj, codes: tuple[str, ...] = ("200",)) -> Obj:
    for code in codes:
        operation["responses"][code] = {"description": "OK", "content": _content(schema)}
    return operation


def _item_operations(resource: ResourceType, names: dict[str, str], scope: str, suffix: str) -> Obj:
    kind = _ref(names[schemas.kind_model(resource)])
    status = _ref(f"{META}.Status")
    name = f"{scope}{resource.kind}{suffix}"
    operations: Obj = {}
    if "get" in resource.verbs:
        operations["get"] = _respond(_operation(resource, "get", f"read{name}", ()), kind)
    if suffix == "Status" or "update" in resource.verbs:
        put = _operation(resource, "put", f"replace{name}", WRITE_PARAMETERS)
        put["requestBody"] = {"content": _content(kind, ("*/*",)), "required": True}
        operations["put"] = _respond(put, kind, ("200", "201"))
    if suffix == "Status" or "patch" in resource.verbs:
        patch = _operation(resource, "patch", f"patch{name}", (*WRITE_PARAMETERS, "force"))
        patch["requestBody"] = {"content": _content(_ref(f"{META}.Patch"), PATCH_TYPES), "required": True}
        operations["patch"] = _respond(patch, kind, ("200", "201"))
    if not suffix and "delete" in resource.verbs:
        delete = _operation(resource, "delete", f"delete{name}", ("dryRun", "gracePeriodSeconds"))
        delete["requestBody"] = {"content": _content(_ref(f"{META}.DeleteOptions"), ("*/*",))}
        operations["delete"] = _respond(delete, status, ("200", "202"))
    return operations


def _collection_operations(resource: ResourceType, names: dict[str, str], scope: str) -> Obj:
    kind = _ref(names[schemas.kind_model(resource)])
    operations: Obj = {}
    if "list" in resource.verbs:
        listing = _ref(names[schemas.kind_model(resource, "List")])
        operations["get"] = _respond(
            _operation(resource, "list", f"list{scope}{resource.kind}", LIST_PARAMETERS), listing
        )
    if "create" in resource.verbs:
        post = _operation(resource, "post", f"create{scope}{resource.kind}", WRITE_PARAMETERS)
        post["requestBody"] = {"content": _content(kind, ("*/*",)), "required": True}
        operations["post"] = _respond(post, kind, ("200", "201", "202"))
    if "deletecollection" in resource.verbs:
        delete = _operation(
            resource, "deletecollection", f"deleteCollection{scope}{resource.kind}", LIST_PARAMETERS
        )
        operations["delete"] = _respond(delete, _ref(f"{META}.Status"))
    return operations


def _with_parameters(operations: Obj, path_parameters: tuple[str, ...]) -> Obj:
    if not operations:
        return {}
    parameters = [_path_parameter(name) for name in path_parameters] + [_query("pretty")]
    return dict(operations, parameters=parameters)


def _paths(resource: ResourceType, names: dict[str, str]) -> Obj:
    prefix = "/" + group_version_path(resource.group, resource.version)
    scope = "Namespaced" if resource.namespaced else ""
    scoped = ("namespace",) if resource.namespaced else ()
    collection = f"{prefix}/namespaces/{{namespace}}" if scope else prefix
    collection += f"/{resource.plural}"
    paths = {
        collection: _with_parameters(_collection_operations(resource, names, scope), scoped),
        f"{collection}/{{name}}": _with_parameters(
            _item_operations(resource, names, scope, ""), (*scoped, "name")
        ),
    }
    if "status" in resource.subresources:
        operations = _item_operations(resource, names, scope, "Status")
        paths[f"{collection}/{{name}}/status"] = _with_parameters(operations, (*scoped, "name"))
    if "log" in resource.subresources:
        log = _operation(resource, "get", f"read{scope}{resource.kind}Log", ())
        log["parameters"] = [
            {"name": name, "in": "query", "schema": {"type": "string" if name == "container" else "integer"}}
            for name in ("container", "limitBytes", "tailLines")
        ]
        text = _content({"type": "string"}, ("text/plain",))
        log["responses"]["200"] = {"description": "OK", "content": text}
        paths[f"{collection}/{{name}}/log"] = _with_parameters({"get": log}, (*scoped, "name"))
    if scope and "list" in resource.verbs:
        listing = _ref(names[schemas.kind_model(resource, "List")])
        every = _operation(resource, "list", f"list{resource.kind}ForAllNamespaces", LIST_PARAMETERS)
        paths[f"{prefix}/{resource.plural}"] = _with_parameters({"get": _respond(every, listing)}, ())
    return {path: item for path, item in paths.items() if item}


# -- documents -------------------------------------------------------------------------------
def group_versions(gates: frozenset[str] | None = None) -> list[str]:
    """Every served group/version as an OpenAPI v3 path: api/v1, apis/apps/v1 ...; with `gates`,
    only those a scenario with these gates serves (resource.k8s.io only with DRA), as discovery."""
    found: list[str] = []
    for resource in RESOURCE_TYPES if gates is None else ungated(RESOURCE_TYPES, gates):
        path = group_version_path(resource.group, resource.version)
        if path not in found:
            found.append(path)
    return found


def _document(gv_path: str) -> Obj:
    served = [r for r in RESOURCE_TYPES if group_version_path(r.group, r.version) == gv_path]
    names = schemas.definition_names()
    paths: Obj = {}
    for resource in served:
        paths.update(_paths(resource, names))
    title = "Kubernetes"
    return {
        "openapi": "3.0.0",
        "info": {"title": title, "version": "unversioned"},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": _components(served, names)},
    }


@cache
def _encoded(gv_path: str) -> tuple[bytes, str]:
    body = json.dumps(_document(gv_path), separators=(",", ":")).encode()
    return body, hashlib.sha512(body).hexdigest().upper()


def group_version_document(gv_path: str, gates: frozenset[str] | None = None) -> bytes | None:
    """The JSON of one group/version's document, or None for one not served (with `gates`)."""
    if gv_path not in group_versions(gates):
        return None
    with _lock:
        return _encoded(gv_path)[0]


def root_document(gates: frozenset[str] | None = None) -> Obj:
    """The discovery document of /openapi/v3: each group/version's URL, its hash in the query."""
    with _lock:
        hashes = {path: _encoded(path)[1] for path in group_versions(gates)}
    return {
        "paths": {
            path: {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
            for path, digest in hashes.items()
        }
    }
