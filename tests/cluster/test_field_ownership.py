"""Field ownership in the simulated cluster: a real kubectl changes a field gpuctl applied, and the
next server-side apply (gpuctl's or kubectl's) is refused with the API server's conflict, as a real
one refuses it, until `--force-conflicts` takes the field over.

The conflict wording is the API server's (k8s.io/apimachinery, pkg/util/managedfields/internal/
conflict.go); real output of the same shape, e.g. https://github.com/pulumi/pulumi-kubernetes/issues/2491:
`Apply failed with 4 conflicts: conflicts with "gkebackup" using apps/v1:` followed by
`- .spec.template.spec.containers[name="project"].image` and `...env[name="JAVA_OPTS"].value` lines.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.kubectl import Kubectl, needs_kubectl

pytestmark = [needs_kubectl, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

DAEMONSET = "nvidia-device-plugin-daemonset"
CONTAINER = 'containers[name="nvidia-device-plugin-ctr"]'
IMAGE_FIELD = f".spec.template.spec.{CONTAINER}.image"
MIG_FIELD = f'.spec.template.spec.{CONTAINER}.env[name="MIG_STRATEGY"].value'
OTHER_IMAGE = "registry.example/k8s-device-plugin:patched"
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "absent",
    "nodes": [{"name": "gpu-{i}", "count": 1, "gpus": 2, "labels": {"nvidia.com/gpu.count": "2"}}],
}


def _bootstrap(cli: Callable[..., Any], kubectl: Kubectl, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(
        "bootstrap", "--phase", "cluster", "--kubeconfig", kubectl.cluster.kubeconfig, "-o", "json", *args
    )
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def _daemonset(kubectl: Kubectl) -> dict[str, Any]:
    out = kubectl.ok("get", "ds", "-n", "kube-system", DAEMONSET, "-o", "json", "--show-managed-fields")
    return dict(json.loads(out))


def _image(daemonset: dict[str, Any]) -> str:
    return str(daemonset["spec"]["template"]["spec"]["containers"][0]["image"])


def _managers(daemonset: dict[str, Any]) -> dict[str, str]:
    """manager → its fieldsV1, as JSON text (to look for a field in)."""
    return {
        entry["manager"]: json.dumps(entry["fieldsV1"]) for entry in daemonset["metadata"]["managedFields"]
    }


def _objects(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {obj["kind"]: obj for obj in report["cluster"]["objects"]}


def _edit_image(kubectl: Kubectl, tmp_path: Path, image: str) -> None:
    """`kubectl edit` with an editor that rewrites the container's image (field manager kubectl-edit)."""
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import re, sys\n"
        "path = sys.argv[1]\n"
        "text = open(path).read()\n"
        f"open(path, 'w').write(re.sub(r'image: .*', 'image: {image}', text, count=1))\n",
        encoding="utf-8",
    )
    kubectl.env["KUBE_EDITOR"] = f"{sys.executable} {editor}"
    assert "edited" in kubectl.ok("edit", "-n", "kube-system", f"ds/{DAEMONSET}")


@pytest.fixture
def kubectl(sim: Callable[..., Any], tmp_path: Path) -> Kubectl:
    return Kubectl(sim(SCENARIO), tmp_path)


def test_bootstrap_reports_a_field_kubectl_changed_and_takes_it_over_with_force(
    kubectl: Kubectl, cli: Callable[..., Any]
) -> None:
    code, first = _bootstrap(cli, kubectl)
    assert code == 0, first
    applied_image = _image(_daemonset(kubectl))
    kubectl.ok(
        "set", "image", "-n", "kube-system", f"ds/{DAEMONSET}", f"nvidia-device-plugin-ctr={OTHER_IMAGE}"
    )
    before = _daemonset(kubectl)
    assert IMAGE_FIELD.rsplit(".", 1)[1] in _managers(before)["kubectl-set"]

    code, second = _bootstrap(cli, kubectl)
    assert code == 1
    daemonset = _objects(second)["DaemonSet"]
    assert daemonset["action"] == "conflict"
    assert daemonset["message"] == (
        f'Apply failed with 1 conflict: conflict with "kubectl-set" using apps/v1: {IMAGE_FIELD}'
    )
    assert _objects(second)["RuntimeClass"]["action"] == "unchanged"
    after = _daemonset(kubectl)
    # nothing written (the controller may have updated the status meanwhile)
    for part in ("generation", "managedFields", "labels", "annotations"):
        assert after["metadata"].get(part) == before["metadata"].get(part)
    assert after["spec"] == before["spec"]
    assert _image(after) == OTHER_IMAGE

    code, forced = _bootstrap(cli, kubectl, "--force-conflicts")
    assert code == 0, forced
    assert _objects(forced)["DaemonSet"]["action"] == "configured"
    taken = _daemonset(kubectl)
    assert _image(taken) == applied_image
    assert "kubectl-set" not in _managers(taken)  # image was all it owned
    assert '"f:image"' in _managers(taken)["gpuctl"]

    code, again = _bootstrap(cli, kubectl)
    assert code == 0
    assert again["cluster"]["writes"] == 0


