"""Create, update, patch and delete, with the API server's semantics: 409 on name clashes and
stale resourceVersions, 422 on invalid objects, dryRun=All, no-op writes that change nothing."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from gpuctl.sim.api import crds, ownership, patches
from gpuctl.sim.api.admission import Admit
from gpuctl.sim.api.api_errors import ApiError, already_exists, bad_request, conflict, invalid, not_found
from gpuctl.sim.api.kinds import NAMESPACED_KEYS, ResourceType
from gpuctl.sim.api.ownership import Writer
from gpuctl.sim.api.validation import FieldValidation
from gpuctl.sim.runtime import defaults
from gpuctl.sim.runtime.objects import generated_name
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.sim.runtime.cluster import Cluster

Obj = dict[str, Any]
PATCH_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
    "application/strategic-merge-patch+json",
)
PROTECTED_NAMESPACES = {"default", "kube-system", "kube-public", "kube-node-lease"}
IMMUTABLE_METADATA = (
    "uid",
    "creationTimestamp",
    "name",
    "namespace",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def _prepare_new(cluster: Cluster, resource: ResourceType, namespace: str, body: Obj) -> Obj:
    obj = body  # freshly decoded from the request: ours to modify
    metadata = obj.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise bad_request("metadata must be an object")
    if resource.namespaced:
        if metadata.get("namespace") not in (None, "", namespace):
            raise bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        metadata["namespace"] = namespace
        if cluster.store.get("namespaces", "", namespace) is None:
            raise not_found("namespaces", namespace)
    else:
        metadata.pop("namespace", None)
    if not metadata.get("name"):
        if not metadata.get("generateName"):
            raise invalid(
                resource.kind, "", ["metadata.name: Required value: name or generateName is required"]
            )
        store_namespace = namespace if resource.namespaced else ""
        name = generated_name(
            str(metadata["generateName"]),
            lambda candidate: cluster.store.get(resource.key, store_namespace, candidate) is not None,
        )
        if name is None:
            raise already_exists(resource.plural, metadata["generateName"] + "*", resource.group)
        metadata["name"] = name
    for field in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp"):
        metadata.pop(field, None)
    obj["kind"], obj["apiVersion"] = resource.kind, resource.api_version
    metadata["generation"] = 1
    _apply_kind_defaults(resource, obj)
    return obj


def _apply_kind_defaults(resource: ResourceType, obj: Obj) -> None:
    if resource.kind == "Pod":
        obj.pop("status", None)
        defaults.apply_pod_defaults(obj)
    elif resource.kind == "Namespace":
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
    elif resource.kind == "DaemonSet":
        obj.setdefault("spec", {}).setdefault("updateStrategy", {"type": "RollingUpdate"})
        obj["status"] = {
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        }
        template = obj["spec"].setdefault("template", {})
        # Spec defaults only: admission (DefaultTolerationSeconds) adds to pods, not templates, else
        # every `kubectl apply` would see the tolerations differ and report "configured".
        defaults.apply_pod_spec_defaults(template)
        template.pop("status", None)
    elif resource.kind == "CustomResourceDefinition":
        obj["status"] = crds.established_status(obj)


def _validate(resource: ResourceType, obj: Obj) -> None:
    errors = defaults.validate(resource.kind, obj)
    if resource == crds.CRD:
        errors += crds.validate(obj)
    if errors:
        raise invalid(resource.kind, obj["metadata"].get("name", ""), errors, resource.group)


def create(
    cluster: Cluster,
    resource: ResourceType,
    namespace: str,
    body: Obj,
    dry_run: bool,
    *,
    writer: Writer | None,
    fields: FieldValidation | None = None,
    admit: Admit | None = None,
) -> Obj:
    """`fields`: the request's fieldValidation (None: the caller already checked the body);
    `writer`: who the create is recorded for (None: the caller, an apply, recorded it);
    `admit`: the admission policies' check of the request (None: nothing to check)."""
    if fields is not None:
        fields.check_decoded(resource, body)
    obj = _prepare_new(cluster, resource, namespace, body)
    if writer is not None:
        ownership.record_update(resource, None, obj, writer, "")
    name = obj["metadata"]["name"]
    if cluster.store.get(resource.key, namespace if resource.namespaced else "", name) is not None:
        raise already_exists(resource.plural, name, resource.group)
    _validate(resource, obj)
    if admit is not None:
        admit(None, obj)
    if dry_run:
        obj["metadata"].setdefault("uid", "00000000-0000-0000-0000-000000000000")
        obj["metadata"]["creationTimestamp"] = rfc3339()
        return obj
    return cluster.store.add(resource.key, obj)  # the controllers watch the store


