"""The sim maps a request to RBAC attributes as kube-apiserver does, so "these roles are enough"
means what it says on a real cluster.

The expected attributes are kube-apiserver's RequestInfoFactory.NewRequestInfo
(k8s.io/apiserver pkg/endpoints/request/requestinfo.go, kubernetes/kubernetes
staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go at commit
029db2287617cc61e1c3018dfef34097254d50ae). The rows marked `upstream` are the cases of its own test
table (requestinfo_test.go at that commit: TestGetAPIRequestInfo, TestGetNonAPIRequestInfo,
TestFieldSelectorParsing); the others apply the same rules to the requests gpuctl sends (pods/log,
pods/eviction, nodes/status, the non-resource URLs it reads).
"""

from __future__ import annotations

import pytest

from gpuctl.sim.api.authz import Attributes, request_attributes
from gpuctl.sim.api.messages import Request

# (method, target) -> (verb, apiGroup, resource, subresource, namespace, name)
Expected = tuple[str, str, str, str, str, str]

UPSTREAM_RESOURCE_CASES: list[tuple[str, str, Expected]] = [
    # resource paths
    ("GET", "/api/v1/namespaces", ("list", "", "namespaces", "", "", "")),
    ("GET", "/api/v1/namespaces/other", ("get", "", "namespaces", "", "other", "other")),
    ("GET", "/api/v1/namespaces/other/pods", ("list", "", "pods", "", "other", "")),
    ("GET", "/api/v1/namespaces/other/pods/foo", ("get", "", "pods", "", "other", "foo")),
    ("HEAD", "/api/v1/namespaces/other/pods/foo", ("get", "", "pods", "", "other", "foo")),
    ("GET", "/api/v1/pods", ("list", "", "pods", "", "", "")),
    ("HEAD", "/api/v1/pods", ("list", "", "pods", "", "", "")),
    ("PATCH", "/api/v1/namespaces/new-namespace", ("patch", "", "namespaces", "", "", "new-namespace")),
    # special verbs
    ("GET", "/api/v1/proxy/namespaces/other/pods/foo", ("proxy", "", "pods", "", "other", "foo")),
    (
        "GET",
        "/api/v1/proxy/namespaces/other/pods/foo/subpath/not/a/subresource",
        ("proxy", "", "pods", "", "other", "foo"),
    ),
    ("GET", "/api/v1/watch/pods", ("watch", "", "pods", "", "", "")),
    ("GET", "/api/v1/pods?watch=true", ("watch", "", "pods", "", "", "")),
    ("GET", "/api/v1/pods?watch=false", ("list", "", "pods", "", "", "")),
    ("GET", "/api/v1/watch/namespaces/other/pods", ("watch", "", "pods", "", "other", "")),
    ("GET", "/api/v1/namespaces/other/pods?watch=1", ("watch", "", "pods", "", "other", "")),
    ("GET", "/api/v1/namespaces/other/pods?watch=0", ("list", "", "pods", "", "other", "")),
    # subresource identification
    ("GET", "/api/v1/namespaces/other/pods/foo/status", ("get", "", "pods", "status", "other", "foo")),
    ("GET", "/api/v1/namespaces/other/pods/foo/proxy/subpath", ("get", "", "pods", "proxy", "other", "foo")),
    ("PUT", "/api/v1/namespaces/other/finalize", ("update", "", "namespaces", "finalize", "other", "other")),
    ("PUT", "/api/v1/namespaces/other/status", ("update", "", "namespaces", "status", "other", "other")),
    # verb identification
    ("PATCH", "/api/v1/namespaces/other/pods/foo", ("patch", "", "pods", "", "other", "foo")),
    ("DELETE", "/api/v1/namespaces/other/pods/foo", ("delete", "", "pods", "", "other", "foo")),
    ("POST", "/api/v1/namespaces/other/pods", ("create", "", "pods", "", "other", "")),
    # deletecollection verb identification
    ("DELETE", "/api/v1/nodes", ("deletecollection", "", "nodes", "", "", "")),
    ("DELETE", "/api/v1/namespaces", ("deletecollection", "", "namespaces", "", "", "")),
    ("DELETE", "/api/v1/namespaces/other/pods", ("deletecollection", "", "pods", "", "other", "")),
    (
        "DELETE",
        "/apis/extensions/v1/namespaces/other/pods",
        ("deletecollection", "extensions", "pods", "", "other", ""),
    ),
    # api group and version identification
    ("POST", "/apis/extensions/v1/namespaces/other/pods", ("create", "extensions", "pods", "", "other", "")),
    (
        "POST",
        "/apis/extensions/v1beta3/namespaces/other/pods",
        ("create", "extensions", "pods", "", "other", ""),
    ),
    # TestFieldSelectorParsing: a list or watch of one object by metadata.name is for that name;
    # an invalid selector names nothing (and a watch stays a watch)
    ("GET", "/apis/group/version/resource", ("list", "group", "resource", "", "", "")),
    (
        "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1",
        ("list", "group", "resource", "", "", "name1"),
    ),
    (
        "GET",
        "/apis/group/version/resource?watch=true&fieldSelector=metadata.name=name1",
        ("watch", "group", "resource", "", "", "name1"),
    ),
    ("GET", "/apis/group/version/resource?fieldSelector=foo=bar", ("list", "group", "resource", "", "", "")),
    (
        "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo",
        ("list", "group", "resource", "", "", ""),
    ),
    (
        "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=true",
        ("watch", "group", "resource", "", "", ""),
    ),
    (
        "GET",
        "/apis/group/version/resource?fieldSelector=metadata.name=name1,foo&watch=false",
        ("list", "group", "resource", "", "", ""),
    ),
]

