"""The least-privilege roles `gpuctl render --rbac` prints, for every stack: no cluster-wide pod-log
read, pod logs only through Roles in the namespaces verify reads them in, no write outside what each
command does, and every object valid for each supported Kubernetes version (docs/rbac.md)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

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
from tests.rendered import validate_strictly

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
    "verify-deployment": (
        RenderOptions(
            verify_deployment=True, gpuctl_image="example.org/gpuctl:0.1.0", verify_namespace="gpu-proof"
        ),
        {"gpu-proof", DEVICE_PLUGIN_NAMESPACE},
    ),
}
# The only writes the roles grant: (kind, resource) → verbs beyond get/list/watch.
WRITES = {
    ("ClusterRole", "nodes"): {"patch"},  # taint-gpu-nodes
    ("ClusterRole", "nodes/status"): {"patch"},  # verify --gate: the GPUProven condition
    ("ClusterRole", "devicetaintrules"): {"create", "delete"},  # verify --gate on DRA: per-GPU gates
    ("ClusterRole", "pods/eviction"): {"create"},  # the node-by-node upgrade's drains
    ("Role", "pods"): {"create", "deletecollection"},  # verification pods
    ("Role", "resourceclaimtemplates"): {"create", "deletecollection"},
    # verify --level fabric: gpuctl's launcher's Service and SSH Secret, or the MPIJob
    ("Role", "services"): {"create", "delete"},
    ("Role", "secrets"): {"create", "delete"},
    ("Role", "mpijobs"): {"create", "delete"},
}


def _rbac_documents(options: RenderOptions) -> list[dict[str, Any]]:
    own = ("rbac-", "verify-cronjob", "verify-deployment")
    files = [f for f in render_manifests(options).files if f.filename.startswith(own)]
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


def _holdings(docs: list[dict[str, Any]]) -> dict[str, set[str]]:
    """Subject (KIND:NAMESPACE:NAME) -> the roles bound to it ("KIND/NAMESPACE/NAME")."""
    held: dict[str, set[str]] = {}
    for doc in docs:
        if doc["kind"] in ("RoleBinding", "ClusterRoleBinding"):
            ref = doc["roleRef"]
            namespace = doc["metadata"].get("namespace", "") if ref["kind"] == "Role" else ""
            for subject in doc["subjects"]:
                who = f"{subject['kind']}:{subject.get('namespace', '')}:{subject['name']}"
                held.setdefault(who, set()).add(f"{ref['kind']}/{namespace}/{ref['name']}")
    return held


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_every_role_is_bound_and_each_account_holds_only_its_commands_roles(stack: str) -> None:
    """One ServiceAccount per role in the verification namespace (the upgrade's holds verify's
    roles too: it proves each node); --rbac-subject binds every role to that one subject."""
    options = STACKS[stack][0]
    docs = _rbac_documents(options)
    held = _holdings(docs)
    roles = {f"{doc['kind']}/{doc['metadata'].get('namespace', '')}/{doc['metadata']['name']}"
             for doc in docs if doc["kind"] in ("Role", "ClusterRole")}  # fmt: skip
    assert set().union(*held.values()) == roles  # every role is bound
    if options.rbac_subject is not None:
        assert len(held) == 1  # one subject gets every role
        return
    verify = {role for role in roles if "gpuctl-verify" in role}
    namespace = options.verify_namespace
    expected = {f"ServiceAccount:{namespace}:gpuctl-verify": verify}
    if options.rbac:
        expected |= {
            f"ServiceAccount:{namespace}:gpuctl-taint": {"ClusterRole//gpuctl-taint"},
            f"ServiceAccount:{namespace}:gpuctl-status": {"ClusterRole//gpuctl-status"},
            f"ServiceAccount:{namespace}:gpuctl-upgrade": verify | {"ClusterRole//gpuctl-upgrade"},
        }
    assert held == expected
    accounts = {f"ServiceAccount:{doc['metadata']['namespace']}:{doc['metadata']['name']}"
                for doc in docs if doc["kind"] == "ServiceAccount"}  # fmt: skip
    assert accounts == set(expected)  # the accounts are rendered too


@pytest.mark.parametrize("stack", sorted(STACKS))
def test_node_writes_are_fenced_by_an_admission_policy_per_account(stack: str) -> None:
    """RBAC grants `patch nodes` whole: verify's (gate) and taint's accounts each get a
    ValidatingAdmissionPolicy matching only their own username; a shared --rbac-subject gets none
    (one fence would stop the other command's writes)."""
    options = STACKS[stack][0]
    docs = _rbac_documents(options)
    policies = {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == "ValidatingAdmissionPolicy"}
    bindings = {doc["spec"]["policyName"]: doc for doc in docs if doc["kind"].endswith("PolicyBinding")}
    if options.rbac_subject is not None:
        assert not policies
        return
    # verify's account has a second policy for its node status writes (the GPUProven condition)
    verify = {"gpuctl-verify", "gpuctl-verify-status"}
    assert set(policies) == set(bindings) == (verify | {"gpuctl-taint"} if options.rbac else verify)
    for name, policy in policies.items():
        (condition,) = policy["spec"]["matchConditions"]
        account = name.removesuffix("-status")
        username = f"system:serviceaccount:{options.verify_namespace}:{account}"
        assert condition["expression"] == f"request.userInfo.username == '{username}'"
        assert policy["spec"]["failurePolicy"] == "Fail"
        assert bindings[name]["spec"]["validationActions"] == ["Deny"]


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


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease", "default"])
@pytest.mark.parametrize("what", ["--rbac", "--verify-cronjob", "--verify-deployment"])
def test_a_builtin_verification_namespace_is_refused(namespace: str, what: str) -> None:
    """gpuctl's accounts, its pods and their Pod Security labels ("restricted" would stop
    kube-system's privileged pods) need a namespace of their own."""
    image = () if what == "--rbac" else ("--gpuctl-image", "example.org/gpuctl:0.1.0")
    refused = _gpuctl("render", what, *image, "--verify-namespace", namespace)
    assert refused.returncode == 2, refused.stderr
    error, hint = refused.stderr.splitlines()
    assert error.startswith(f"error: --verify-namespace {namespace}: a namespace every cluster has")
    assert hint.startswith("hint:")
    assert "--verify-namespace gpuctl-system" in hint
    assert not refused.stdout


@pytest.mark.parametrize("version", SUPPORTED_KUBERNETES_VERSIONS)
def test_rendered_roles_validate_strictly(version: str) -> None:
    for options, _ in STACKS.values():
        for document in _rbac_documents(options):
            validate_strictly(document, version)


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
