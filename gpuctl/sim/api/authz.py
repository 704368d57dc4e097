"""RBAC as the API server evaluates it (`rbac: enforce`): a request's attributes, read from its
URL as the API server's RequestInfo reads them, are allowed when a rule of a Role or ClusterRole
bound to the requester matches them; nothing else is.

What a real cluster has from its first start is installed too (the API server's bootstrap
policy): cluster-admin bound to system:masters, and discovery, access reviews and /version for
every authenticated user, so a ServiceAccount with only gpuctl's roles can find the API.
Aggregated ClusterRoles are not evaluated (gpuctl's roles do not aggregate).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from gpuctl.sim.api.api_errors import ApiError, forbidden, forbidden_path
from gpuctl.sim.api.messages import Request
from gpuctl.sim.api.tokens import ADMIN, TokenRegistry, UserInfo, bearer_token, still_bound
from gpuctl.sim.runtime.store import Store

Obj = dict[str, Any]
RBAC_GROUP = "rbac.authorization.k8s.io"
ROLES, CLUSTER_ROLES = f"roles.{RBAC_GROUP}", f"clusterroles.{RBAC_GROUP}"
ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS = f"rolebindings.{RBAC_GROUP}", f"clusterrolebindings.{RBAC_GROUP}"
PRIVILEGED_GROUP = "system:masters"  # allowed everything before RBAC is asked, as kube-apiserver does
_SPECIAL_VERBS = ("proxy", "watch")  # a path segment that is the verb (/api/v1/watch/...)
_NAMESPACE_SUBRESOURCES = ("status", "finalize")
_VERB_OF_METHOD = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch"}


@dataclass(frozen=True)
class Attributes:
    """What the authorizer is asked: a resource request (verb, group, resource, subresource,
    namespace, name) or a non-resource one (verb, path)."""

    verb: str
    resource_request: bool
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str  # "RBAC: allowed by ..." or why a binding counted for nothing; "" otherwise


def request_attributes(request: Request) -> Attributes:
    """The attributes of an HTTP request, as the API server's RequestInfoFactory reads them
    (k8s.io/apiserver pkg/endpoints/request/requestinfo.go; tests/unit/test_rbac_request_attributes.py
    holds its test table)."""
    url = urlsplit(request.target)
    parts = [part for part in url.path.split("/") if part]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:  # the path as sent: a rule for `/version/` is not one for `/version`
        return Attributes(verb=request.method.lower(), resource_request=False, path=url.path or "/")
    # The query as the API server decodes it: the first of repeated parameters counts.
    query = {key: values[0] for key, values in parse_qs(url.query, keep_blank_values=True).items()}
    verb = _VERB_OF_METHOD.get(request.method, request.method.lower())
    if rest[0] in _SPECIAL_VERBS and len(rest) > 1:
        verb, rest = rest[0], rest[1:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1 and not (len(rest) == 2 and verb == "patch"):
        # A server-side apply creating a namespace PATCHes /namespaces/NAME: no namespace of its own.
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    if verb == "proxy":  # the rest of a proxied path is the target's, not a subresource
        rest = rest[:2]
    resource, name, subresource = [*rest, "", "", ""][:3]
    if not name and verb == "get":
        verb = "watch" if _query_bool(query.get("watch")) else "list"
        name = _name_from_field_selector(query.get("fieldSelector", ""))
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(verb, True, group, resource, subresource, namespace, name)


def _query_bool(value: str | None) -> bool:
    """A boolean query parameter as kube's conversion reads it (Convert_Slice_string_To_bool):
    only an absent one, `0` and `false` (any case) are false; `watch=` and `watch=yes` are true."""
    return value is not None and value != "0" and value.lower() != "false"


def _name_from_field_selector(selector: str) -> str:
    """A list or watch of one object by `metadata.name=NAME` is authorised for that name; a selector
    that does not parse (a term without an operator) names nothing, nor does a name that cannot
    be a path segment."""
    terms = [term.strip() for term in selector.split(",")] if selector else []
    if any(not any(operator in term for operator in ("=", "!=")) for term in terms):
        return ""
    for term in terms:
        if "!=" in term:
            continue
        field, _, value = term.replace("==", "=").partition("=")
        if field.strip() == "metadata.name" and _path_segment_name(value.strip()):
            return value.strip()
    return ""


def _path_segment_name(name: str) -> bool:
    """k8s.io/apimachinery path.IsValidPathSegmentName."""
    return name not in ("", ".", "..") and "/" not in name and "%" not in name


def review_attributes(spec: Obj) -> Attributes:
    """The attributes a SelfSubjectAccessReview asks about."""
    if resource := spec.get("resourceAttributes"):
        return Attributes(
            verb=str(resource.get("verb") or ""),
            resource_request=True,
            api_group=str(resource.get("group") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            namespace=str(resource.get("namespace") or ""),
            name=str(resource.get("name") or ""),
        )
    path = spec.get("nonResourceAttributes") or {}
    return Attributes(
        verb=str(path.get("verb") or ""), resource_request=False, path=str(path.get("path") or "")
    )


# -- evaluation --------------------------------------------------------------------------------
def authorize(store: Store, user: UserInfo, attributes: Attributes) -> Decision:
    """Allowed when the user is a cluster admin or a bound rule matches (caller holds the lock)."""
    if PRIVILEGED_GROUP in user.groups:
        return Decision(True, "")
    missing: list[str] = []
    for binding, roles in _bindings(store, attributes.namespace):
        subject = _subject_of(binding, user)
        if subject is None:
            continue
        role = _role(store, binding, roles, missing)
        if any(rule_allows(attributes, rule) for rule in (role or {}).get("rules") or []):
            return Decision(True, f"RBAC: allowed by {_describe(binding, subject)}")
    errors = missing[0] if len(missing) == 1 else f"[{', '.join(missing)}]"
    return Decision(False, f"RBAC: {errors}" if missing else "")


def _bindings(store: Store, namespace: str) -> Iterator[tuple[Obj, str]]:
    for binding in store.items(CLUSTER_ROLE_BINDINGS):
        yield binding, CLUSTER_ROLES
    if namespace:
        for binding in store.items(ROLE_BINDINGS, namespace):
            yield binding, ROLES if binding.get("roleRef", {}).get("kind") == "Role" else CLUSTER_ROLES


def _subject_of(binding: Obj, user: UserInfo) -> Obj | None:
    """The first subject of `binding` that is `user` (a ServiceAccount subject without a namespace
    is one in the binding's)."""
    binding_namespace = binding["metadata"].get("namespace", "")
    subjects: list[Obj] = binding.get("subjects") or []
    for subject in subjects:
        kind, name = subject.get("kind"), subject.get("name")
        if kind == "ServiceAccount":
            namespace = subject.get("namespace") or binding_namespace
            if user.name == f"system:serviceaccount:{namespace}:{name}":
                return subject
        elif (kind == "User" and name == user.name) or (kind == "Group" and name in user.groups):
            return subject
    return None


def _role(store: Store, binding: Obj, roles: str, missing: list[str]) -> Obj | None:
    name = binding.get("roleRef", {}).get("name", "")
    namespace = binding["metadata"].get("namespace", "") if roles == ROLES else ""
    role = store.get(roles, namespace, name)
    if role is None:
        singular = "role" if roles == ROLES else "clusterrole"
        missing.append(f'{singular}.{RBAC_GROUP} "{name}" not found')
    return role


def _describe(binding: Obj, subject: Obj) -> str:
    """The allowing binding, in the RBAC authorizer's words."""
    metadata, ref = binding["metadata"], binding.get("roleRef", {})
    namespace = metadata.get("namespace", "")
    kind, name = ("RoleBinding", f"{metadata['name']}/{namespace}")
    if not namespace:
        kind, name = "ClusterRoleBinding", metadata["name"]
    who = subject["name"]
    if subject["kind"] == "ServiceAccount":
        who += "/" + (subject.get("namespace") or namespace)
    return f'{kind} "{name}" of {ref.get("kind")} "{ref.get("name")}" to {subject["kind"]} "{who}"'


def rule_allows(attributes: Attributes, rule: Obj) -> bool:
    """rbac/v1 PolicyRule matching (k8s.io/kubernetes/pkg/apis/rbac/v1 helpers)."""
    if not _matches(rule.get("verbs"), attributes.verb):
        return False
    if not attributes.resource_request:
        return any(
            url in ("*", attributes.path) or (url.endswith("*") and attributes.path.startswith(url[:-1]))
            for url in rule.get("nonResourceURLs") or []
        )
    names = rule.get("resourceNames") or []
    return (
        _matches(rule.get("apiGroups"), attributes.api_group)
        and _resource_matches(rule.get("resources") or [], attributes)
        and (not names or attributes.name in names)
    )


def _matches(allowed: Sequence[str] | None, value: str) -> bool:
    return any(item in ("*", value) for item in allowed or [])


def _resource_matches(resources: Sequence[str], attributes: Attributes) -> bool:
    wanted = attributes.resource + (f"/{attributes.subresource}" if attributes.subresource else "")
    return any(
        resource in ("*", wanted)
        or (bool(attributes.subresource) and resource == f"*/{attributes.subresource}")
        for resource in resources
    )


# -- the bootstrap policy ----------------------------------------------------------------------
_DISCOVERY_URLS = (
    "/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*",
    "/readyz", "/version", "/version/",
)  # fmt: skip
_PUBLIC_INFO_URLS = ("/healthz", "/livez", "/readyz", "/version", "/version/")
# /metrics is no public information: kube-apiserver grants it through system:monitoring (bound to
# the group of that name) or a role of the cluster's own with a nonResourceURLs rule.
_MONITORING_URLS = (
    "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*",
)  # fmt: skip
_SELF_REVIEWS = (
    {
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    },
    {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"]},
)
BOOTSTRAP_ROLES: dict[str, list[Obj]] = {
    "cluster-admin": [
        {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
        {"nonResourceURLs": ["*"], "verbs": ["*"]},
    ],
    "system:discovery": [{"nonResourceURLs": list(_DISCOVERY_URLS), "verbs": ["get"]}],
    "system:basic-user": [dict(rule, verbs=["create"]) for rule in _SELF_REVIEWS],
    "system:public-info-viewer": [{"nonResourceURLs": list(_PUBLIC_INFO_URLS), "verbs": ["get"]}],
    "system:monitoring": [{"nonResourceURLs": list(_MONITORING_URLS), "verbs": ["get"]}],
}
BOOTSTRAP_BINDINGS: dict[str, tuple[str, ...]] = {
    "cluster-admin": (PRIVILEGED_GROUP,),
    "system:discovery": ("system:authenticated",),
    "system:basic-user": ("system:authenticated",),
    "system:public-info-viewer": ("system:authenticated", "system:unauthenticated"),
    "system:monitoring": ("system:monitoring",),
}
_BOOTSTRAP_METADATA = {
    "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
    "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
}


def install_bootstrap_policy(store: Store) -> None:
    """The ClusterRoles and ClusterRoleBindings a new cluster has (kube-apiserver's
    rbac/bootstrap-roles start-up hook), where absent."""
    with store.lock:
        for name, rules in BOOTSTRAP_ROLES.items():
            if store.get(CLUSTER_ROLES, "", name) is None:
                store.add(CLUSTER_ROLES, _bootstrap("ClusterRole", name, rules=rules))
        for name, groups in BOOTSTRAP_BINDINGS.items():
            if store.get(CLUSTER_ROLE_BINDINGS, "", name) is None:
                subjects = [{"kind": "Group", "apiGroup": RBAC_GROUP, "name": group} for group in groups]
                ref = {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name}
                store.add(
                    CLUSTER_ROLE_BINDINGS,
                    _bootstrap("ClusterRoleBinding", name, roleRef=ref, subjects=subjects),
                )


def _bootstrap(kind: str, name: str, **fields: Any) -> Obj:
    metadata = {"name": name, **{key: dict(value) for key, value in _BOOTSTRAP_METADATA.items()}}
    return {"kind": kind, "apiVersion": f"{RBAC_GROUP}/v1", "metadata": metadata, **fields}


class AccessControl:
    """Authentication and authorisation of the API's requests, for one sim: with `enforce`, RBAC
    decides; without it every authenticated request is allowed (the scenario's `forbidden`
    list is the router's, in both modes)."""

    def __init__(self, store: Store, tokens: TokenRegistry, *, enforce: bool) -> None:
        self.store = store
        self.tokens = tokens
        self.enforce = enforce
        if enforce:
            install_bootstrap_policy(store)

    def user(self, request: Request) -> UserInfo:
        """Who sent `request`; 401 for a token that names no one (any more). Without a gate in
        front (an in-process caller with no Authorization header), the admin."""
        token = bearer_token(request.header("authorization"))
        if not token and not self.enforce:
            return ADMIN
        user = self.tokens.user(token)
        with self.store.lock:
            if user is None or not still_bound(self.store, user):
                raise ApiError(401, "Unauthorized", "Unauthorized")
        return user

    def authorise(self, request: Request, user: UserInfo) -> None:
        """403 in the API server's words for a request RBAC does not allow (under enforce)."""
        if not self.enforce:
            return
        attributes = request_attributes(request)
        with self.store.lock:
            decision = authorize(self.store, user, attributes)
        if decision.allowed:
            return
        if not attributes.resource_request:
            raise forbidden_path(attributes.verb, attributes.path, user=user.name, reason=decision.reason)
        raise forbidden(
            attributes.verb,
            attributes.resource + (f"/{attributes.subresource}" if attributes.subresource else ""),
            attributes.api_group,
            attributes.namespace,
            user=user.name,
            name=attributes.name,
            reason=decision.reason,
        )

    def review(self, spec: Obj, user: UserInfo, denied_by_list: bool) -> Obj:
        """The status of a SelfSubjectAccessReview: the scenario's `forbidden` list denies; under
        enforce RBAC decides the rest, otherwise everything else is allowed."""
        if denied_by_list:
            return {"allowed": False, "denied": True}
        if not self.enforce:
            return {"allowed": True}
        with self.store.lock:
            decision = authorize(self.store, user, review_attributes(spec))
        status: Obj = {"allowed": decision.allowed}
        if decision.reason:
            status["reason"] = decision.reason
        return status
