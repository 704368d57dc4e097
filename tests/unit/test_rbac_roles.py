"""The least-privilege roles `gpuctl render --rbac` prints, for every stack: no cluster-wide pod-log
read, pod logs only through Roles in the namespaces verify reads them in, no write outside what each
command does, and every object valid for each supported Kubernetes version (docs/rbac.md)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import kubernetes_validate
import pytest
import yaml

from gpuctl.core.render import (
    SUPPORTED_KUBERNETES_VERSIONS,
    RenderOptions,
    parse_rbac_subject,
    render_manifests,
)
from gpuctl.core.stacks import Stack
from gpuctl.core.verify.pod_manifest import NAMESPACE_LABELS
from gpuctl.defaults import (
    DEVICE_PLUGIN_NAMESPACE,
    DRA_DRIVER_NAMESPACE,
    GPUCTL_NAMESPACE,
    OPERATOR_NAMESPACE,
)

# name → (options, the namespaces whose pod logs verify reads: its own and the stack's plugin's)
STACKS: dict[str, tuple[RenderOptions, set[str]]] = {
    "device-plugin": (RenderOptions(rbac=True), {GPUCTL_NAMESPACE, DEVICE_PLUGIN_NAMESPACE}),
    "device-plugin-elsewhere": (
        RenderOptions(rbac=True, namespace="nvidia-device-plugin", verify_namespace="gpu-proof"),
        {"gpu-proof", "nvidia-device-plugin"},
    ),
    "operator": (RenderOptions(rbac=True, stack=Stack.OPERATOR), {GPUCTL_NAMESPACE, OPERATOR_NAMESPACE}),
    "dra": (RenderOptions(rbac=True, stack=Stack.DRA), {GPUCTL_NAMESPACE, DRA_DRIVER_NAMESPACE}),
    "log-namespaces": (
        RenderOptions(rbac=True, log_namespaces=("nvidia", "kube-system", "nvidia")),
        {GPUCTL_NAMESPACE, DEVICE_PLUGIN_NAMESPACE, "nvidia"},
    ),
    "group": (
        RenderOptions(rbac=True, rbac_subject=parse_rbac_subject("Group:gpu-admins")),
        {GPUCTL_NAMESPACE, DEVICE_PLUGIN_NAMESPACE},
    ),
    "verify-cronjob": (
        RenderOptions(
            verify_cronjob=True,
            gpuctl_image="example.org/gpuctl:0.1.0",
            verify_namespace="gpu-proof",
            stack=Stack.OPERATOR,
        ),
        {"gpu-proof", OPERATOR_NAMESPACE},
    ),
}
# The only writes the roles grant: (kind, resource) → verbs beyond get/list/watch.
WRITES = {
    ("ClusterRole", "nodes"): {"patch"},  # taint-gpu-nodes
    ("ClusterRole", "pods/eviction"): {"create"},  # the node-by-node upgrade's drains
    ("Role", "pods"): {"create", "deletecollection"},  # verification pods
    ("Role", "resourceclaimtemplates"): {"create", "deletecollection"},
}


def _rbac_documents(options: RenderOptions) -> list[dict[str, Any]]:
    files = [f for f in render_manifests(options).files if f.filename.startswith(("rbac-", "verify-cronjob"))]
    return [doc for rendered in files for doc in yaml.safe_load_all(rendered.content) if doc]


def _rules(docs: list[dict[str, Any]], kind: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(doc, rule) for doc in docs if doc["kind"] == kind for rule in doc["rules"]]


def _log_namespaces(docs: list[dict[str, Any]]) -> set[str]:
    return {
        role["metadata"]["namespace"]
        for role, rule in _rules(docs, "Role")
        if "pods/log" in rule["resources"]
    }


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_no_cluster_role_reads_pod_logs_or_grants_a_wildcard(stack: str) -> None:
    docs = _rbac_documents(STACKS[stack][0])
    for role, rule in _rules(docs, "ClusterRole") + _rules(docs, "Role"):
        granted = [*rule["apiGroups"], *rule["resources"], *rule["verbs"]]
        assert not any("*" in entry for entry in granted), (role["metadata"]["name"], rule)
    # The one pod subresource granted cluster-wide: the upgrade's evictions (no pod log, no exec).
    evictions = [(role["metadata"]["name"], rule["verbs"]) for role, rule in _rules(docs, "ClusterRole")
                 if rule["resources"] == ["pods/eviction"]]  # fmt: skip
    assert evictions == [("gpuctl-upgrade", ["create"])] if STACKS[stack][0].rbac else evictions == []
    for role, rule in _rules(docs, "ClusterRole"):
        others = [resource for resource in rule["resources"] if resource != "pods/eviction"]
        assert not any(resource.startswith("pods/") for resource in others), role["metadata"]


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_pod_logs_are_read_only_in_the_verification_and_plugin_namespaces(stack: str) -> None:
    options, expected = STACKS[stack]
    docs = _rbac_documents(options)
    assert _log_namespaces(docs) == expected
    for role, rule in _rules(docs, "Role"):
        if "pods/log" in rule["resources"]:
            assert rule["verbs"] == ["get"]
            assert rule["resources"] == ["pods/log"] or role["metadata"]["name"] == "gpuctl-verify-pods"


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_every_role_is_bound_to_the_subject_in_its_namespace(stack: str) -> None:
    docs = _rbac_documents(STACKS[stack][0])
    bindings = {
        (doc["metadata"].get("namespace", ""), doc["roleRef"]["kind"], doc["roleRef"]["name"]): doc[
            "subjects"
        ]
        for doc in docs
        if doc["kind"] in ("RoleBinding", "ClusterRoleBinding")
    }
    subjects = {str(subject) for subject in bindings.values()}
    assert len(subjects) == 1  # one subject gets every role
    for doc in docs:
        if doc["kind"] in ("Role", "ClusterRole"):
            assert (doc["metadata"].get("namespace", ""), doc["kind"], doc["metadata"]["name"]) in bindings


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_writes_are_only_those_the_commands_make(stack: str) -> None:
    """No namespace creation, no cluster-wide pod or claim writes: only taint's node patch, the
    upgrade's evictions and, in the verification namespace, verify's own pods and claim templates."""
    docs = _rbac_documents(STACKS[stack][0])
    for kind in ("ClusterRole", "Role"):
        for role, rule in _rules(docs, kind):
            writes = set(rule["verbs"]) - {"get", "list", "watch"}
            for resource in rule["resources"]:
                assert writes <= WRITES.get((kind, resource), set()), (role["metadata"]["name"], resource)
            if writes and kind == "Role":
                assert role["metadata"]["name"] == "gpuctl-verify-pods"


def test_the_verification_namespace_is_rendered_with_the_labels_verify_gives_it() -> None:
    """verify then only checks that it exists (get, that namespace alone)."""
    docs = _rbac_documents(RenderOptions(rbac=True, verify_namespace="gpu-proof"))
    namespaces = [doc for doc in docs if doc["kind"] == "Namespace"]
    assert [(doc["metadata"]["name"], doc["metadata"]["labels"]) for doc in namespaces] == [
        ("gpu-proof", NAMESPACE_LABELS)
    ]
    verify = next(
        doc for doc in docs if doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "gpuctl-verify"
    )
    namespace_rules = [rule for rule in verify["rules"] if rule["resources"] == ["namespaces"]]
    assert namespace_rules == [
        {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": ["gpu-proof"], "verbs": ["get"]}
    ]


@pytest.mark.parametrize("namespace", ["kube-system", "default"])
def test_a_builtin_verification_namespace_is_not_relabelled(namespace: str) -> None:
    """Applying Pod Security "restricted" to kube-system would stop its privileged pods."""
    docs = _rbac_documents(RenderOptions(rbac=True, verify_namespace=namespace))
    assert not [doc for doc in docs if doc["kind"] == "Namespace"]
    assert namespace in _log_namespaces(docs)


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
def test_rendered_roles_validate_strictly(version: str) -> None:
    for options, _ in STACKS.values():
        for document in _rbac_documents(options):
            kubernetes_validate.validate(document, version, strict=True)


def _gpuctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, check=False
    )


def test_cli_log_namespace_adds_a_role_and_needs_rbac() -> None:
    printed = _gpuctl("render", "--rbac", "--log-namespace", "nvidia-device-plugin")
    assert printed.returncode == 0, printed.stderr
    docs = [doc for doc in yaml.safe_load_all(printed.stdout) if doc]
    assert _log_namespaces(docs) == {GPUCTL_NAMESPACE, DEVICE_PLUGIN_NAMESPACE, "nvidia-device-plugin"}
    alone = _gpuctl("render", "--log-namespace", "nvidia-device-plugin")
    assert alone.returncode == 2
    assert "--log-namespace has no effect without --rbac" in alone.stderr
    bad = _gpuctl("render", "--rbac", "--log-namespace", "Not_A_Namespace")
    assert bad.returncode == 2
    assert "--log-namespace 'Not_A_Namespace': not a valid Kubernetes name" in bad.stderr
