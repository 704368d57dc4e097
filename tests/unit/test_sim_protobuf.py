"""The protobuf request-body decoder of the simulated cluster (kubectl's typed-client writes), no HTTP.

CAPTURED holds the exact bodies kubectl v1.37.1 sent for each command (logged from the request at
the simulated server, as hex), each with the JSON body kubectl v1.32.x sent for the same command
(it still used JSON for most of them; for the two bindings v1.32 also sends protobuf, so their
expected dicts are written out). Fields kubectl never sends are built with the small encoder below.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuctl.sim.api import kinds
from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.protobuf import ProtobufError, UnsupportedKind, decode_body, is_protobuf, request_object
from tests.protobuf_encoder import entry, envelope, ld, varint, vi

Obj = dict[str, Any]

# (command, body as hex, the JSON-shaped dict it must decode to)
CAPTURED: list[tuple[str, str, Obj]] = [
    (
        "kubectl create namespace ns1",
        (
            "6b3873000a0f0a02763112094e616d657370616365121b0a130a036e733112001a0022002a0032003800420012001a02"
            "0a001a002200"
        ),
        {
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {"name": "ns1", "creationTimestamp": None},
            "spec": {},
            "status": {},
        },
    ),
    (
        "kubectl create configmap cm1 --from-literal=a=1 --from-file=blob=bin.dat",
        (
            "6b3873000a0f0a0276311209436f6e6669674d6170122b0a130a03636d3112001a0022002a0032003800420012060a01"
            "611201311a0c0a04626c6f6212040001feff1a002200"
        ),
        {
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {"name": "cm1", "creationTimestamp": None},
            "data": {"a": "1"},
            "binaryData": {"blob": "AAH+/w=="},
        },
    ),
    (
        "kubectl create secret generic s1 --from-literal=user=admin --type=example.com/t",
        (
            "6b3873000a0c0a027631120653656372657412320a120a02733112001a0022002a00320038004200120d0a0475736572"
            "120561646d696e1a0d6578616d706c652e636f6d2f741a002200"
        ),
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "s1", "creationTimestamp": None},
            "data": {"user": "YWRtaW4="},
            "type": "example.com/t",
        },
    ),
    (
        "kubectl create secret docker-registry reg1 --docker-server=nvcr.io"
        " --docker-username='$oauthtoken' --docker-password=pw --docker-email=a@b.c",
        (
            "6b3873000a0c0a027631120653656372657412bc010a140a047265673112001a0022002a003200380042001283010a11"
            "2e646f636b6572636f6e6669676a736f6e126e7b226175746873223a7b226e7663722e696f223a7b22757365726e616d"
            "65223a22246f61757468746f6b656e222c2270617373776f7264223a227077222c22656d61696c223a226140622e6322"
            "2c2261757468223a224a4739686458526f644739725a5734366348633d227d7d7d1a1e6b756265726e657465732e696f"
            "2f646f636b6572636f6e6669676a736f6e1a002200"
        ),
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": "reg1", "creationTimestamp": None},
            "data": {
                ".dockerconfigjson": (
                    "eyJhdXRocyI6eyJudmNyLmlvIjp7InVzZXJuYW1lIjoiJG9hdXRodG9rZW4iLCJwYXNzd29yZCI6InB3"
                    "IiwiZW1haWwiOiJhQGIuYyIsImF1dGgiOiJKRzloZFhSb2RHOXJaVzQ2Y0hjPSJ9fX0="
                ),
            },
            "type": "kubernetes.io/dockerconfigjson",
        },
    ),
    (
        "kubectl create serviceaccount sa1 -n ns1",
        (
            "6b3873000a140a027631120e536572766963654163636f756e7412180a160a0373613112001a036e733122002a003200"
            "380042001a002200"
        ),
        {
            "kind": "ServiceAccount",
            "apiVersion": "v1",
            "metadata": {"name": "sa1", "namespace": "ns1", "creationTimestamp": None},
        },
    ),
    (
        "kubectl create role r1 --verb=get,list --resource=pods,deployments.apps --resource-name=x",
        (
            "6b3873000a240a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311204526f6c65124f0a120a02"
            "723112001a0022002a0032003800420012160a036765740a046c69737412001a04706f647322017812210a036765740a"
            "046c6973741204617070731a0b6465706c6f796d656e74732201781a002200"
        ),
        {
            "kind": "Role",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "r1", "creationTimestamp": None},
            "rules": [
                {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["x"]},
                {
                    "verbs": ["get", "list"],
                    "apiGroups": ["apps"],
                    "resources": ["deployments"],
                    "resourceNames": ["x"],
                },
            ],
        },
    ),
    (
        "kubectl create rolebinding rb1 --role=r1 --user=alice --group=devs --serviceaccount=default:sa1",
        (
            "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b526f6c6542696e64696e"
            "6712b6010a130a0372623112001a0022002a00320038004200122a0a04557365721219726261632e617574686f72697a"
            "6174696f6e2e6b38732e696f1a05616c6963652200122a0a0547726f75701219726261632e617574686f72697a617469"
            "6f6e2e6b38732e696f1a0464657673220012200a0e536572766963654163636f756e7412001a03736131220764656661"
            "756c741a250a19726261632e617574686f72697a6174696f6e2e6b38732e696f1204526f6c651a0272311a002200"
        ),
        {
            "kind": "RoleBinding",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "rb1", "creationTimestamp": None},
            "subjects": [
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
                {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "devs"},
                {"kind": "ServiceAccount", "name": "sa1", "namespace": "default"},
            ],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r1"},
        },
    ),
    (
        "kubectl create clusterrole cr1 --verb=get --resource=nodes --non-resource-url=/healthz",
        (
            "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c"
            "6512360a130a0363723112001a0022002a00320038004200120e0a0367657412001a056e6f646573120f0a036765742a"
            "082f6865616c74687a1a002200"
        ),
        {
            "kind": "ClusterRole",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "cr1", "creationTimestamp": None},
            "rules": [
                {"verbs": ["get"], "apiGroups": [""], "resources": ["nodes"]},
                {"verbs": ["get"], "nonResourceURLs": ["/healthz"]},
            ],
        },
    ),
    (
        'kubectl create clusterrole cra1 --aggregation-rule="rbac.example.com/aggregate=true"',
        (
            "6b3873000a2b0a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f7631120b436c7573746572526f6c"
            "65123e0a140a046372613112001a0022002a003200380042001a260a240a220a1a726261632e6578616d706c652e636f"
            "6d2f6167677265676174651204747275651a002200"
        ),
        {
            "kind": "ClusterRole",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "cra1", "creationTimestamp": None},
            "rules": None,
            "aggregationRule": {
                "clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate": "true"}}]
            },
        },
    ),
    (
        "kubectl create clusterrolebinding crb1 --clusterrole=cr1 --user=bob --group=g"
        " --serviceaccount=kube-system:x",
        (
            "6b3873000a320a1c726261632e617574686f72697a6174696f6e2e6b38732e696f2f76311212436c7573746572526f6c"
            "6542696e64696e6712bc010a140a046372623112001a0022002a0032003800420012280a04557365721219726261632e"
            "617574686f72697a6174696f6e2e6b38732e696f1a03626f62220012270a0547726f75701219726261632e617574686f"
            "72697a6174696f6e2e6b38732e696f1a0167220012220a0e536572766963654163636f756e7412001a0178220b6b7562"
            "652d73797374656d1a2d0a19726261632e617574686f72697a6174696f6e2e6b38732e696f120b436c7573746572526f"
            "6c651a036372311a002200"
        ),
        {
            "kind": "ClusterRoleBinding",
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "metadata": {"name": "crb1", "creationTimestamp": None},
            "subjects": [
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "bob"},
                {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "g"},
                {"kind": "ServiceAccount", "name": "x", "namespace": "kube-system"},
            ],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cr1"},
        },
    ),
    (
        'kubectl create priorityclass pc1 --value=1000 --description="high" --global-default=true'
        " --preemption-policy=Never",
        (
            "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c61737312270a130a"
            "0370633112001a0022002a0032003800420010e80718012204686967682a054e657665721a002200"
        ),
        {
            "kind": "PriorityClass",
            "apiVersion": "scheduling.k8s.io/v1",
            "metadata": {"name": "pc1", "creationTimestamp": None},
            "value": 1000,
            "globalDefault": True,
            "description": "high",
            "preemptionPolicy": "Never",
        },
    ),
    (
        "kubectl create priorityclass pcn1 --value=-5",
        (
            "6b3873000a250a147363686564756c696e672e6b38732e696f2f7631120d5072696f72697479436c617373123b0a140a"
            "0470636e3112001a0022002a0032003800420010fbffffffffffffffff01180022002a14507265656d70744c6f776572"
            "5072696f726974791a002200"
        ),
        {
            "kind": "PriorityClass",
            "apiVersion": "scheduling.k8s.io/v1",
            "metadata": {"name": "pcn1", "creationTimestamp": None},
            "value": -5,
            "preemptionPolicy": "PreemptLowerPriority",
        },
    ),
    (
        "kubectl auth can-i get pods/log -n kube-system",
        (
            "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365"
            "737352657669657712430a100a0012001a0022002a0032003800420012250a230a0b6b7562652d73797374656d120367"
            "65741a0022002a04706f647332003a036c6f671a08080012001a0020001a002200"
        ),
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": {
                "resourceAttributes": {
                    "namespace": "kube-system",
                    "verb": "get",
                    "resource": "pods",
                    "name": "log",
                }
            },
            "status": {"allowed": False},
        },
    ),
    (
        "kubectl auth can-i list pods -A",
        (
            "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365"
            "737352657669657712360a100a0012001a0022002a0032003800420012180a160a0012046c6973741a0022002a04706f"
            "647332003a001a08080012001a0020001a002200"
        ),
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": {"resourceAttributes": {"verb": "list", "resource": "pods"}},
            "status": {"allowed": False},
        },
    ),
    (
        "kubectl auth can-i get pods/foo --subresource=status",
        (
            "6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441636365"
            "737352657669657712450a100a0012001a0022002a0032003800420012270a250a0764656661756c7412036765741a00"
            "22002a04706f647332067374617475733a03666f6f1a08080012001a0020001a002200"
        ),
        {
            "kind": "SelfSubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": None},
            "spec": {
                "resourceAttributes": {
                    "namespace": "default",
                    "verb": "get",
                    "resource": "pods",
                    "subresource": "status",
                    "name": "foo",
                }
            },
            "status": {"allowed": False},
        },
    ),
]


def decode(body: bytes) -> Obj:
    return decode_body(body, api_version="v1", kind="Unused")


# -- what kubectl sends ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "expected"), [pytest.param(body, expected, id=command) for command, body, expected in CAPTURED]
)
def test_kubectl_bodies_decode_to_the_json_kubectl_would_send(body: str, expected: Obj) -> None:
    assert decode(bytes.fromhex(body)) == expected


def test_the_encoder_reproduces_kubectl_bytes() -> None:
    """Hand-built bodies below are shaped like kubectl's: every non-pointer scalar written, even empty."""
    meta = ld(1, ld(1, "ns1"), *(ld(n) for n in (2, 3, 4, 5, 6)), vi(7, 0), ld(8))
    body = envelope("v1", "Namespace", meta, ld(2), ld(3, ld(1))) + ld(3) + ld(4)
    assert body.hex() == CAPTURED[0][1]