def _merge_into_existing(resource: ResourceType, existing: Obj, candidate: Obj, subresource: str) -> Obj:
    result = copy.deepcopy(candidate)
    result["kind"], result["apiVersion"] = resource.kind, resource.api_version
    metadata = result.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        raise bad_request("metadata must be an object")
    for field in IMMUTABLE_METADATA:
        if field in existing["metadata"]:
            metadata[field] = existing["metadata"][field]
        else:
            metadata.pop(field, None)
    if subresource == "status":
        result = dict(copy.deepcopy(existing), status=result.get("status", existing.get("status")))
    elif "status" in resource.subresources:
        if "status" in existing:
            result["status"] = copy.deepcopy(existing["status"])
        else:
            result.pop("status", None)
    if result.get("spec") != existing.get("spec"):
        metadata["generation"] = int(existing["metadata"].get("generation", 1)) + 1
    elif "generation" in existing["metadata"]:
        metadata["generation"] = existing["metadata"]["generation"]
    else:
        metadata.pop("generation", None)
    metadata["resourceVersion"] = existing["metadata"]["resourceVersion"]
    return result


def _existing(cluster: Cluster, resource: ResourceType, namespace: str, name: str) -> Obj:
    existing = cluster.store.get(resource.key, namespace if resource.namespaced else "", name)
    if existing is None:
        raise not_found(resource.plural, name, resource.group)
    return existing


def _store_update(  # noqa: PLR0917 - one private call shape shared by update, patch and apply
    cluster: Cluster, resource: ResourceType, existing: Obj, result: Obj, dry_run: bool, admit: Admit | None
) -> Obj:
    if result == existing:
        return existing  # a no-op write changes nothing, not even the resourceVersion
    _validate(resource, result)
    if admit is not None:
        admit(existing, result)
    if dry_run:
        return result
    if resource.kind == "Namespace" and existing["metadata"].get("deletionTimestamp"):
        result["status"] = existing["status"]
    return cluster.store.put(resource.key, result)


def update(
    cluster: Cluster,
    resource: ResourceType,
    namespace: str,
    name: str,
    *,
    subresource: str,
    body: Obj,
    dry_run: bool,
    writer: Writer,
    fields: FieldValidation | None = None,
    admit: Admit | None = None,
) -> Obj:
    if fields is not None:
        fields.check_decoded(resource, body)
    existing = _existing(cluster, resource, namespace, name)
    body_meta = body.get("metadata") or {}
    if body_meta.get("name") not in (None, name):
        raise bad_request(
            f"the name of the object ({body_meta.get('name')}) does not match the name on the URL ({name})"
        )
    wanted = body_meta.get("resourceVersion")
    if wanted and wanted != existing["metadata"]["resourceVersion"]:
        raise conflict(resource.plural, name, resource.group)
    result = _merge_into_existing(resource, existing, body, subresource)
    ownership.record_update(resource, existing, result, writer, subresource)
    return _store_update(cluster, resource, existing, result, dry_run, admit)


def _decode(body: bytes, content_type: str) -> Any:
    try:
        if content_type == "application/apply-patch+yaml":
            import yaml

            return yaml.safe_load(body.decode("utf-8"))
        return json.loads(body or b"null")
    except Exception as error:  # json, yaml and utf-8 each raise their own: all are a client's 400
        raise bad_request(f"error decoding patch: {error}") from None


