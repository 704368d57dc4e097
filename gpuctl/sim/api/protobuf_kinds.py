"""Field tables for the protobuf decoder (gpuctl.sim.api.protobuf): field number -> JSON name and type.

Numbers are those of k8s.io/api and k8s.io/apimachinery `generated.proto`; `keep` marks a Go field
without `omitempty` or a pointer, whose zero value still shows in the JSON form.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # string | bytes | int | bool | time | fields_v1 | map | bytes_map | message
    repeated: bool = False
    # A Go field without omitempty, or a pointer: a zero scalar still shows in JSON, and a list
    # missing from the wire shows as null (Go's nil slice).
    keep: bool = False
    message: Message | None = None


@dataclass(frozen=True)
class Message:
    name: str
    fields: dict[int, Field] = field(default_factory=dict)


def _string(name: str, *, keep: bool = False) -> Field:
    return Field(name, "string", keep=keep)


def _strings(name: str, *, keep: bool = False) -> Field:
    return Field(name, "string", repeated=True, keep=keep)


def _int(name: str, *, keep: bool = False) -> Field:
    return Field(name, "int", keep=keep)


def _bool(name: str, *, keep: bool = False) -> Field:
    return Field(name, "bool", keep=keep)


def _message(name: str, message: Message, *, repeated: bool = False, keep: bool = False) -> Field:
    return Field(name, "message", repeated=repeated, keep=keep, message=message)


def _map(name: str, kind: str = "map") -> Field:
    return Field(name, kind)


# k8s.io/apimachinery/pkg/apis/meta/v1
OWNER_REFERENCE = Message(
    "OwnerReference",
    {
        5: _string("apiVersion", keep=True),
        1: _string("kind", keep=True),
        3: _string("name", keep=True),
        4: _string("uid", keep=True),
        6: _bool("controller", keep=True),
        7: _bool("blockOwnerDeletion", keep=True),
    },
)
MANAGED_FIELDS_ENTRY = Message(
    "ManagedFieldsEntry",
    {
        1: _string("manager"),
        2: _string("operation"),
        3: _string("apiVersion"),
        4: Field("time", "time"),
        6: _string("fieldsType"),
        7: Field("fieldsV1", "fields_v1"),
        8: _string("subresource"),
    },
)
OBJECT_META = Message(
    "ObjectMeta",
    {
        1: _string("name"),
        2: _string("generateName"),
        3: _string("namespace"),
        4: _string("selfLink"),
        5: _string("uid"),
        6: _string("resourceVersion"),
        7: _int("generation"),
        8: Field("creationTimestamp", "time"),
        9: Field("deletionTimestamp", "time"),
        10: _int("deletionGracePeriodSeconds", keep=True),
        11: _map("labels"),
        12: _map("annotations"),
        13: _message("ownerReferences", OWNER_REFERENCE, repeated=True),
        14: _strings("finalizers"),
        17: _message("managedFields", MANAGED_FIELDS_ENTRY, repeated=True),
    },
)
LABEL_SELECTOR_REQUIREMENT = Message(
    "LabelSelectorRequirement",
    {1: _string("key", keep=True), 2: _string("operator", keep=True), 3: _strings("values")},
)
LABEL_SELECTOR = Message(
    "LabelSelector",
    {1: _map("matchLabels"), 2: _message("matchExpressions", LABEL_SELECTOR_REQUIREMENT, repeated=True)},
)
FIELD_SELECTOR_REQUIREMENT = Message(
    "FieldSelectorRequirement",
    {1: _string("key", keep=True), 2: _string("operator", keep=True), 3: _strings("values")},
)
PRECONDITIONS = Message(
    "Preconditions", {1: _string("uid", keep=True), 2: _string("resourceVersion", keep=True)}
)
DELETE_OPTIONS = Message(
    "DeleteOptions",
    {
        1: _int("gracePeriodSeconds", keep=True),
        2: _message("preconditions", PRECONDITIONS),
        3: _bool("orphanDependents", keep=True),
        4: _string("propagationPolicy", keep=True),
        5: _strings("dryRun"),
        6: _bool("ignoreStoreReadErrorWithClusterBreakingPotential", keep=True),
    },
)

# k8s.io/api/core/v1
LOCAL_OBJECT_REFERENCE = Message("LocalObjectReference", {1: _string("name")})
OBJECT_REFERENCE = Message(
    "ObjectReference",
    {
        1: _string("kind"),
        2: _string("namespace"),
        3: _string("name"),
        4: _string("uid"),
        5: _string("apiVersion"),
        6: _string("resourceVersion"),
        7: _string("fieldPath"),
    },
)
NAMESPACE_CONDITION = Message(
    "NamespaceCondition",
    {
        1: _string("type", keep=True),
        2: _string("status", keep=True),
        4: Field("lastTransitionTime", "time"),
        5: _string("reason"),
        6: _string("message"),
    },
)
NAMESPACE = Message(
    "Namespace",
    {
        1: _message("metadata", OBJECT_META),
        2: _message("spec", Message("NamespaceSpec", {1: _strings("finalizers")})),
        3: _message(
            "status",
            Message(
                "NamespaceStatus",
                {1: _string("phase"), 2: _message("conditions", NAMESPACE_CONDITION, repeated=True)},
            ),
        ),
    },
)
CONFIG_MAP = Message(
    "ConfigMap",
    {
        1: _message("metadata", OBJECT_META),
        4: _bool("immutable", keep=True),
        2: _map("data"),
        3: _map("binaryData", "bytes_map"),
    },
)
SECRET = Message(
    "Secret",
    {
        1: _message("metadata", OBJECT_META),
        5: _bool("immutable", keep=True),
        2: _map("data", "bytes_map"),
        4: _map("stringData"),
        3: _string("type"),
    },
)
SERVICE_ACCOUNT = Message(
    "ServiceAccount",
    {
        1: _message("metadata", OBJECT_META),
        2: _message("secrets", OBJECT_REFERENCE, repeated=True),
        3: _message("imagePullSecrets", LOCAL_OBJECT_REFERENCE, repeated=True),
        4: _bool("automountServiceAccountToken", keep=True),
    },
)

# k8s.io/api/authorization/v1
RESOURCE_ATTRIBUTES = Message(
    "ResourceAttributes",
    {
        1: _string("namespace"),
        2: _string("verb"),
        3: _string("group"),
        4: _string("version"),
        5: _string("resource"),
        6: _string("subresource"),
        7: _string("name"),
        8: _message(
            "fieldSelector",
            Message(
                "FieldSelectorAttributes",
                {
                    1: _string("rawSelector"),
                    2: _message("requirements", FIELD_SELECTOR_REQUIREMENT, repeated=True),
                },
            ),
        ),
        9: _message(
            "labelSelector",
            Message(
                "LabelSelectorAttributes",
                {
                    1: _string("rawSelector"),
                    2: _message("requirements", LABEL_SELECTOR_REQUIREMENT, repeated=True),
                },
            ),
        ),
    },
)
SELF_SUBJECT_ACCESS_REVIEW = Message(
    "SelfSubjectAccessReview",
    {
        1: _message("metadata", OBJECT_META),
        2: _message(
            "spec",
            Message(
                "SelfSubjectAccessReviewSpec",
                {
                    1: _message("resourceAttributes", RESOURCE_ATTRIBUTES),
                    2: _message(
                        "nonResourceAttributes",
                        Message("NonResourceAttributes", {1: _string("path"), 2: _string("verb")}),
                    ),
                },
            ),
        ),
        3: _message(
            "status",
            Message(
                "SubjectAccessReviewStatus",
                {
                    1: _bool("allowed", keep=True),
                    4: _bool("denied"),
                    2: _string("reason"),
                    3: _string("evaluationError"),
                },
            ),
        ),
    },
)

# k8s.io/api/rbac/v1
POLICY_RULE = Message(
    "PolicyRule",
    {
        1: _strings("verbs", keep=True),
        2: _strings("apiGroups"),
        3: _strings("resources"),
        4: _strings("resourceNames"),
        5: _strings("nonResourceURLs"),
    },
)
SUBJECT = Message(
    "Subject",
    {
        1: _string("kind", keep=True),
        2: _string("apiGroup"),
        3: _string("name", keep=True),
        4: _string("namespace"),
    },
)
ROLE_REF = Message(
    "RoleRef",
    {1: _string("apiGroup", keep=True), 2: _string("kind", keep=True), 3: _string("name", keep=True)},
)
ROLE = Message(
    "Role",
    {1: _message("metadata", OBJECT_META), 2: _message("rules", POLICY_RULE, repeated=True, keep=True)},
)
CLUSTER_ROLE = Message(
    "ClusterRole",
    {
        1: _message("metadata", OBJECT_META),
        2: _message("rules", POLICY_RULE, repeated=True, keep=True),
        3: _message(
            "aggregationRule",
            Message("AggregationRule", {1: _message("clusterRoleSelectors", LABEL_SELECTOR, repeated=True)}),
        ),
    },
)
_BINDING_FIELDS = {
    1: _message("metadata", OBJECT_META),
    2: _message("subjects", SUBJECT, repeated=True),
    3: _message("roleRef", ROLE_REF),
}
ROLE_BINDING = Message("RoleBinding", _BINDING_FIELDS)
CLUSTER_ROLE_BINDING = Message("ClusterRoleBinding", _BINDING_FIELDS)

# k8s.io/api/scheduling/v1
PRIORITY_CLASS = Message(
    "PriorityClass",
    {
        1: _message("metadata", OBJECT_META),
        2: _int("value", keep=True),
        3: _bool("globalDefault"),
        4: _string("description"),
        5: _string("preemptionPolicy", keep=True),
    },
)

# k8s.io/api/policy/v1 (kubectl drain's typed client posts it as protobuf)
EVICTION = Message(
    "Eviction", {1: _message("metadata", OBJECT_META), 2: _message("deleteOptions", DELETE_OPTIONS)}
)

# k8s.io/api/authentication/v1 (`kubectl create token` posts it as protobuf)
TOKEN_REQUEST = Message(
    "TokenRequest",
    {
        1: _message("metadata", OBJECT_META),
        2: _message(
            "spec",
            Message(
                "TokenRequestSpec",
                {
                    1: _strings("audiences", keep=True),
                    4: _int("expirationSeconds", keep=True),
                    3: _message(
                        "boundObjectRef",
                        Message(
                            "BoundObjectReference",
                            {
                                1: _string("kind"),
                                2: _string("apiVersion"),
                                3: _string("name"),
                                4: _string("uid"),
                            },
                        ),
                        keep=True,
                    ),
                },
            ),
        ),
        3: _message(
            "status",
            Message(
                "TokenRequestStatus",
                {1: _string("token", keep=True), 2: Field("expirationTimestamp", "time")},
            ),
        ),
    },
)

# (API group, kind) -> top-level message. Deployment is left out on purpose: its pod template is
# most of core/v1, and a partial table would silently drop fields; it gets 415 instead.
KINDS: dict[tuple[str, str], Message] = {
    ("", "Namespace"): NAMESPACE,
    ("", "ConfigMap"): CONFIG_MAP,
    ("", "Secret"): SECRET,
    ("", "ServiceAccount"): SERVICE_ACCOUNT,
    ("", "DeleteOptions"): DELETE_OPTIONS,
    ("meta.k8s.io", "DeleteOptions"): DELETE_OPTIONS,
    ("authorization.k8s.io", "SelfSubjectAccessReview"): SELF_SUBJECT_ACCESS_REVIEW,
    ("rbac.authorization.k8s.io", "Role"): ROLE,
    ("rbac.authorization.k8s.io", "ClusterRole"): CLUSTER_ROLE,
    ("rbac.authorization.k8s.io", "RoleBinding"): ROLE_BINDING,
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): CLUSTER_ROLE_BINDING,
    ("scheduling.k8s.io", "PriorityClass"): PRIORITY_CLASS,
    ("policy", "Eviction"): EVICTION,
    ("authentication.k8s.io", "TokenRequest"): TOKEN_REQUEST,
}

# k8s.io/apimachinery/pkg/runtime: the TypeMeta inside the runtime.Unknown envelope.
TYPE_META = Message("TypeMeta", {1: _string("apiVersion"), 2: _string("kind")})
