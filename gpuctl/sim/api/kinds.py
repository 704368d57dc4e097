"""The resource types the simulated API serves, and the discovery documents that describe them."""

from __future__ import annotations

from collections.abc import Sequence
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
    ResourceType("", "v1", "Pod", "pods", True, ("po",), ("status", "log", "eviction"), categories=("all",)),
    ResourceType("", "v1", "ConfigMap", "configmaps", True, ("cm",)),
    ResourceType("", "v1", "Secret", "secrets", True),
    ResourceType("", "v1", "ServiceAccount", "serviceaccounts", True, ("sa",), ("token",)),
    ResourceType("", "v1", "Service", "services", True, ("svc",), ("status",), categories=("all",)),
    ResourceType("", "v1", "Event", "events", True, ("ev",)),
    ResourceType("apps", "v1", "DaemonSet", "daemonsets", True, ("ds",), ("status",), categories=("all",)),
    ResourceType(
        "apps", "v1", "Deployment", "deployments", True, ("deploy",), ("status",), categories=("all",)
    ),
    ResourceType("apps", "v1", "ReplicaSet", "replicasets", True, ("rs",), ("status",), categories=("all",)),
    ResourceType("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), ("status",)),
    ResourceType("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", False),
    ResourceType("coordination.k8s.io", "v1", "Lease", "leases", True),
    ResourceType("scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", False, ("pc",)),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", False),
    ResourceType("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", False),
    ResourceType("rbac.authorization.k8s.io", "v1", "Role", "roles", True),
    ResourceType("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True),
    # Evaluated under `rbac: enforce` (gpuctl/sim/api/admission.py): gpuctl's node-write fences.
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicy",
        "validatingadmissionpolicies",
        False,
        subresources=("status",),
        categories=("api-extensions",),
    ),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingAdmissionPolicyBinding",
        "validatingadmissionpolicybindings",
        False,
        categories=("api-extensions",),
    ),
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        ("crd", "crds"),
        ("status",),
        categories=("api-extensions",),
    ),
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
    # Kubernetes 1.37 (DRADeviceTaints GA): taints an admin puts on published devices.
    ResourceType(
        "resource.k8s.io",
        "v1",
        "DeviceTaintRule",
        "devicetaintrules",
        False,
        gate="dra-1.37",
        subresources=("status",),
    ),
)

# What deleting a namespace empties, in this order (the runtime is told, it does not look up kinds).
NAMESPACED_KEYS = tuple(dict.fromkeys(r.key for r in RESOURCE_TYPES if r.namespaced))
BY_PATH: dict[tuple[str, str, str], ResourceType] = {
    (r.group, r.version, r.plural): r for r in RESOURCE_TYPES
}


@dataclass(frozen=True)
class Subresource:
    """What discovery says of a subresource: the kind it answers with and its verbs."""

    group: str
    version: str
    kind: str
    verbs: tuple[str, ...]


def subresource(resource: ResourceType, name: str) -> Subresource:
    """A pod's log answers text (kind Pod, get); its eviction takes a policy/v1 Eviction (create);
    any other subresource (status) is the resource's own kind."""
    if name == "log":
        return Subresource("", "v1", "Pod", ("get",))
    if name == "eviction":
        return Subresource("policy", "v1", "Eviction", ("create",))
    if name == "token":  # the TokenRequest API (`kubectl create token`)
        return Subresource("authentication.k8s.io", "v1", "TokenRequest", ("create",))
    return Subresource(resource.group, resource.version, resource.kind, ("get", "patch", "update"))


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    return BY_PATH.get((group, version, plural))


NO_GATES: frozenset[str] = frozenset()


def gates_for(uses_dra: bool, dra_137: bool = False) -> frozenset[str]:
    return frozenset(({"dra"} if uses_dra else set()) | ({"dra-1.37"} if dra_137 else set()))


def gated_off(resource: ResourceType, gates: frozenset[str]) -> bool:
    return bool(resource.gate) and resource.gate not in gates


def ungated(served: Sequence[ResourceType], gates: frozenset[str]) -> Sequence[ResourceType]:
    """The served types without those whose gate is off (resource.k8s.io without DRA)."""
    return [resource for resource in served if not gated_off(resource, gates)]


def api_versions(server_address: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def groups(served: Sequence[ResourceType]) -> dict[str, list[str]]:
    """Group -> its versions, in the order first served (a CRD's storage version first)."""
    found: dict[str, list[str]] = {}
    for resource in served:
        if resource.group and resource.version not in found.setdefault(resource.group, []):
            found[resource.group].append(resource.version)
    return found


def _group(name: str, versions: list[str]) -> Obj:
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(served: Sequence[ResourceType] = RESOURCE_TYPES) -> Obj:
    found = groups(served)
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(name, versions) for name, versions in found.items()],
    }


def api_group(name: str, served: Sequence[ResourceType] = RESOURCE_TYPES) -> Obj | None:
    found = groups(served)
    if name not in found:
        return None
    return dict(_group(name, found[name]), kind="APIGroup", apiVersion="v1")


def api_resource_list(
    group: str, version: str, served: Sequence[ResourceType] = RESOURCE_TYPES
) -> Obj | None:
    entries: list[Obj] = []
    for resource in served:
        if (resource.group, resource.version) != (group, version):
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
            answer = subresource(resource, sub)
            sub_entry: Obj = {
                "name": f"{resource.plural}/{sub}",
                "singularName": "",
                "namespaced": resource.namespaced,
            }
            if (answer.group, answer.version) != (resource.group, resource.version):
                # kubectl drain finds the Eviction API's group/version here (CheckEvictionSupport)
                sub_entry.update(group=answer.group, version=answer.version)
            entries.append(dict(sub_entry, kind=answer.kind, verbs=list(answer.verbs)))
    if not entries:
        return None
    group_version = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    }
