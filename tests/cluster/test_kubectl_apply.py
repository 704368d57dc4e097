"""Plain `kubectl apply -f` / `kubectl create -f` (client-side validation on, the default) against the
simulated cluster: it serves OpenAPI v3 and honours fieldValidation like a real API server."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.kubectl import Kubectl as BoundKubectl
from tests.kubectl import needs_kubectl
from tests.polling import wait_until

pytestmark = needs_kubectl

JSON_BODY = {"Content-Type": "application/json"}

SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "absent",
    "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 2}],
}
DAEMONSET = "nvidia-device-plugin-daemonset"
TYPO = 'unknown field "spec.template.spec.containers[0].imagePullPolicyy"'


@dataclass
class Kubectl(BoundKubectl):
    """`manifests` is what `gpuctl render` printed for the cluster; `ok` also refuses warnings."""

    manifests: str = ""

    def ok(self, *args: str) -> str:
        done = self(*args)
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stderr}"
        assert "warning" not in done.stderr.lower(), done.stderr
        return done.stdout

    def file(self, text: str, name: str = "manifests.yaml") -> str:
        path = self.home / name
        path.write_text(text, encoding="utf-8")
        return str(path)

    def daemonset(self, *flags: str) -> dict[str, Any]:
        return json.loads(self.ok("get", "ds", "-n", "kube-system", DAEMONSET, "-o", "json", *flags))


@pytest.fixture
def kubectl(sim: Callable[..., Any], cli: Callable[..., Any], tmp_path: Path) -> Kubectl:
    cluster = sim(SCENARIO)
    rendered = cli("render")
    assert rendered.exit_code == 0, rendered.output
    return Kubectl(cluster, tmp_path, manifests=rendered.stdout)


def _with_typo(manifests: str) -> str:
    marker = "        name: nvidia-device-plugin-ctr\n"
    assert marker in manifests
    return manifests.replace(marker, marker + "        imagePullPolicyy: Always\n")


def _modified(manifests: str) -> str:
    """The rendered manifests with an env var dropped, another changed and a toleration added."""
    dropped = '        - name: FAIL_ON_INIT_ERROR\n          value: "false"\n'
    mig, toleration = '          value: "none"\n', "      priorityClassName:"
    for text in (dropped, mig, toleration):
        assert text in manifests
    extra = "      - key: dedicated\n        operator: Exists\n        effect: NoSchedule\n"
    changed = manifests.replace(dropped, "").replace(mig, '          value: "single"\n')
    return changed.replace(toleration, extra + toleration)


def _mig_strategy(kubectl: Kubectl) -> str:
    env = kubectl.daemonset()["spec"]["template"]["spec"]["containers"][0]["env"]
    return str(next(item["value"] for item in env if item["name"] == "MIG_STRATEGY"))


def test_apply_installs_the_device_plugin_and_reapply_is_unchanged(kubectl: Kubectl) -> None:
    manifests = kubectl.file(kubectl.manifests)
    out = kubectl.ok("apply", "-f", manifests)
    assert f"daemonset.apps/{DAEMONSET} created" in out
    assert "runtimeclass.node.k8s.io/nvidia created" in out
    wait_until(
        lambda: kubectl.cluster.allocatable_gpus() == {"gpu-0": 2, "gpu-1": 2},
        "both nodes to advertise nvidia.com/gpu",
    )
    again = kubectl.ok("apply", "-f", manifests)
    assert f"daemonset.apps/{DAEMONSET} unchanged" in again
    assert "runtimeclass.node.k8s.io/nvidia unchanged" in again


def test_modify_and_reapply_merges_lists_like_a_real_cluster(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", kubectl.file(kubectl.manifests))
    # another actor adds an env var: a real three-way strategic merge keeps it (env merges by name).
    # Computed from schemas without patch strategies, the patch would replace env and could not
    # delete FAIL_ON_INIT_ERROR (the sim merges env by name): see gpuctl/sim/api/openapi.py.
    kubectl.ok("set", "env", "-n", "kube-system", f"ds/{DAEMONSET}", "EXTRA=1")
    out = kubectl.ok("apply", "-f", kubectl.file(_modified(kubectl.manifests), "modified.yaml"))
    assert f"daemonset.apps/{DAEMONSET} configured" in out
    spec = kubectl.daemonset()["spec"]["template"]["spec"]
    [container] = spec["containers"]
    # dropped from the manifest: deleted ($patch: delete); added by someone else: kept
    assert container["env"] == [{"name": "MIG_STRATEGY", "value": "single"}, {"name": "EXTRA", "value": "1"}]
    assert container["volumeMounts"] == [
        {"name": "kubelet-device-plugins-dir", "mountPath": "/var/lib/kubelet/device-plugins"}
    ]
    # tolerations have no merge key: the applied list replaces the old one, exactly as written
    assert spec["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "gpuctl.io/unproven", "operator": "Exists", "effect": "NoSchedule"},  # the gate
        {"key": "readiness.k8s.io/gpu-proven", "operator": "Exists"},  # the readiness rule's
        {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
    ]
    assert "unchanged" in kubectl.ok("apply", "-f", kubectl.file(_modified(kubectl.manifests), "again.yaml"))


def test_create_server_side_apply_and_server_dry_run(kubectl: Kubectl) -> None:
    manifests = kubectl.file(kubectl.manifests)
    dry = kubectl.ok("apply", "--dry-run=server", "-f", manifests)
    assert f"daemonset.apps/{DAEMONSET} created (server dry run)" in dry
    assert "NotFound" in kubectl("get", "ds", "-n", "kube-system", DAEMONSET).stderr
    assert f"daemonset.apps/{DAEMONSET} created" in kubectl.ok("create", "--save-config", "-f", manifests)
    twice = kubectl("create", "-f", manifests)
    assert twice.returncode == 1
    assert "AlreadyExists" in twice.stderr
    modified = kubectl.file(_modified(kubectl.manifests), "modified.yaml")
    assert "configured (server dry run)" in kubectl.ok("apply", "--dry-run=server", "-f", modified)
    assert _mig_strategy(kubectl) == "none"
    assert f"daemonset.apps/{DAEMONSET} serverside-applied" in kubectl.ok(
        "apply", "--server-side", "--force-conflicts", "-f", modified
    )
    assert _mig_strategy(kubectl) == "single"


def test_server_side_apply_on_an_empty_cluster(kubectl: Kubectl) -> None:
    out = kubectl.ok("apply", "--server-side", "-f", kubectl.file(kubectl.manifests))
    assert f"daemonset.apps/{DAEMONSET} serverside-applied" in out
    managed = kubectl.daemonset("--show-managed-fields")["metadata"]["managedFields"]
    assert [(entry["manager"], entry["operation"]) for entry in managed] == [("kubectl", "Apply")]


def test_a_typo_is_refused_and_nothing_is_stored(kubectl: Kubectl) -> None:
    done = kubectl("apply", "-f", kubectl.file(_with_typo(kubectl.manifests)))
    assert done.returncode == 1
    assert "Error from server (BadRequest)" in done.stderr
    assert f'DaemonSet in version "v1" cannot be handled as a DaemonSet: strict decoding error: {TYPO}' in (
        done.stderr
    )
    assert "NotFound" in kubectl("get", "ds", "-n", "kube-system", DAEMONSET).stderr
    created = kubectl("create", "-f", kubectl.file(_with_typo(kubectl.manifests)))
    assert created.returncode == 1
    assert TYPO in created.stderr


@pytest.mark.parametrize(("flag", "warned"), [("--validate=warn", True), ("--validate=false", False)])
def test_a_typo_passes_when_validation_is_relaxed(kubectl: Kubectl, flag: str, warned: bool) -> None:
    done = kubectl("apply", flag, "-f", kubectl.file(_with_typo(kubectl.manifests)))
    assert done.returncode == 0, done.stderr
    assert f"daemonset.apps/{DAEMONSET} created" in done.stdout
    assert (f"Warning: {TYPO}" in done.stderr) is warned
    # the server prunes what it does not know, as a real one does
    assert "imagePullPolicyy" not in kubectl.daemonset()["spec"]["template"]["spec"]["containers"][0]


def test_a_typo_in_a_patch_of_an_existing_object_is_refused(kubectl: Kubectl) -> None:
    kubectl.ok("apply", "-f", kubectl.file(kubectl.manifests))
    before = kubectl.daemonset()
    done = kubectl("apply", "-f", kubectl.file(_with_typo(kubectl.manifests), "typo.yaml"))
    assert done.returncode == 1
    assert f"strict decoding error: {TYPO}" in done.stderr
    after = kubectl.daemonset()
    assert after["spec"] == before["spec"]
    assert after["metadata"]["generation"] == before["metadata"]["generation"]


def test_server_side_apply_refuses_unknown_fields_whatever_the_directive(kubectl: Kubectl) -> None:
    done = kubectl(
        "apply", "--server-side", "--validate=false", "-f", kubectl.file(_with_typo(kubectl.manifests))
    )
    assert done.returncode == 1
    assert (
        f"failed to create typed patch object (kube-system/{DAEMONSET}; apps/v1, Kind=DaemonSet): "
        '.spec.template.spec.containers[name="nvidia-device-plugin-ctr"].imagePullPolicyy: '
        "field not declared in schema"
    ) in done.stderr
    assert "NotFound" in kubectl("get", "ds", "-n", "kube-system", DAEMONSET).stderr


def test_rbac_manifests_apply_with_validation(kubectl: Kubectl, cli: Callable[..., Any]) -> None:
    rendered = cli("render", "--rbac")
    assert rendered.exit_code == 0, rendered.output
    namespace = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gpuctl-system\n"
    kubectl.ok("apply", "-f", kubectl.file(namespace, "namespace.yaml"))
    out = kubectl.ok("apply", "-f", kubectl.file(rendered.stdout, "rbac.yaml"))
    assert "clusterrole.rbac.authorization.k8s.io/" in out
    assert "unchanged" not in out


def test_explain_reads_the_served_schemas(kubectl: Kubectl) -> None:
    tolerations = kubectl.ok("explain", "daemonset.spec.template.spec.tolerations")
    assert "FIELD: tolerations <[]Toleration>" in tolerations
    assert "tolerationSeconds" in tolerations
    taints = kubectl.ok("explain", "node.spec.taints")
    assert "FIELD: taints <[]Taint>" in taints
    assert "effect" in taints


def _post(cluster: Any, path: str, body: dict[str, Any]) -> tuple[int, list[str]]:
    """POST over plain HTTP; the official client refuses (client-side) to send unknown fields."""
    try:
        with cluster.open(path, data=json.dumps(body).encode(), method="POST", **JSON_BODY) as response:
            return response.status, response.headers.get_all("Warning") or []
    except urllib.error.HTTPError as error:
        return error.code, []


def test_raw_writes_get_warnings_strict_refusals_and_pruning(kubectl: Kubectl) -> None:
    from kubernetes.client import CoreV1Api

    path = "/api/v1/namespaces/default/configmaps"
    body = {"metadata": {"name": "plugin-config"}, "data": {"a": "1"}, "dataa": {"b": "2"}}
    assert _post(kubectl.cluster, path + "?fieldValidation=Strict", body) == (400, [])
    assert _post(kubectl.cluster, path + "?fieldValidation=strict", body) == (422, [])
    assert _post(kubectl.cluster, path, body) == (201, ['299 - "unknown field \\"dataa\\""'])
    stored = CoreV1Api(kubectl.cluster.api_client()).read_namespaced_config_map("plugin-config", "default")
    assert stored.data == {"a": "1"}
    assert "dataa" not in kubectl.ok("get", "cm", "plugin-config", "-o", "json")