# -- fields kubectl does not send --------------------------------------------------------------------
def test_object_meta_every_field() -> None:
    owner = ld(13, ld(1, "DaemonSet"), ld(3, "plugin"), ld(4, "uid-1"), ld(5, "apps/v1"), vi(6, 1), vi(7, 0))
    managed = ld(
        17,
        ld(1, "kubectl"),
        ld(2, "Apply"),
        ld(3, "v1"),
        ld(4, vi(1, 1_700_000_000)),
        ld(6, "FieldsV1"),
        ld(7, ld(1, '{"f:data":{"f:a":{}}}')),
        ld(8),
    )
    meta = ld(
        1,
        ld(1, "cm"),
        ld(2, "cm-"),
        ld(3, "ns"),
        ld(4, "/api/v1/namespaces/ns/configmaps/cm"),
        ld(5, "0000-1111"),
        ld(6, "42"),
        vi(7, 3),
        ld(8, vi(1, 1_714_979_289), vi(2, 500)),
        ld(9, vi(1, 1_714_979_300)),
        vi(10, 0),
        entry(11, "app", "gpu"),
        entry(11, "tier", ""),
        entry(12, "note", "a b"),
        owner,
        ld(14, "example.com/keep"),
        ld(14, "kubernetes"),
        managed,
    )
    assert decode(envelope("v1", "ConfigMap", meta))["metadata"] == {
        "name": "cm",
        "generateName": "cm-",
        "namespace": "ns",
        "selfLink": "/api/v1/namespaces/ns/configmaps/cm",
        "uid": "0000-1111",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "2024-05-06T07:08:09Z",  # whole seconds, as the API server keeps them
        "deletionTimestamp": "2024-05-06T07:08:20Z",
        "deletionGracePeriodSeconds": 0,  # a pointer: zero is still a value
        "labels": {"app": "gpu", "tier": ""},
        "annotations": {"note": "a b"},
        "ownerReferences": [
            {
                "kind": "DaemonSet",
                "name": "plugin",
                "uid": "uid-1",
                "apiVersion": "apps/v1",
                "controller": True,
                "blockOwnerDeletion": False,
            }
        ],
        "finalizers": ["example.com/keep", "kubernetes"],
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Apply",
                "apiVersion": "v1",
                "time": "2023-11-14T22:13:20Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:a": {}}},
            }
        ],
    }


