"""Server-side apply with field manager `gpuctl`, writing only what differs.

Each object is read first: when every field gpuctl sets already has gpuctl's value (lists merged
by their keys, as the API server merges them) and gpuctl owns nothing it no longer sets, nothing
is sent, so a second run makes no write at all, also over an object another tool created.
Otherwise the object is applied (or, for a check, applied with dryRun=All and diffed against the
live object). A field another manager owns is a conflict the API server refuses; it is reported
with the field and the manager and only taken over with `force`.

`force` also adopts an object another tool created (NVIDIA's static device plugin manifest applied
with kubectl): the items other managers put in the lists gpuctl declares (its `device-plugin`
volume beside gpuctl's `kubelet-device-plugins-dir`, for the same host path) become gpuctl's first,
as `kubectl apply --server-side` takes over what the client-side kubectl applied, so the apply
removes them and the object converges to what gpuctl renders. Without `force` they are named,
never removed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call, server_message
from gpuctl.kube.field_ownership import (
    FieldPath,
    adopted_managed_fields,
    foreign_items,
    is_subset,
    path_string,
    undeclared_owned,
    without_items,
)
from gpuctl.kube.raw import JsonDict, call_json, dig

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

FIELD_MANAGER = "gpuctl"
APPLY_PATCH = "application/apply-patch+yaml"
JSON_PATCH = "application/json-patch+json"
# The kinds gpuctl renders whole, so it may adopt them; a Node, say, it only labels.
ADOPTABLE = ("DaemonSet", "ConfigMap", "RuntimeClass")
# kind → (generated API class, method suffix, namespaced): the kinds gpuctl applies.
_KINDS: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("CoreV1Api", "namespace", False),
    "Node": ("CoreV1Api", "node", False),
    "ConfigMap": ("CoreV1Api", "namespaced_config_map", True),
    "ServiceAccount": ("CoreV1Api", "namespaced_service_account", True),
    "DaemonSet": ("AppsV1Api", "namespaced_daemon_set", True),
    "RuntimeClass": ("NodeV1Api", "runtime_class", False),
    "ClusterRole": ("RbacAuthorizationV1Api", "cluster_role", False),
    "ClusterRoleBinding": ("RbacAuthorizationV1Api", "cluster_role_binding", False),
    "Role": ("RbacAuthorizationV1Api", "namespaced_role", True),
    "RoleBinding": ("RbacAuthorizationV1Api", "namespaced_role_binding", True),
}
# Server-set metadata a diff should not show.
_VOLATILE_METADATA = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp")


@dataclass(frozen=True)
class Applied:
    """What happened to one object. `action`: created | configured | adopted | unchanged |
    conflict, or `would create` | `would configure` | `would adopt` in a check. `diff`: live →
    desired, for people. `foreign`: the list items other managers added that gpuctl does not
    declare (`.spec.template.spec.volumes[name="device-plugin"]`), with their managers; adopting
    removes them."""

    kind: str
    namespace: str
    name: str
    action: str
    diff: str = ""
    message: str = ""  # the API server's words for a conflict
    foreign: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def ref(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @property
    def wrote(self) -> bool:
        return self.action in ("created", "configured", "adopted")

    @property
    def foreign_fields(self) -> str:
        """`volumes[...] (kubectl-client-side-apply), ...` for a message."""
        return ", ".join(f"{path} ({', '.join(managers)})" for path, managers in self.foreign)


class Applier:
    """Applies manifests one by one for one run; counts the writes it sent."""

    def __init__(self, api_client: ApiClient, *, dry_run: bool, force_conflicts: bool) -> None:
        self.api_client = api_client
        self.dry_run = dry_run
        self.force_conflicts = force_conflicts
        self.writes = 0

    def _methods(self, manifest: JsonDict) -> tuple[Any, Any, bool]:
        import kubernetes.client

        kind = str(manifest.get("kind"))
        if kind not in _KINDS:
            raise ConfigError(f"gpuctl cannot apply a {kind}", hint="apply it with `kubectl apply -f FILE`")
        api_class, suffix, namespaced = _KINDS[kind]
        api = getattr(kubernetes.client, api_class)(self.api_client)
        return getattr(api, f"read_{suffix}"), getattr(api, f"patch_{suffix}"), namespaced

    def _read(self, read: Any, args: list[str], ref: str) -> JsonDict | None:
        from kubernetes.client.exceptions import ApiException

        try:
            with api_call("get", ref):
                return call_json(read, *args)
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def apply(self, manifest: JsonDict) -> Applied:
        """Apply `manifest` unless the live object already matches it."""
        from kubernetes.client.exceptions import ApiException

        read, patch, namespaced = self._methods(manifest)
        kind, name = str(manifest["kind"]), str(dig(manifest, "metadata", "name"))
        namespace = str(dig(manifest, "metadata", "namespace", default="")) if namespaced else ""
        args = [name, namespace] if namespaced else [name]
        ref = f"{kind.lower()} {namespace + '/' if namespace else ''}{name}"
        live = self._read(read, args, ref)
        found = foreign_items(manifest, live, FIELD_MANAGER) if live and kind in ADOPTABLE else {}
        foreign = tuple((path_string(path), tuple(managers)) for path, managers in found.items())
        adopt = self.force_conflicts and bool(found)
        if live is not None and not adopt and _converged(manifest, live):
            return Applied(kind, namespace, name, "unchanged", foreign=foreign)
        if adopt and live is not None:
            refused = self._adopt(patch, args, live, list(found), ref)
            if refused:
                return Applied(kind, namespace, name, "conflict", message=refused, foreign=foreign)
        kwargs: dict[str, Any] = {"field_manager": FIELD_MANAGER, "_content_type": APPLY_PATCH}
        if self.force_conflicts:
            kwargs["force"] = True
        if self.dry_run:
            kwargs["dry_run"] = "All"
        self.writes += 1
        try:
            with api_call("patch", ref):
                result = call_json(patch, *args, manifest, **kwargs)
        except ApiException as error:
            if error.status == 409:
                message = server_message(error) or f"{error.status} {error.reason}"
                return Applied(kind, namespace, name, "conflict", message=message, foreign=foreign)
            raise
        if adopt and self.dry_run:
            result = without_items(result, list(found))  # the dry-run move of ownership left them
        diff = _diff(live, result, ref)
        verb = "create" if live is None else "adopt" if adopt else "configure"
        if self.dry_run and not diff:
            return Applied(kind, namespace, name, "unchanged", foreign=foreign)  # only ownership moves
        action = f"would {verb}" if self.dry_run else f"{verb.removesuffix('e')}ed"
        return Applied(kind, namespace, name, action, diff, foreign=foreign)

    def _adopt(self, patch: Any, args: list[str], live: JsonDict, items: list[FieldPath], ref: str) -> str:
        """Move `items` to gpuctl's applier in the object's managedFields (one JSON patch, refused
        if the object changed since it was read), so the apply that follows removes them; the
        API server's words when it refused ("" when done)."""
        from kubernetes.client.exceptions import ApiException

        version = dig(live, "metadata", "resourceVersion", default="")
        operations = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": version},
            {
                "op": "replace",
                "path": "/metadata/managedFields",
                "value": adopted_managed_fields(live, items, FIELD_MANAGER),
            },
        ]
        kwargs: dict[str, Any] = {"field_manager": FIELD_MANAGER, "_content_type": JSON_PATCH}
        if self.dry_run:
            kwargs["dry_run"] = "All"
        self.writes += 1
        try:
            with api_call("patch", ref):
                call_json(patch, *args, operations, **kwargs)
        except ApiException as error:
            if error.status not in (409, 422):
                raise
            return f"changed while gpuctl adopted it ({server_message(error) or error.reason}); run it again"
        return ""


def _converged(manifest: JsonDict, live: JsonDict) -> bool:
    """Applying `manifest` would change nothing: every field it sets has its value, and gpuctl
    owns nothing the manifest dropped (the API server would remove that)."""
    return is_subset(manifest, live) and not undeclared_owned(manifest, live, FIELD_MANAGER)


def _comparable(obj: JsonDict | None) -> str:
    if obj is None:
        return ""
    import yaml

    clean = {key: value for key, value in obj.items() if key != "status"}
    metadata = {k: v for k, v in (clean.get("metadata") or {}).items() if k not in _VOLATILE_METADATA}
    clean["metadata"] = metadata
    return str(yaml.safe_dump(clean, sort_keys=True, default_flow_style=False))


def _diff(before: JsonDict | None, after: JsonDict, ref: str) -> str:
    lines = difflib.unified_diff(
        _comparable(before).splitlines(),
        _comparable(after).splitlines(),
        fromfile=f"live {ref}" if before is not None else "/dev/null",
        tofile=f"applied {ref}",
        lineterm="",
    )
    return "\n".join(lines)
