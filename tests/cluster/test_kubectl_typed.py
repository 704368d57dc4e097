"""kubectl's typed-client writes against the simulated cluster: `kubectl create namespace|configmap|
secret|serviceaccount|role|rolebinding|clusterrole|clusterrolebinding|priorityclass` and `kubectl auth
can-i` send protobuf bodies (kubectl >= 1.33 for most of them; 1.32 for the bindings), which the sim
decodes; the answers stay JSON. Every kubectl found (the venv's, and a different one on PATH) runs."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.kubectl import KUBECTLS, needs_kubectl
from tests.kubectl import Kubectl as BoundKubectl
from tests.protobuf_encoder import entry, envelope, ld

pytestmark = needs_kubectl
PROTOBUF = "application/vnd.kubernetes.protobuf"


class Kubectl(BoundKubectl):
    def api(self, name: str) -> Any:
        import kubernetes.client

        return getattr(kubernetes.client, name)(self.cluster.api_client())


@pytest.fixture(params=KUBECTLS)
def connect(request: pytest.FixtureRequest, sim: Any, tmp_path: Path) -> Callable[..., Kubectl]:
    """`connect(forbidden=[...])`: a fresh simulated cluster and the kubectl under test bound to it."""

    def start(**scenario: Any) -> Kubectl:
        cluster = sim({"nodes": [{"name": "gpu-0", "gpus": 2}], **scenario})
        return Kubectl(cluster, tmp_path, request.param)

    return start


def test_core_objects(connect: Callable[..., Kubectl], tmp_path: Path) -> None:
    kubectl = connect()
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01\xfe\xff")
    assert kubectl.ok("create", "namespace", "gpu-operator") == "namespace/gpu-operator created\n"
    kubectl.ok(
        "create", "configmap", "cfg", "-n", "gpu-operator", "--from-literal=a=1", f"--from-file=blob={blob}"
    )
    kubectl.ok("create", "secret", "generic", "s", "--from-literal=user=admin", "--type=example.com/t")
    kubectl.ok(
        "create", "secret", "docker-registry", "ngc", "--docker-server=nvcr.io",
        "--docker-username=$oauthtoken", "--docker-password=key", "--docker-email=a@b.c",
    )  # fmt: skip
    kubectl.ok("create", "serviceaccount", "gpu-operator", "-n", "gpu-operator")

    core = kubectl.api("CoreV1Api")
    namespace = core.read_namespace("gpu-operator")
    assert namespace.metadata.labels == {"kubernetes.io/metadata.name": "gpu-operator"}
    config = core.read_namespaced_config_map("cfg", "gpu-operator")
    assert config.data == {"a": "1"}
    assert config.binary_data == {"blob": base64.b64encode(b"\x00\x01\xfe\xff").decode()}
    generic = core.read_namespaced_secret("s", "default")
    assert (generic.type, generic.data) == ("example.com/t", {"user": base64.b64encode(b"admin").decode()})
    registry = core.read_namespaced_secret("ngc", "default")
    assert registry.type == "kubernetes.io/dockerconfigjson"
    auths = json.loads(base64.b64decode(registry.data[".dockerconfigjson"]))["auths"]
    assert auths["nvcr.io"]["username"] == "$oauthtoken"
    assert auths["nvcr.io"]["password"] == "key"
    assert (
        core.read_namespaced_service_account("gpu-operator", "gpu-operator").metadata.name == "gpu-operator"
    )


def test_rbac_objects(connect: Callable[..., Kubectl]) -> None:
    kubectl = connect()
    kubectl.ok(
        "create", "role", "reader", "--verb=get,list", "--resource=pods,daemonsets.apps", "--resource-name=x"
    )
    kubectl.ok(
        "create", "rolebinding", "readers", "--role=reader", "--user=alice", "--group=devs",
        "--serviceaccount=default:ci",
    )  # fmt: skip
    kubectl.ok(
        "create", "clusterrole", "nodes", "--verb=get", "--resource=nodes", "--non-resource-url=/healthz"
    )
    kubectl.ok("create", "clusterrole", "gpu-agg", "--aggregation-rule=gpuctl.io/aggregate=true")
    kubectl.ok("create", "clusterrolebinding", "node-readers", "--clusterrole=nodes", "--user=bob")

    rbac = kubectl.api("RbacAuthorizationV1Api")
    rules = rbac.read_namespaced_role("reader", "default").rules
    assert [(r.verbs, r.api_groups, r.resources, r.resource_names) for r in rules] == [
        (["get", "list"], [""], ["pods"], ["x"]),
        (["get", "list"], ["apps"], ["daemonsets"], ["x"]),
    ]
    binding = rbac.read_namespaced_role_binding("readers", "default")
    assert [(s.kind, s.name, s.namespace) for s in binding.subjects] == [
        ("User", "alice", None),
        ("Group", "devs", None),
        ("ServiceAccount", "ci", "default"),
    ]
    assert (binding.role_ref.kind, binding.role_ref.name) == ("Role", "reader")
    cluster_rules = rbac.read_cluster_role("nodes").rules
    assert [(r.resources, r.non_resource_urls) for r in cluster_rules] == [
        (["nodes"], None),
        (None, ["/healthz"]),
    ]
    selectors = rbac.read_cluster_role("gpu-agg").aggregation_rule.cluster_role_selectors
    assert [s.match_labels for s in selectors] == [{"gpuctl.io/aggregate": "true"}]
    cluster_binding = rbac.read_cluster_role_binding("node-readers")
    assert [(s.kind, s.name) for s in cluster_binding.subjects] == [("User", "bob")]
    assert (cluster_binding.role_ref.kind, cluster_binding.role_ref.name) == ("ClusterRole", "nodes")


def test_priority_classes(connect: Callable[..., Kubectl]) -> None:
    kubectl = connect()
    kubectl.ok(
        "create", "priorityclass", "gpu-critical", "--value=1000000", "--description=GPU daemons",
        "--global-default=true", "--preemption-policy=Never",
    )  # fmt: skip
    kubectl.ok("create", "priorityclass", "low", "--value=-5")
    scheduling = kubectl.api("SchedulingV1Api")
    critical = scheduling.read_priority_class("gpu-critical")
    assert (critical.value, critical.description, critical.global_default, critical.preemption_policy) == (
        1000000,
        "GPU daemons",
        True,
        "Never",
    )
    low = scheduling.read_priority_class("low")
    assert (low.value, low.global_default, low.preemption_policy) == (-5, None, "PreemptLowerPriority")


def test_create_prints_the_json_answer(connect: Callable[..., Kubectl]) -> None:
    created = json.loads(connect().ok("create", "configmap", "c", "--from-literal=k=v", "-o", "json"))
    assert created["data"] == {"k": "v"}
    assert created["metadata"]["uid"]
    assert created["metadata"]["resourceVersion"]


def test_auth_can_i(connect: Callable[..., Kubectl]) -> None:
    assert connect().ok("auth", "can-i", "create", "pods") == "yes\n"
    kubectl = connect(forbidden=["create pods"])
    refused = kubectl("auth", "can-i", "create", "pods")
    assert (refused.returncode, refused.stdout) == (1, "no\n")
    assert kubectl.ok("auth", "can-i", "list", "pods", "-A") == "yes\n"


def test_dry_run_server_stores_nothing(connect: Callable[..., Kubectl]) -> None:
    kubectl = connect()
    assert "created (server dry run)" in kubectl.ok("create", "namespace", "scratch", "--dry-run=server")
    names = [item.metadata.name for item in kubectl.api("CoreV1Api").list_namespace().items]
    assert "scratch" not in names
    assert "default" in names


# -- the raw protocol, the way a typed client speaks it ----------------------------------------------
def _send(cluster: Any, method: str, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": PROTOBUF, "Accept": f"{PROTOBUF},application/json"}
    try:
        with cluster.open(path, data=body, method=method, **headers) as answer:
            status, content_type, text = answer.status, answer.headers["Content-Type"], answer.read()
    except urllib.error.HTTPError as error:
        status, content_type, text = error.code, error.headers["Content-Type"], error.read()
    assert content_type == "application/json"  # the answer stays JSON: kubectl accepts both
    return status, json.loads(text)


def test_update_with_a_protobuf_body(sim: Any) -> None:
    cluster = sim({})
    path = "/api/v1/namespaces/default/configmaps"
    meta = ld(1, ld(1, "cfg"), ld(3, "default"))
    assert _send(cluster, "POST", path, envelope("v1", "ConfigMap", meta, entry(2, "a", "1")))[0] == 201
    status, updated = _send(
        cluster, "PUT", f"{path}/cfg", envelope("v1", "ConfigMap", meta, entry(2, "a", "2"))
    )
    assert (status, updated["data"]) == (200, {"a": "2"})
    from kubernetes.client import CoreV1Api

    assert CoreV1Api(cluster.api_client()).read_namespaced_config_map("cfg", "default").data == {"a": "2"}


def test_a_kind_without_protobuf_support_is_415(sim: Any) -> None:
    cluster = sim({})
    body = envelope("apps/v1", "Deployment", ld(1, ld(1, "d")))
    status, answer = _send(cluster, "POST", "/apis/apps/v1/namespaces/default/deployments", body)
    assert (status, answer["kind"], answer["reason"]) == (415, "Status", "UnsupportedMediaType")
    assert answer["message"].startswith("the body of the request was in an unknown format")


def test_a_malformed_body_is_400_and_the_server_keeps_serving(sim: Any) -> None:
    cluster = sim({})
    status, answer = _send(cluster, "POST", "/api/v1/namespaces", b"k8s\x00\x0a\xff")
    assert (status, answer["reason"]) == (400, "BadRequest")
    assert answer["message"].startswith("error decoding request body: ")
    status, answer = _send(cluster, "POST", "/api/v1/namespaces", b'{"kind": "Namespace"}')
    assert status == 400
    assert "does not appear to be a protobuf message" in answer["message"]
    assert (
        _send(cluster, "POST", "/api/v1/namespaces", envelope("v1", "Namespace", ld(1, ld(1, "ok"))))[0]
        == 201
    )