def test_kubectl_server_side_apply_gets_the_real_conflict_text(
    kubectl: Kubectl, cli: Callable[..., Any], tmp_path: Path
) -> None:
    rendered = cli("render")
    assert rendered.exit_code == 0, rendered.output
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(rendered.stdout, encoding="utf-8")
    assert f"daemonset.apps/{DAEMONSET} serverside-applied" in kubectl.ok(
        "apply", "--server-side", "-f", str(manifests)
    )
    _edit_image(kubectl, tmp_path, OTHER_IMAGE)

    refused = kubectl("apply", "--server-side", "-f", str(manifests))
    assert refused.returncode == 1
    assert (
        f'error: Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: {IMAGE_FIELD}\n'
        "Please review the fields above--they currently have other managers."
    ) in refused.stderr
    kubectl.ok("set", "env", "-n", "kube-system", f"ds/{DAEMONSET}", "MIG_STRATEGY=mixed")
    refused = kubectl("apply", "--server-side", "-f", str(manifests))
    assert (
        'Apply failed with 2 conflicts: conflicts with "kubectl-edit" using apps/v1:\n'
        f"- {IMAGE_FIELD}\n"
        'conflicts with "kubectl-set" using apps/v1:\n'
        f"- {MIG_FIELD}\n"
    ) in refused.stderr

    taken = kubectl.ok("apply", "--server-side", "--force-conflicts", "-f", str(manifests))
    assert f"daemonset.apps/{DAEMONSET} serverside-applied" in taken
    managers = _managers(_daemonset(kubectl))
    assert set(managers) >= {"kubectl"}
    assert "kubectl-edit" not in managers
    assert "kubectl-set" not in managers


def test_the_same_value_is_shared_not_a_conflict(
    kubectl: Kubectl, cli: Callable[..., Any], tmp_path: Path
) -> None:
    rendered = cli("render")
    assert rendered.exit_code == 0, rendered.output
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(rendered.stdout, encoding="utf-8")
    kubectl.ok("apply", "--server-side", "-f", str(manifests))
    _edit_image(kubectl, tmp_path, OTHER_IMAGE)
    applied_image = next(
        line.split("image:", 1)[1].strip().strip('"')
        for line in rendered.stdout.splitlines()
        if "image:" in line
    )
    manifests.write_text(rendered.stdout.replace(applied_image, OTHER_IMAGE), encoding="utf-8")
    assert "serverside-applied" in kubectl.ok("apply", "--server-side", "-f", str(manifests))
    managers = _managers(_daemonset(kubectl))
    assert '"f:image"' in managers["kubectl"]
    assert '"f:image"' in managers["kubectl-edit"]


def test_the_conflict_status_names_each_field_and_manager(kubectl: Kubectl, cli: Callable[..., Any]) -> None:
    from kubernetes.client import AppsV1Api
    from kubernetes.client.exceptions import ApiException

    assert _bootstrap(cli, kubectl)[0] == 0
    kubectl.ok(
        "set", "image", "-n", "kube-system", f"ds/{DAEMONSET}", f"nvidia-device-plugin-ctr={OTHER_IMAGE}"
    )
    apps = AppsV1Api(kubectl.cluster.api_client())
    live = apps.read_namespaced_daemon_set(DAEMONSET, "kube-system")
    image = "nvcr.io/nvidia/k8s-device-plugin:v0.0.1"
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DAEMONSET, "namespace": "kube-system"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "nvidia-device-plugin-ctr", "image": image}]}}
        },
    }
    with pytest.raises(ApiException) as refused:
        apps.patch_namespaced_daemon_set(
            DAEMONSET,
            "kube-system",
            body,
            field_manager="gpuctl",
            _content_type="application/apply-patch+yaml",
        )
    status = json.loads(refused.value.body)
    assert (refused.value.status, status["reason"]) == (409, "Conflict")
    assert status["details"] == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "kubectl-set" using apps/v1',
                "field": IMAGE_FIELD,
            }
        ]
    }
    unchanged = apps.read_namespaced_daemon_set(DAEMONSET, "kube-system")
    assert unchanged.spec == live.spec
    assert unchanged.metadata.managed_fields == live.metadata.managed_fields
