"""CustomResourceDefinitions and custom resources in the simulated API, through a real kubectl and
the kubernetes client: established at once, discovered, CRUD, status subresource, apply, watch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helm import OPERATOR_CHART
from tests.kubectl import Kubectl, needs_kubectl

CHART_CRD = OPERATOR_CHART / "crds" / "nvidia.com_clusterpolicies.yaml"
NAMESPACED_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
        "scope": "Namespaced",
        "versions": [{"name": "v1alpha1", "served": True, "storage": True, "subresources": {"status": {}}}],
    },
}


@pytest.fixture
def kubectl(sim: Any, tmp_path: Path) -> Kubectl:
    return Kubectl(sim({"nodes": [{"name": "gpu-0", "gpus": 8}]}), tmp_path)


def _write(tmp_path: Path, name: str, obj: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return str(path)


@needs_kubectl
def test_a_created_crd_is_established_and_its_kind_is_served(kubectl: Kubectl, tmp_path: Path) -> None:
    assert "created" in kubectl.ok("create", "-f", str(CHART_CRD))
    crd = json.loads(kubectl.ok("get", "crd", "clusterpolicies.nvidia.com", "-o", "json"))
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["status"]["acceptedNames"]["kind"] == "ClusterPolicy"
    assert kubectl.ok("get", "crd").split()[:3] == ["NAME", "CREATED", "AT"]
    resources = kubectl.ok("api-resources", "--api-group=nvidia.com", "-o", "name")
    assert resources.split() == ["clusterpolicies.nvidia.com"]

    policy = {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"}}
    policy["spec"] = {"driver": {"enabled": False}}
    kubectl.ok("apply", "--server-side", "-f", _write(tmp_path, "policy.yaml", policy))
    assert kubectl.ok("get", "clusterpolicies", "-o", "name") == "clusterpolicy.nvidia.com/cluster-policy\n"
    header = kubectl.ok("get", "clusterpolicy", "cluster-policy").splitlines()[0].split()
    assert header == ["NAME", "STATUS", "AGE"]  # the CRD's additionalPrinterColumns

    policy["spec"] = {"driver": {"enabled": True}}
    kubectl.ok("apply", "--server-side", "-f", _write(tmp_path, "policy.yaml", policy))
    got = json.loads(kubectl.ok("get", "clusterpolicy", "cluster-policy", "-o", "json"))
    assert got["spec"]["driver"]["enabled"] is True
    assert got["metadata"]["generation"] == 2


@needs_kubectl
def test_deleting_a_crd_deletes_its_objects_and_unserves_the_kind(kubectl: Kubectl, tmp_path: Path) -> None:
    kubectl.ok("create", "-f", _write(tmp_path, "crd.yaml", NAMESPACED_CRD))
    widget = {"apiVersion": "example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "w1"}}
    kubectl.ok("create", "-n", "default", "-f", _write(tmp_path, "w.yaml", widget))
    assert kubectl.ok("get", "wd", "-n", "default", "-o", "name") == "widget.example.com/w1\n"
    kubectl.ok("create", "namespace", "scratch")
    kubectl.ok("create", "-n", "scratch", "-f", _write(tmp_path, "w.yaml", widget))
    kubectl.ok("delete", "namespace", "scratch", "--wait=false")
    assert kubectl.ok("get", "widgets", "-n", "scratch", "-o", "name") == ""  # emptied with its namespace
    kubectl.ok("delete", "crd", "widgets.example.com")
    done = kubectl("get", "widgets.example.com", "-n", "default")
    assert done.returncode != 0
    assert "doesn't have a resource type" in done.stderr or "the server could not find" in done.stderr


def test_status_subresource_and_watch_through_the_client(sim: Any) -> None:
    from kubernetes import watch
    from kubernetes.client import ApiextensionsV1Api, CustomObjectsApi

    cluster = sim({})
    client = cluster.api_client()
    ApiextensionsV1Api(client).create_custom_resource_definition(NAMESPACED_CRD)
    objects = CustomObjectsApi(client)
    args = ("example.com", "v1alpha1", "default", "widgets")
    created = objects.create_namespaced_custom_object(
        *args,
        {
            "apiVersion": "example.com/v1alpha1",
            "kind": "Widget",
            "metadata": {"name": "w1"},
            "spec": {"a": 1},
        },
    )
    since = created["metadata"]["resourceVersion"]
    # A write to the object leaves status alone; a write to /status leaves spec alone.
    created["status"] = {"phase": "Ignored"}
    created["spec"] = {"a": 2}
    updated = objects.replace_namespaced_custom_object(*args, "w1", created)
    assert "status" not in updated
    assert updated["spec"] == {"a": 2}
    updated["status"], updated["spec"] = {"phase": "Ready"}, {"a": 3}
    status = objects.replace_namespaced_custom_object_status(*args, "w1", updated)
    assert status["status"] == {"phase": "Ready"}
    assert status["spec"] == {"a": 2}
    listing = objects.list_namespaced_custom_object(*args, label_selector="")
    events = watch.Watch().stream(
        objects.list_namespaced_custom_object, *args, resource_version=since, timeout_seconds=1
    )
    seen = [(event["type"], event["object"]["metadata"]["resourceVersion"]) for event in events]
    assert seen == [
        ("MODIFIED", updated["metadata"]["resourceVersion"]),
        ("MODIFIED", status["metadata"]["resourceVersion"]),
    ]
    assert [item["metadata"]["name"] for item in listing["items"]] == ["w1"]


def test_a_crd_whose_name_does_not_match_its_names_is_refused(sim: Any) -> None:
    from kubernetes.client import ApiextensionsV1Api
    from kubernetes.client.exceptions import ApiException

    client = sim({}).api_client()
    bad = json.loads(json.dumps(NAMESPACED_CRD))
    bad["metadata"]["name"] = "widgets.other.com"
    with pytest.raises(ApiException) as error:
        ApiextensionsV1Api(client).create_custom_resource_definition(bad)
    assert error.value.status == 422
    assert "must be spec.names.plural" in str(error.value.body)


@needs_kubectl
def test_kubectl_discovers_a_new_crd_through_aggregated_discovery(sim: Any, tmp_path: Path) -> None:
    """kubectl (client-go) asks /api and /apis for APIGroupDiscoveryList: two requests, no per-group ones."""
    cluster = sim({})
    kubectl = Kubectl(cluster, tmp_path)
    kubectl.ok("create", "-f", str(CHART_CRD))
    cluster.server.reset_counts()
    assert kubectl.ok("get", "clusterpolicies", "-v=6").strip() == ""
    assert cluster.server.requests_by_verb() == {"discovery": 2, "list": 1}


def test_aggregated_discovery_lists_builtin_and_custom_kinds(sim: Any) -> None:

    cluster = sim({"gpuOperator": {}})
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    with cluster.open("/apis", Accept=accept) as response:
        content_type = response.headers["Content-Type"]
        document = json.loads(response.read())
    assert content_type == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert document["kind"] == "APIGroupDiscoveryList"
    groups = {item["metadata"]["name"]: item for item in document["items"]}
    resource = groups["nvidia.com"]["versions"][0]["resources"][0]
    assert (resource["resource"], resource["scope"], resource["responseKind"]["kind"]) == (
        "clusterpolicies",
        "Cluster",
        "ClusterPolicy",
    )
    assert resource["subresources"][0]["subresource"] == "status"
    daemonsets = next(r for r in groups["apps"]["versions"][0]["resources"] if r["resource"] == "daemonsets")
    assert daemonsets["shortNames"] == ["ds"]
    with cluster.open("/apis") as response:  # no Accept: the legacy APIGroupList
        assert json.loads(response.read())["kind"] == "APIGroupList"