def test_core_kinds_every_field() -> None:
    meta = ld(1, ld(1, "x"))
    account = decode(
        envelope(
            "v1",
            "ServiceAccount",
            meta,
            ld(
                2, ld(1, "Secret"), ld(2, "ns"), ld(3, "tok"), ld(4, "u"), ld(5, "v1"), ld(6, "7"), ld(7, "f")
            ),
            ld(3, ld(1, "pull")),
            vi(4, 0),
        )
    )
    assert account["secrets"] == [
        {
            "kind": "Secret",
            "namespace": "ns",
            "name": "tok",
            "uid": "u",
            "apiVersion": "v1",
            "resourceVersion": "7",
            "fieldPath": "f",
        }
    ]
    assert account["imagePullSecrets"] == [{"name": "pull"}]
    assert account["automountServiceAccountToken"] is False
    secret = decode(envelope("v1", "Secret", meta, entry(4, "plain", "text"), vi(5, 0), ld(3, "Opaque")))
    assert (secret["stringData"], secret["immutable"], secret["type"]) == ({"plain": "text"}, False, "Opaque")
    config = decode(envelope("v1", "ConfigMap", meta, vi(4, 1), entry(3, "bin", b"\xff\x00")))
    assert (config["immutable"], config["binaryData"]) == (True, {"bin": "/wA="})
    condition = ld(
        2, ld(1, "NamespaceDeletionContentFailure"), ld(2, "True"), ld(4, vi(1, 0)), ld(5, "R"), ld(6, "m")
    )
    namespace = decode(
        envelope("v1", "Namespace", meta, ld(2, ld(1, "kubernetes")), ld(3, ld(1, "Terminating"), condition))
    )
    assert namespace["spec"] == {"finalizers": ["kubernetes"]}
    assert namespace["status"] == {
        "phase": "Terminating",
        "conditions": [
            {
                "type": "NamespaceDeletionContentFailure",
                "status": "True",
                "lastTransitionTime": "1970-01-01T00:00:00Z",  # set, though zero seconds: not null
                "reason": "R",
                "message": "m",
            }
        ],
    }