# The same rules on what gpuctl, kubectl and helm send to the sim.
GPUCTL_RESOURCE_CASES: list[tuple[str, str, Expected]] = [
    ("GET", "/api/v1/namespaces/gpuctl/pods/verify-0/log", ("get", "", "pods", "log", "gpuctl", "verify-0")),
    (
        "GET",
        "/api/v1/namespaces/gpuctl/pods/verify-0/log?follow=true&container=smi",
        ("get", "", "pods", "log", "gpuctl", "verify-0"),
    ),
    (
        "POST",
        "/api/v1/namespaces/default/pods/train-1/eviction",
        ("create", "", "pods", "eviction", "default", "train-1"),
    ),
    ("PATCH", "/api/v1/nodes/gpu-0/status", ("patch", "", "nodes", "status", "", "gpu-0")),
    ("GET", "/api/v1/nodes/gpu-0/status", ("get", "", "nodes", "status", "", "gpu-0")),
    ("PATCH", "/api/v1/nodes/gpu-0", ("patch", "", "nodes", "", "", "gpu-0")),
    ("PATCH", "/api/v1/nodes/gpu-0?dryRun=All&fieldManager=gpuctl", ("patch", "", "nodes", "", "", "gpu-0")),
    ("GET", "/api/v1/nodes?labelSelector=nvidia.com%2Fgpu.present%3Dtrue", ("list", "", "nodes", "", "", "")),
    (
        "GET",
        "/api/v1/nodes?fieldSelector=metadata.name%3Dgpu-0&watch=true",
        ("watch", "", "nodes", "", "", "gpu-0"),
    ),
    (
        "GET",
        "/api/v1/nodes?fieldSelector=metadata.name%21%3Dgpu-0",
        ("list", "", "nodes", "", "", ""),
    ),
    # strconv-free bool parsing of kube's query conversion: only absent, "0" and "false" are false
    ("GET", "/api/v1/pods?watch=True", ("watch", "", "pods", "", "", "")),
    ("GET", "/api/v1/pods?watch=FALSE", ("list", "", "pods", "", "", "")),
    ("GET", "/api/v1/pods?watch=yes", ("watch", "", "pods", "", "", "")),
    ("GET", "/api/v1/pods?watch=", ("watch", "", "pods", "", "", "")),
    # the /watch/ prefix sets the verb before any name is read: its field selector names nothing
    ("GET", "/api/v1/watch/nodes?fieldSelector=metadata.name%3Dgpu-0", ("watch", "", "nodes", "", "", "")),
    (
        "GET",
        "/apis/apps/v1/namespaces/kube-system/daemonsets?watch=1&resourceVersion=12",
        ("watch", "apps", "daemonsets", "", "kube-system", ""),
    ),
    (
        "DELETE",
        "/api/v1/namespaces/gpuctl/pods?labelSelector=app.kubernetes.io%2Fmanaged-by%3Dgpuctl",
        ("deletecollection", "", "pods", "", "gpuctl", ""),
    ),
    (
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        ("create", "authorization.k8s.io", "selfsubjectaccessreviews", "", "", ""),
    ),
    (
        "PATCH",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/gpuctl-verify",
        ("patch", "rbac.authorization.k8s.io", "clusterroles", "", "", "gpuctl-verify"),
    ),
    (
        "GET",
        "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dgpu-0",
        ("list", "resource.k8s.io", "resourceslices", "", "", ""),
    ),
]

