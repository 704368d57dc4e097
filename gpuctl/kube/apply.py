"""Server-side apply with field manager `gpuctl`, writing only what differs.

Each object is read first: when every field gpuctl sets already has gpuctl's value, nothing is
sent, so a second run makes no write at all. Otherwise the object is applied (or, for a check,
applied with dryRun=All and diffed against the live object). A field another manager owns is a
conflict the API server refuses; it is reported with the field and the manager and only taken
over with `force`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError
from gpuctl.kube.client import api_call, server_message
from gpuctl.kube.raw import JsonDict, call_json, dig

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

FIELD_MANAGER = "gpuctl"
APPLY_PATCH = "application/apply-patch+yaml"
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
    """What happened to one object. `action`: created | configured | unchanged | conflict, or
    `would create` | `would configure` in a check. `diff`: live → desired, for people."""

    kind: str
    namespace: str
    name: str
    action: str
    diff: str = ""
    message: str = ""  # the API server's words for a conflict

    @property
    def ref(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"

    @property
    def wrote(self) -> bool:
        return self.action in ("created", "configured")


def is_subset(wanted: Any, live: Any) -> bool:
    """Every field of `wanted` has the same value in `live` (lists element by element)."""
    if isinstance(wanted, dict):
        return isinstance(live, dict) and all(is_subset(v, live.get(k)) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (
            isinstance(live, list)
            and len(wanted) == len(live)
            and all(is_subset(w, item) for w, item in zip(wanted, live, strict=True))
        )
    return bool(wanted == live)


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
        if live is not None and is_subset(manifest, live):
            return Applied(kind, namespace, name, "unchanged")
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
                return Applied(
                    kind,
                    namespace,
                    name,
                    "conflict",
                    message=server_message(error) or f"{error.status} {error.reason}",
                )
            raise
        verb = "create" if live is None else "configure"
        action = f"would {verb}" if self.dry_run else f"{verb}d"
        return Applied(kind, namespace, name, action, _diff(live, result, ref))


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