def test_access_review_selectors_and_status() -> None:
    requirement = ld(2, ld(1, "spec.nodeName"), ld(2, "In"), ld(3, "gpu-0"))
    attributes = ld(
        1,
        ld(5, "pods"),
        ld(2, "list"),
        ld(8, ld(1, "spec.nodeName=gpu-0"), requirement),
        ld(9, ld(2, ld(1, "app"), ld(2, "Exists"))),
    )
    status = ld(3, vi(1, 0), vi(4, 1), ld(2, "policy"), ld(3, "boom"))
    review = decode(envelope("authorization.k8s.io/v1", "SelfSubjectAccessReview", ld(2, attributes), status))
    assert review["spec"]["resourceAttributes"] == {
        "resource": "pods",
        "verb": "list",
        "fieldSelector": {
            "rawSelector": "spec.nodeName=gpu-0",
            "requirements": [{"key": "spec.nodeName", "operator": "In", "values": ["gpu-0"]}],
        },
        "labelSelector": {"requirements": [{"key": "app", "operator": "Exists"}]},
    }
    assert review["status"] == {
        "allowed": False,
        "denied": True,
        "reason": "policy",
        "evaluationError": "boom",
    }


def test_rbac_selectors_and_subject_namespace() -> None:
    expression = ld(2, ld(1, "tier"), ld(2, "NotIn"), ld(3, "a"), ld(3, "b"))
    role = decode(envelope("rbac.authorization.k8s.io/v1", "ClusterRole", ld(1), ld(3, ld(1, expression))))
    assert role["aggregationRule"] == {
        "clusterRoleSelectors": [
            {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["a", "b"]}]}
        ]
    }
    assert role["rules"] is None  # Go's `json:"rules"` has no omitempty: a nil slice is null
    rule = decode(envelope("rbac.authorization.k8s.io/v1", "Role", ld(2, ld(3, "pods"))))["rules"]
    assert rule == [{"verbs": None, "resources": ["pods"]}]
    binding = decode(
        envelope(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            ld(2, ld(1, "ServiceAccount"), ld(3, "sa"), ld(4, "ns")),
            ld(3),
        )
    )
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]
    assert binding["roleRef"] == {}


