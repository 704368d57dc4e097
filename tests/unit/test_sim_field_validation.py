"""Server-side field validation and the OpenAPI v3 documents of the simulated cluster (no HTTP)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuctl.sim.api import kinds, openapi
from gpuctl.sim.api.api_errors import ApiError
from gpuctl.sim.api.validation import FieldValidation, warning_header

PODS = kinds.lookup("", "v1", "pods")
DAEMONSETS = kinds.lookup("apps", "v1", "daemonsets")


def _pod(**extra: Any) -> dict[str, Any]:
    container = {"name": "smi", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": "1"}}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"any.label/goes": "x"}, "annotations": {"a": "b"}},
        "spec": {"containers": [dict(container, **extra)], "nodeSelector": {"k": "v"}},
    }


def test_a_known_object_passes_untouched() -> None:
    assert PODS is not None
    body, check = _pod(), FieldValidation("Strict")
    check.check_decoded(PODS, body)
    assert body == _pod()
    assert check.warnings == []


def test_strict_refuses_with_the_real_message() -> None:
    assert PODS is not None
    with pytest.raises(ApiError) as refused:
        FieldValidation("Strict").check_decoded(PODS, _pod(imagePullPolicyy="Always"))
    assert refused.value.code == 400
    assert refused.value.reason == "BadRequest"
    assert refused.value.message == (
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "spec.containers[0].imagePullPolicyy"'
    )


def test_warn_prunes_and_collects_every_unknown_field() -> None:
    assert DAEMONSETS is not None
    body = {"spec": {"foo": 1, "template": {"spec": {"containers": [{"name": "c", "bar": {}}]}}}}
    check = FieldValidation()  # Warn: the default when the query has no fieldValidation
    check.check_decoded(DAEMONSETS, body)
    assert check.warnings == [
        'unknown field "spec.foo"',
        'unknown field "spec.template.spec.containers[0].bar"',
    ]
    assert body == {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}


def test_ignore_prunes_silently() -> None:
    assert PODS is not None
    body, check = _pod(bogus=True), FieldValidation("Ignore")
    check.check_decoded(PODS, body)
    assert body == _pod()
    assert check.warnings == []


def test_a_patch_is_refused_as_invalid() -> None:
    assert PODS is not None
    with pytest.raises(ApiError) as refused:
        FieldValidation("Strict").check_patched(PODS, _pod(typo=1), {"spec": {"typo": 1}})
    assert refused.value.code == 422
    assert refused.value.message.startswith('"" is invalid: patch: Invalid value: ')
    assert refused.value.message.endswith('strict decoding error: unknown field "spec.containers[0].typo"')


def test_server_side_apply_refuses_unknown_fields_even_when_ignoring() -> None:
    assert PODS is not None
    with pytest.raises(ApiError) as refused:
        FieldValidation.check_applied(PODS, _pod(typo=1), "default", "p")
    assert refused.value.code == 500
    assert refused.value.message == (
        "failed to create typed patch object (default/p; /v1, Kind=Pod): "
        '.spec.containers[name="smi"].typo: field not declared in schema'
    )


@pytest.mark.parametrize("value", ["strict", "Bogus"])
def test_an_unsupported_directive_is_invalid(value: str) -> None:
    with pytest.raises(ApiError) as refused:
        FieldValidation.from_query(value, "CreateOptions")
    assert refused.value.code == 422
    assert refused.value.message == (
        f'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "{value}": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )


def test_warning_header_quotes_the_message() -> None:
    assert warning_header('unknown field "spec.foo"') == '299 - "unknown field \\"spec.foo\\""'


def test_root_document_lists_the_group_versions_the_scenario_serves() -> None:
    always = {
        "api/v1",
        "apis/apps/v1",
        "apis/node.k8s.io/v1",
        "apis/policy/v1",
        "apis/coordination.k8s.io/v1",
        "apis/scheduling.k8s.io/v1",
        "apis/rbac.authorization.k8s.io/v1",
        "apis/admissionregistration.k8s.io/v1",
        "apis/apiextensions.k8s.io/v1",
        "apis/authorization.k8s.io/v1",
    }
    dra = {
        "apis/resource.k8s.io/v1",
        "apis/resource.k8s.io/v1beta2",
    }  # as discovery: with `gpuAllocation: dra`
    assert set(openapi.root_document(kinds.NO_GATES)["paths"]) == always
    assert openapi.group_version_document("apis/resource.k8s.io/v1", kinds.NO_GATES) is None
    assert openapi.group_version_document("apis/resource.k8s.io/v1", kinds.gates_for(True)) is not None
    paths = openapi.root_document(kinds.gates_for(True))["paths"]
    assert set(paths) == always | dra
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    assert len(url.split("hash=")[1]) == 128
    assert openapi.group_version_document("apis/batch/v1") is None


def test_patch_operations_declare_field_validation_but_not_strategic_merge() -> None:
    for gv_path in openapi.group_versions():
        document = json.loads(openapi.group_version_document(gv_path) or b"{}")
        assert document["openapi"] == "3.0.0"
        patches = [item["patch"] for item in document["paths"].values() if "patch" in item]
        for operation in patches:
            names = {(p["name"], p["in"]) for p in operation["parameters"]}
            assert {("fieldValidation", "query"), ("dryRun", "query"), ("force", "query")} <= names
            assert "application/strategic-merge-patch+json" not in operation["requestBody"]["content"]
            assert operation["x-kubernetes-action"] == "patch"
        assert len(patches) >= 1 or gv_path == "apis/authorization.k8s.io/v1"


def test_daemonset_schema_references_core_pod_spec() -> None:
    document = json.loads(openapi.group_version_document("apis/apps/v1") or b"{}")
    schemas = document["components"]["schemas"]
    daemonset = schemas["io.k8s.api.apps.v1.DaemonSet"]
    assert daemonset["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "DaemonSet", "version": "v1"}
    ]
    template = schemas["io.k8s.api.core.v1.PodTemplateSpec"]["properties"]["spec"]
    assert template["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    tolerations = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["tolerations"]
    assert tolerations["items"]["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Toleration"}]
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