# TestGetAPIRequestInfo's error cases and TestGetNonAPIRequestInfo's `false` rows: no resource
# request; the verb is the method in lower case and the path the URL's path as sent.
UPSTREAM_NON_RESOURCE_PATHS = [
    "/",
    "/api/version/",
    "/apis/group/version/",
    "/badprefix/version/resource",
    "/apis/version/resource",
    "/not-api/version/resource",
    "/apis/extensions/v1beta1",
    "/apis/extensions/v1beta1/",
    "/api/version",
    "/api",
]
GPUCTL_NON_RESOURCE: list[tuple[str, str, str, str]] = [
    ("GET", "/version", "get", "/version"),
    ("GET", "/version/", "get", "/version/"),
    ("GET", "/metrics", "get", "/metrics"),
    ("GET", "/readyz?verbose", "get", "/readyz"),
    ("GET", "/apis/apps/v1", "get", "/apis/apps/v1"),
    ("GET", "/openapi/v3", "get", "/openapi/v3"),
    ("POST", "/apis", "post", "/apis"),
]


def _attributes(method: str, target: str) -> Attributes:
    return request_attributes(Request(method, target, {}))


def _resource(attributes: Attributes) -> Expected:
    assert attributes.resource_request
    return (
        attributes.verb,
        attributes.api_group,
        attributes.resource,
        attributes.subresource,
        attributes.namespace,
        attributes.name,
    )


@pytest.mark.parametrize(("method", "target", "expected"), UPSTREAM_RESOURCE_CASES + GPUCTL_RESOURCE_CASES)
def test_a_resource_request_has_the_attributes_kube_apiserver_gives_it(
    method: str, target: str, expected: Expected
) -> None:
    assert _resource(_attributes(method, target)) == expected


@pytest.mark.parametrize("path", UPSTREAM_NON_RESOURCE_PATHS)
def test_a_path_that_names_no_resource_is_a_non_resource_request(path: str) -> None:
    attributes = _attributes("GET", path)
    assert not attributes.resource_request
    assert (attributes.verb, attributes.path) == ("get", path)


@pytest.mark.parametrize(("method", "target", "verb", "path"), GPUCTL_NON_RESOURCE)
def test_a_non_resource_request_is_its_method_and_path(
    method: str, target: str, verb: str, path: str
) -> None:
    attributes = _attributes(method, target)
    assert not attributes.resource_request
    assert (attributes.verb, attributes.path) == (verb, path)


@pytest.mark.parametrize(
    "target",
    [
        "/api/version/resource",
        "/apis/group/version/resource/name/subresource",
        "/api/version/resource/name/subresource",
        "/apis/batch/v1/job",
        "/apis/batch/v1/job/foo",
        "/apis/batch/v1/job/foo/scale",
    ],
)
def test_the_upstream_resource_paths_are_resource_requests(target: str) -> None:
    assert _attributes("GET", target).resource_request
