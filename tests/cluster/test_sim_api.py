"""The simulated API through the official kubernetes client over HTTP: CRUD, selectors, patches,
dry runs, errors, discovery, tables."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-{i}", "count": 2, "gpus": 8, "labels": {"pool": "h100"}},
        {"name": "cpu-0", "labels": {"pool": "cpu"}},
    ],
}


@pytest.fixture
def cluster(sim: Any) -> Any:
    return sim(SCENARIO)


@pytest.fixture
def core(cluster: Any) -> client.CoreV1Api:
    return client.CoreV1Api(cluster.api_client())


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}
    return {"metadata": {"name": name, "labels": {"app": "t"}}, "spec": {"containers": [container], **spec}}


def _raw_response(cluster: Any, path: str, accept: str) -> tuple[int, Any]:
    api = cluster.api_client()
    request = api.param_serialize(
        "GET", path, header_params={"Accept": accept}, auth_settings=["BearerToken"]
    )
    response = api.call_api(*request)
    response.read()
    return response.status, json.loads(response.data)


def _raw(cluster: Any, path: str, accept: str = "application/json") -> Any:
    status, body = _raw_response(cluster, path, accept)
    assert status == 200, body
    return body


def test_discovery_and_version(cluster: Any) -> None:
    version = client.VersionApi(cluster.api_client()).get_code()
    assert version.git_version == "v1.31.2"
    groups = {g["name"] for g in _raw(cluster, "/apis")["groups"]}
    assert {"apps", "node.k8s.io", "authorization.k8s.io", "coordination.k8s.io"} <= groups
    core_resources = {r["name"] for r in _raw(cluster, "/api/v1")["resources"]}
    assert {
        "nodes",
        "pods",
        "pods/log",
        "pods/status",
        "namespaces",
        "events",
        "configmaps",
    } <= core_resources
    apps = _raw(cluster, "/apis/apps/v1")
    assert apps["kind"] == "APIResourceList"
    assert "daemonsets" in {r["name"] for r in apps["resources"]}


def test_unknown_path_is_a_404_status(cluster: Any) -> None:
    status, body = _raw_response(cluster, "/apis/example.com/v1/widgets", "application/json")
    assert status == 404
    assert (body["kind"], body["code"]) == ("Status", 404)


def test_list_objects_carry_identity(core: client.CoreV1Api) -> None:
    nodes = core.list_node()
    assert nodes.metadata.resource_version
    for node in nodes.items:
        assert node.metadata.uid
        assert node.metadata.resource_version
        assert node.metadata.creation_timestamp is not None
    assert [n.metadata.name for n in nodes.items] == ["cpu-0", "gpu-0", "gpu-1"]


@pytest.mark.parametrize(
    ("selector", "names"),
    [
        ("pool=h100", ["gpu-0", "gpu-1"]),
        ("pool==cpu", ["cpu-0"]),
        ("pool!=cpu", ["gpu-0", "gpu-1"]),
        ("pool in (cpu, h100),kubernetes.io/hostname notin (gpu-1)", ["cpu-0", "gpu-0"]),
        ("feature.node.kubernetes.io/pci-10de.present", ["gpu-0", "gpu-1"]),
        ("!feature.node.kubernetes.io/pci-10de.present", ["cpu-0"]),
    ],
)
def test_label_selectors(core: client.CoreV1Api, selector: str, names: list[str]) -> None:
    assert [n.metadata.name for n in core.list_node(label_selector=selector).items] == names


def test_field_selectors(core: client.CoreV1Api) -> None:
    assert [n.metadata.name for n in core.list_node(field_selector="metadata.name=gpu-1").items] == ["gpu-1"]
    plugin_pods = core.list_namespaced_pod("kube-system", field_selector="spec.nodeName=gpu-0").items
    assert len(plugin_pods) == 1
    running = core.list_pod_for_all_namespaces(
        field_selector="status.phase=Running,metadata.namespace=kube-system"
    )
    assert len(running.items) == 3


def test_bad_selector_is_a_400(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as caught:
        core.list_node(field_selector="spec.bogus=1")
    assert caught.value.status == 400


def test_create_get_conflict_delete(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_pod("default", _pod("p1"))
    assert created.metadata.uid
    assert created.status.phase == "Pending"
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("default", _pod("p1"))
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["reason"] == "AlreadyExists"
    core.delete_namespaced_pod("p1", "default", grace_period_seconds=0)
    with pytest.raises(ApiException) as caught:
        core.read_namespaced_pod("p1", "default")
    assert caught.value.status == 404
    assert json.loads(caught.value.body)["message"] == 'pods "p1" not found'


def test_create_in_missing_namespace_is_404(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("nowhere", _pod("p1"))
    assert caught.value.status == 404


def test_invalid_pod_is_422_naming_the_field(core: client.CoreV1Api) -> None:
    body = {"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "c"}]}}
    with pytest.raises(ApiException) as caught:
        core.create_namespaced_pod("default", body)
    assert caught.value.status == 422
    assert "spec.containers[0].image: Required value" in json.loads(caught.value.body)["message"]


def test_generate_name(core: client.CoreV1Api) -> None:
    body = _pod("")
    body["metadata"] = {"generateName": "verify-"}
    created = core.create_namespaced_pod("default", body)
    assert created.metadata.name.startswith("verify-")
    assert len(created.metadata.name) == len("verify-") + 5


def test_update_with_stale_resource_version_conflicts(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    first = core.read_namespaced_config_map("cm", "default")
    first.data = {"a": "2"}
    updated = core.replace_namespaced_config_map("cm", "default", first)
    assert updated.metadata.resource_version != first.metadata.resource_version
    first.data = {"a": "3"}
    with pytest.raises(ApiException) as caught:
        core.replace_namespaced_config_map("cm", "default", first)
    assert caught.value.status == 409
    assert json.loads(caught.value.body)["reason"] == "Conflict"


def test_strategic_merge_replaces_taints(core: client.CoreV1Api) -> None:
    core.patch_node("gpu-0", {"spec": {"taints": [{"key": "a", "value": "1", "effect": "NoSchedule"}]}})
    patched = core.patch_node(
        "gpu-0", {"spec": {"taints": [{"key": "b", "value": "2", "effect": "NoExecute"}]}}
    )
    assert [(t.key, t.effect) for t in patched.spec.taints] == [("b", "NoExecute")]


def test_strategic_merge_labels_null_deletes(core: client.CoreV1Api) -> None:
    core.patch_node("gpu-0", {"metadata": {"labels": {"x": "1", "y": "2"}}})
    patched = core.patch_node("gpu-0", {"metadata": {"labels": {"x": None}}})
    assert "x" not in patched.metadata.labels
    assert patched.metadata.labels["y"] == "2"
    assert patched.metadata.labels["pool"] == "h100"


def test_strategic_merge_merges_containers_by_name(cluster: Any) -> None:
    apps = client.AppsV1Api(cluster.api_client())
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "nvidia-device-plugin-ctr", "env": [{"name": "EXTRA", "value": "1"}]}
                    ]
                }
            }
        }
    }
    patched = apps.patch_namespaced_daemon_set("nvidia-device-plugin-daemonset", "kube-system", patch)
    container = patched.spec.template.spec.containers[0]
    assert container.image == "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
    assert {e.name for e in container.env} == {"FAIL_ON_INIT_ERROR", "EXTRA"}
    assert patched.metadata.generation == 2


def test_json_patch_and_merge_patch(core: client.CoreV1Api) -> None:
    patched = core.patch_node(
        "gpu-1", [{"op": "add", "path": "/spec/taints", "value": [{"key": "k", "effect": "NoSchedule"}]}]
    )
    assert patched.spec.taints[0].key == "k"
    patched = core.patch_node(
        "gpu-1", {"spec": {"taints": None}}, _content_type="application/merge-patch+json"
    )
    assert not patched.spec.taints
    with pytest.raises(ApiException) as caught:
        core.patch_node("gpu-1", [{"op": "remove", "path": "/spec/absent"}])
    assert caught.value.status == 422


def test_noop_patch_keeps_resource_version(core: client.CoreV1Api) -> None:
    before = core.read_node("cpu-0").metadata.resource_version
    after = core.patch_node("cpu-0", {"metadata": {"labels": {"pool": "cpu"}}}).metadata.resource_version
    assert after == before


def test_server_side_apply_creates_then_merges(core: client.CoreV1Api) -> None:
    def apply(data: dict[str, str], manager: str = "gpuctl") -> Any:
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": data}
        return core.patch_namespaced_config_map(
            "applied", "default", body, field_manager=manager, _content_type="application/apply-patch+yaml"
        )

    created = apply({"a": "1"})
    assert created.data == {"a": "1"}
    assert created.metadata.managed_fields[0].manager == "gpuctl"
    # another manager's field is merged in; the one gpuctl no longer applies is removed
    assert apply({"c": "3"}, manager="other").data == {"a": "1", "c": "3"}
    merged = apply({"b": "2"})
    assert merged.data == {"b": "2", "c": "3"}
    again = apply({"b": "2"})
    assert again.metadata.resource_version == merged.metadata.resource_version


def test_dry_run_persists_nothing(core: client.CoreV1Api) -> None:
    version = core.list_node().metadata.resource_version
    result = core.patch_node(
        "gpu-0", {"spec": {"taints": [{"key": "d", "effect": "NoSchedule"}]}}, dry_run="All"
    )
    assert result.spec.taints[0].key == "d"
    created = core.create_namespaced_pod("default", _pod("dry"), dry_run="All")
    assert created.metadata.name == "dry"
    assert not core.read_node("gpu-0").spec.taints
    assert core.list_namespaced_pod("default").items == []
    plugin = core.list_namespaced_pod("kube-system").items[0].metadata.name
    core.delete_namespaced_pod(plugin, "kube-system", dry_run="All")
    core.read_namespaced_pod(plugin, "kube-system")
    assert core.list_node().metadata.resource_version == version


def test_delete_with_grace_marks_terminating(core: client.CoreV1Api) -> None:
    plugin = core.list_namespaced_pod("kube-system", field_selector="spec.nodeName=gpu-0").items[0]
    deleted = core.delete_namespaced_pod(plugin.metadata.name, "kube-system", grace_period_seconds=30)
    assert deleted.metadata.deletion_timestamp is not None
    assert core.read_namespaced_pod(plugin.metadata.name, "kube-system").metadata.deletion_timestamp


def test_deletecollection_by_label(core: client.CoreV1Api) -> None:
    for name in ("a", "b"):
        core.create_namespaced_pod("default", _pod(name))
    other = _pod("c")
    other["metadata"]["labels"] = {"app": "other"}
    core.create_namespaced_pod("default", other)
    core.delete_collection_namespaced_pod("default", label_selector="app=t", grace_period_seconds=0)
    assert [p.metadata.name for p in core.list_namespaced_pod("default").items] == ["c"]


def test_namespace_deletion_removes_its_pods(core: client.CoreV1Api) -> None:
    core.create_namespace({"metadata": {"name": "scratch"}})
    core.create_namespaced_pod("scratch", _pod("p"))
    core.delete_namespace("scratch")
    assert core.list_namespaced_pod("scratch").items == []
    with pytest.raises(ApiException) as caught:
        core.delete_namespace("kube-system")
    assert caught.value.status == 403


def test_self_subject_access_review_and_forbidden(sim: Any) -> None:
    cluster = sim({"nodes": [{"name": "n"}], "forbidden": ["list nodes"]})
    api = cluster.api_client()
    review = client.AuthorizationV1Api(api).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "list", "resource": "nodes"}}}
    )
    assert review.status.allowed is False
    allowed = client.AuthorizationV1Api(api).create_self_subject_access_review(
        {"spec": {"resourceAttributes": {"verb": "get", "resource": "nodes"}}}
    )
    assert allowed.status.allowed is True
    with pytest.raises(ApiException) as caught:
        client.CoreV1Api(api).list_node()
    assert caught.value.status == 403
    assert 'cannot list resource "nodes"' in json.loads(caught.value.body)["message"]


def test_tables_have_kubectl_columns(cluster: Any) -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    nodes = _raw(cluster, "/api/v1/nodes", accept)
    assert nodes["kind"] == "Table"
    assert [c["name"] for c in nodes["columnDefinitions"] if c["priority"] == 0] == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
    ]
    assert nodes["rows"][0]["cells"][:3] == ["cpu-0", "Ready", "<none>"]
    pods = _raw(cluster, "/api/v1/pods", accept)
    assert [c["name"] for c in pods["columnDefinitions"][:5]] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
    ]
    assert pods["rows"][0]["object"]["metadata"]["namespace"] == "kube-system"
    generic = _raw(cluster, "/api/v1/configmaps", accept)
    assert [c["name"] for c in generic["columnDefinitions"]] == ["Name", "Age"]


def test_runtimeclasses_and_leases(cluster: Any) -> None:
    api = cluster.api_client()
    node_api = client.NodeV1Api(api)
    node_api.create_runtime_class({"metadata": {"name": "nvidia"}, "handler": "nvidia"})
    assert [rc.metadata.name for rc in node_api.list_runtime_class().items] == ["nvidia"]
    lease = client.CoordinationV1Api(api).read_namespaced_lease("gpu-0", "kube-node-lease")
    assert lease.spec.holder_identity == "gpu-0"