def patch(
    cluster: Cluster,
    resource: ResourceType,
    namespace: str,
    name: str,
    *,
    subresource: str,
    body: bytes,
    content_type: str,
    writer: Writer,
    dry_run: bool,
    fields: FieldValidation | None = None,
    admit: Admit | None = None,
) -> tuple[Obj, bool]:
    """Apply a patch; returns (object, created) — server-side apply may create."""
    document = _decode(body, content_type)
    existing = cluster.store.get(resource.key, namespace if resource.namespaced else "", name)
    if content_type == "application/apply-patch+yaml":
        return _apply(
            cluster,
            resource,
            namespace,
            name,
            subresource=subresource,
            document=document,
            existing=existing,
            writer=writer,
            dry_run=dry_run,
            admit=admit,
        )
    if writer.force:
        forbidden_force = "force: Forbidden: may not be specified for non-apply patch"
        raise invalid("PatchOptions", "", [forbidden_force], "meta.k8s.io")
    if existing is None:
        raise not_found(resource.plural, name, resource.group)
    candidate = _patched(resource, name, existing, document, content_type)
    if not isinstance(candidate, dict):
        raise bad_request("the patch did not produce an object")
    if fields is not None:
        fields.check_patched(resource, candidate, document)
    wanted = (candidate.get("metadata") or {}).get("resourceVersion")
    if wanted and wanted != existing["metadata"]["resourceVersion"]:
        raise conflict(resource.plural, name, resource.group)
    result = _merge_into_existing(resource, existing, candidate, subresource)
    ownership.record_update(resource, existing, result, writer, subresource)
    return _store_update(cluster, resource, existing, result, dry_run, admit), False


def _patched(resource: ResourceType, name: str, existing: Obj, document: Any, content_type: str) -> Any:
    """`existing` with a JSON, merge or strategic-merge patch applied (not yet validated)."""
    try:
        if content_type == "application/json-patch+json":
            return patches.json_patch(existing, document)
        if content_type == "application/merge-patch+json":
            return patches.merge_patch(existing, document)
        if content_type == "application/strategic-merge-patch+json":
            return patches.strategic_merge(existing, document)
    except patches.PatchError as error:
        raise invalid(resource.kind, name, [f"patch: {error}"], resource.group) from None
    raise ApiError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(PATCH_TYPES)} (got {content_type})",
    )


def _apply(
    cluster: Cluster,
    resource: ResourceType,
    namespace: str,
    name: str,
    *,
    subresource: str,
    document: Any,
    existing: Obj | None,
    writer: Writer,
    dry_run: bool,
    admit: Admit | None,
) -> tuple[Obj, bool]:
    if not writer.field_manager:
        raise invalid(
            "PatchOptions", "", ["fieldManager: Required value: is required for apply patch"], "meta.k8s.io"
        )
    if not isinstance(document, dict):
        raise bad_request("apply patch must be an object")
    FieldValidation.check_applied(resource, document, namespace if resource.namespaced else "", name)
    metadata = document.get("metadata") or {}
    if metadata.get("managedFields") is not None:
        raise bad_request("metadata.managedFields must be nil")
    document["metadata"] = dict(metadata, name=name)
    applied = ownership.apply(resource, existing, document, writer, subresource)
    if existing is None:
        return create(cluster, resource, namespace, applied, dry_run, writer=None, admit=admit), True
    result = _merge_into_existing(resource, existing, applied, subresource)
    if subresource == "status":  # the status write keeps the object's metadata, but not its owners
        managed = (applied.get("metadata") or {}).get("managedFields")
        if managed is not None:
            result["metadata"]["managedFields"] = managed
    return _store_update(cluster, resource, existing, result, dry_run, admit), False


def delete(
    cluster: Cluster, resource: ResourceType, namespace: str, name: str, *, grace: int | None, dry_run: bool
) -> Obj:
    existing = _existing(cluster, resource, namespace, name)
    if resource.kind == "Namespace" and name in PROTECTED_NAMESPACES:
        raise ApiError(
            403,
            "Forbidden",
            f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            {"name": name, "kind": "namespaces"},
        )
    if dry_run:
        return existing
    if resource.kind == "Pod":
        return cluster.delete_pod(existing, grace)
    if resource.kind == "Namespace":
        if existing["metadata"].get("deletionTimestamp"):
            return existing
        custom = {r.key for r in crds.custom_types(cluster.store) if r.namespaced}
        return cluster.delete_namespace(existing, (*NAMESPACED_KEYS, *sorted(custom)))
    removed = cluster.store.remove(resource.key, namespace if resource.namespaced else "", name) or existing
    if resource == crds.CRD:
        crds.removed(cluster.store, removed)
    return removed
