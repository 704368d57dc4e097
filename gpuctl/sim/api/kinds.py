"""The resource types the simulated API serves, and the discovery documents that describe them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]
ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = tuple(ALL_VERBS)
    categories: tuple[str, ...] = ()
    gate: str = ""  # served only when the scenario turns this on ("dra": resource.k8s.io)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Store key: the plural, qualified by the group outside the core group."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCE_TYPES = (
    ResourceType(
        "",
        "v1",
        "Namespace",
        "namespaces",
        False,
        ("ns",),
        ("status",),
        ("create", "delete", "get", "list", "patch", "update", "watch"),
    ),
    ResourceType("", "v1", "Node", "nodes", False, ("no",), ("status",)),
    ResourceType("", "v1", "Pod", "pods", True, ("po",), ("status", "log"), categories=("all",)),
    ResourceType("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
    ResourceType("", "v1", "Secret", "secrets", True),
    ResourceType("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",)),
    ResourceType("", "v1", "Service", "services", True, ("svc",), ("status",), categories=("all",)),
    ResourceType("", "v1", "Event", "events", True, ("ev",)),
    ResourceType("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",), ("status",), categories=("all",)),
    ResourceType(
        "apps", "v1", "Deployment", "deployments", True, ("deploy",), ("status",), categories=("all",)
    ),
    ResourceType("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", True),
    ResourceType("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",)),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    ResourceType("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    ResourceType("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    ResourceType(
        "authorization.k8s.io",
        "v1",
        "SelfSubjectAccessReview",
        "selfsubjectaccessreviews",
        False,
        verbs=("create",),
    ),
    *(
        ResourceType("resource.k8s.io", version, kind, plural, namespaced, gate="dra", subresources=sub)
        for version in ("v1", "v1beta2")  # v1 first: the preferred version
        for kind, plural, namespaced, sub in (
            ("DeviceClass", "deviceclasses", False, ()),
            ("ResourceSlice", "resourceslices", False, ()),
            ("ResourceClaim", "resourceclaims", True, ("status",)),
            ("ResourceClaimTemplate", "resourceclaimtemplates", True, ()),
        )
    ),
)
NO_GATES: frozenset[str] = frozenset()

# What deleting a namespace empties, in this order (the runtime is told, it does not look up kinds).
NAMESPACED_KEYS = tuple(dict.fromkeys(r.key for r in RESOURCE_TYPES if r.namespaced))
BY_PATH: dict[tuple[str, str, str], ResourceType] = {
    (r.group, r.version, r.plural): r for r in RESOURCE_TYPES
}
GROUPS: dict[str, list[str]] = {}
for _resource in RESOURCE_TYPES:
    if _resource.group and _resource.version not in GROUPS.setdefault(_resource.group, []):
        GROUPS[_resource.group].append(_resource.version)


def lookup(group: str, version: str, plural: str, gates: frozenset[str] = NO_GATES) -> ResourceType | None:
    resource = BY_PATH.get((group, version, plural))
    return resource if resource is not None and (not resource.gate or resource.gate in gates) else None


def _served(name: str, gates: frozenset[str]) -> bool:
    return any(r.group == name and (not r.gate or r.gate in gates) for r in RESOURCE_TYPES)


def api_versions(server_address: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group(name: str) -> Obj:
    versions = [{"groupVersion": f"{name}/{v}", "version": v} for v in GROUPS[name]]
    return {"name": name, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(gates: frozenset[str] = NO_GATES) -> Obj:
    groups = [_group(name) for name in GROUPS if _served(name, gates)]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(name: str, gates: frozenset[str] = NO_GATES) -> Obj | None:
    if name not in GROUPS or not _served(name, gates):
        return None
    return dict(_group(name), kind="APIGroup", apiVersion="v1")


def api_resource_list(group: str, version: str, gates: frozenset[str] = NO_GATES) -> Obj | None:
    entries: list[Obj] = []
    for resource in RESOURCE_TYPES:
        if (resource.group, resource.version) != (group, version) or (resource.gate not in ("", *gates)):
            continue
        entry: Obj = {
            "name": resource.plural,
            "singularName": resource.kind.lower(),
            "namespaced": resource.namespaced,
            "kind": resource.kind,
            "verbs": list(resource.verbs),
        }
        if resource.short_names:
            entry["shortNames"] = list(resource.short_names)
        if resource.categories:
            entry["categories"] = list(resource.categories)
        entries.append(entry)
        for sub in resource.subresources:
            verbs = ["get"] if sub == "log" else ["get", "patch", "update"]
            entries.append(
                {
                    "name": f"{resource.plural}/{sub}",
                    "singularName": "",
                    "namespaced": resource.namespaced,
                    "kind": resource.kind if sub != "log" else "Pod",
                    "verbs": verbs,
                }
            )
    if not entries:
        return None
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    }