def test_delete_options() -> None:
    body = envelope(
        "meta.k8s.io/v1",
        "DeleteOptions",
        vi(1, 0),
        ld(2, ld(1, "u")),
        vi(3, 0),
        ld(4, "Foreground"),
        ld(5, "All"),
    )
    assert decode(body) == {
        "kind": "DeleteOptions",
        "apiVersion": "meta.k8s.io/v1",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u"},
        "orphanDependents": False,
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


def test_unknown_fields_are_skipped_and_the_last_scalar_wins() -> None:
    fixed64 = varint(90 << 3 | 1) + bytes(8)
    fixed32 = varint(91 << 3 | 5) + bytes(4)
    body = envelope(
        "scheduling.k8s.io/v1",
        "PriorityClass",
        ld(1, ld(1, "pc"), vi(99, 5), ld(98, "future")),
        vi(2, 7),
        fixed64,
        fixed32,
        ld(97, ld(1, "x")),
        vi(2, -2_000_000_000),
    ) + ld(5, "ignored envelope field")
    assert decode(body) == {
        "kind": "PriorityClass",
        "apiVersion": "scheduling.k8s.io/v1",
        "metadata": {"name": "pc"},
        "value": -2_000_000_000,
    }


def test_an_envelope_without_type_meta_takes_the_route_kind() -> None:
    body = b"k8s\x00" + ld(2, ld(1, ld(1, "cm")), entry(2, "a", "b"))
    assert decode_body(body, api_version="v1", kind="ConfigMap") == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "cm"},
        "data": {"a": "b"},
    }


# -- refusals --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'{"kind":"ConfigMap"}',
            "provided data does not appear to be a protobuf message, expected prefix [107, 56, 115, 0]",
        ),
        (b"", "expected prefix"),
        (b"k8s\x00\x0a", "Unknown: truncated varint at offset 1"),
        (b"k8s\x00\x12\x05ab", "Unknown: field needs 5 bytes at offset 2, only 2 left"),
        (b"k8s\x00\x0b", "Unknown: unsupported wire type 3 for field 1"),
        (b"k8s\x00\x00\x00", "Unknown: illegal field number 0"),
        (b"k8s\x00" + b"\x08" + b"\xff" * 11, "varint longer than 10 bytes"),
        (envelope("v1", "ConfigMap", vi(1, 5)), "ConfigMap.metadata: wire type 0, expected length-delimited"),
        (envelope("v1", "ConfigMap", ld(4, "yes")), "ConfigMap.immutable: wire type 2, expected a varint"),
        (
            envelope("v1", "ConfigMap", ld(1, ld(8, vi(1, 1 << 62)))),
            "ObjectMeta.creationTimestamp: timestamp",
        ),
        (envelope("v1", "ConfigMap", ld(1, ld(17, ld(7, ld(1, "{not json"))))), "fieldsV1: Raw is not JSON"),
    ],
)
def test_malformed_bodies_are_protobuf_errors(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=None) as refused:
        decode(body)
    assert message in str(refused.value)


def test_a_kind_without_a_table_is_unsupported() -> None:
    with pytest.raises(UnsupportedKind) as refused:
        decode(envelope("apps/v1", "Deployment", ld(1, ld(1, "d"))))
    assert (refused.value.api_version, refused.value.kind) == ("apps/v1", "Deployment")


def test_request_object_answers_like_the_api_server() -> None:
    deployments = kinds.lookup("apps", "v1", "deployments")
    configmaps = kinds.lookup("", "v1", "configmaps")
    assert deployments is not None
    assert configmaps is not None
    with pytest.raises(ApiError) as unsupported:
        request_object(envelope("apps/v1", "Deployment", ld(1, ld(1, "d"))), deployments)
    assert (unsupported.value.code, unsupported.value.reason) == (415, "UnsupportedMediaType")
    assert unsupported.value.message == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml"
    )
    with pytest.raises(ApiError) as malformed:
        request_object(b"k8s\x00\x0a", configmaps)
    assert (malformed.value.code, malformed.value.reason) == (400, "BadRequest")
    assert malformed.value.message.startswith("error decoding request body: Unknown: truncated varint")
    assert json.dumps(malformed.value.status())  # a plain JSON Status, as the server sends it


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/vnd.kubernetes.protobuf", True),
        ("application/vnd.kubernetes.protobuf; charset=binary", True),
        ("Application/VND.Kubernetes.Protobuf", True),
        ("application/vnd.kubernetes.protobuf;stream=watch", True),
        ("application/json", False),
        ("", False),
    ],
)
def test_is_protobuf(content_type: str, expected: bool) -> None:
    assert is_protobuf(content_type) is expected
