"""`bootstrap --phase cluster` over a device plugin DaemonSet someone else created: NVIDIA's static
manifest (deployments/static/nvidia-device-plugin.yml of NVIDIA/k8s-device-plugin) applied first
with a real kubectl, as NVIDIA's README installs it.

Up to v0.17.1 that manifest names the kubelet socket volume `device-plugin`; gpuctl's (as NVIDIA's
since) names it `kubelet-device-plugins-dir`. The API server merges volumes by name, so taking
the object over with a plain forced apply leaves two volumes for one host path, and every run
wrote again. gpuctl refuses the conflict by default, naming what adopting would remove;
`--force-conflicts` adopts the object (the foreign volume removed); then a rerun writes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.kubectl import Kubectl, needs_kubectl

pytestmark = [needs_kubectl, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

DAEMONSET = "nvidia-device-plugin-daemonset"
SOCKETS = "/var/lib/kubelet/device-plugins"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "absent",
    "nodes": [{"name": "gpu-0", "gpus": 2, "labels": {"nvidia.com/gpu.count": "2"}}],
}


def static_manifest(*, volume: str, image: str, env: list[dict[str, str]]) -> dict[str, Any]:
    """The shape of NVIDIA's static device plugin manifest (its fields and values, in order)."""
    host_path: dict[str, str] = {"path": SOCKETS}
    if volume == "kubelet-device-plugins-dir":  # from v0.17.1 on: `type: Directory` as well
        host_path["type"] = "Directory"
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": DAEMONSET, "namespace": "kube-system"},
        "spec": {
            "selector": {"matchLabels": {"name": "nvidia-device-plugin-ds"}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {"name": "nvidia-device-plugin-ds"}},
                "spec": {
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "priorityClassName": "system-node-critical",
                    "containers": [
                        {
                            "image": image,
                            "name": "nvidia-device-plugin-ctr",
                            "env": env,
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [{"name": volume, "mountPath": SOCKETS}],
                        }
                    ],
                    "volumes": [{"name": volume, "hostPath": host_path}],
                },
            },
        },
    }


OLD_STATIC = static_manifest(
    volume="device-plugin",
    image="nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
    env=[{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
)
NEW_STATIC = static_manifest(
    volume="kubelet-device-plugins-dir", image="nvcr.io/nvidia/k8s-device-plugin:v0.20.0", env=[]
)


@pytest.fixture
def kubectl(sim: Callable[..., Any], tmp_path: Path) -> Kubectl:
    return Kubectl(sim(SCENARIO), tmp_path)


def _kubectl_apply(kubectl: Kubectl, tmp_path: Path, manifest: dict[str, Any]) -> None:
    path = tmp_path / "nvidia-device-plugin.yml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    assert f"daemonset.apps/{DAEMONSET} created" in kubectl.ok("apply", "-f", str(path))


def _bootstrap(cli: Callable[..., Any], kubectl: Kubectl, *args: str) -> tuple[int, dict[str, Any], Any]:
    result = cli(
        "bootstrap", "--phase", "cluster", "--kubeconfig", kubectl.cluster.kubeconfig,
        "--timeout", "30", "-o", "json", *args,
    )  # fmt: skip
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout), result


def _daemonset(kubectl: Kubectl) -> dict[str, Any]:
    out = kubectl.ok("get", "ds", "-n", "kube-system", DAEMONSET, "-o", "json", "--show-managed-fields")
    return dict(json.loads(out))


def _volumes_for_the_sockets(daemonset: dict[str, Any]) -> list[str]:
    volumes = daemonset["spec"]["template"]["spec"]["volumes"]
    return [volume["name"] for volume in volumes if volume.get("hostPath", {}).get("path") == SOCKETS]


def _daemonset_object(report: dict[str, Any]) -> dict[str, Any]:
    return next(obj for obj in report["cluster"]["objects"] if obj["kind"] == "DaemonSet")


def _writes(kubectl: Kubectl) -> int:
    counts = kubectl.cluster.server.requests_by_verb()
    return sum(counts.get(verb, 0) for verb in WRITE_VERBS)


def test_the_old_static_manifest_is_refused_then_adopted_and_a_rerun_writes_nothing(
    kubectl: Kubectl, cli: Callable[..., Any], tmp_path: Path
) -> None:
    _kubectl_apply(kubectl, tmp_path, OLD_STATIC)
    created = _daemonset(kubectl)

    code, refused, _ = _bootstrap(cli, kubectl)
    assert code == 1
    daemonset = _daemonset_object(refused)
    assert daemonset["action"] == "conflict"
    assert 'conflicts with "kubectl-client-side-apply" using apps/v1' in daemonset["message"]
    assert daemonset["foreign"] == [
        {
            "field": '.spec.template.spec.volumes[name="device-plugin"]',
            "managers": ["kubectl-client-side-apply"],
        }
    ]
    assert _daemonset(kubectl)["spec"] == created["spec"]  # nothing taken, nothing merged
    table = cli(
        "bootstrap", "--phase", "cluster", "--kubeconfig", kubectl.cluster.kubeconfig, "--timeout", "5"
    )
    assert "--force-conflicts to take these fields over (that also adopts the object" in table.stdout

    code, check, result = _bootstrap(cli, kubectl, "--check", "--force-conflicts")
    assert code == 0, result.output
    daemonset = _daemonset_object(check)
    assert daemonset["action"] == "would adopt"
    assert "-        name: device-plugin\n" in daemonset["diff"]  # the volume mount
    assert (
        "-        name: device-plugin\n+          type: Directory\n+        name: kubelet-device-plugins-dir"
        in (daemonset["diff"])
    )
    unchanged = _daemonset(kubectl)  # dry runs only: neither the spec nor the ownership moved
    assert unchanged["spec"] == created["spec"]
    assert unchanged["metadata"]["managedFields"] == created["metadata"]["managedFields"]

    code, adopted, result = _bootstrap(cli, kubectl, "--force-conflicts")
    assert code == 0, result.output
    assert _daemonset_object(adopted)["action"] == "adopted"
    taken = _daemonset(kubectl)
    assert _volumes_for_the_sockets(taken) == ["kubelet-device-plugins-dir"]
    mounts = taken["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
    assert mounts == [{"mountPath": SOCKETS, "name": "kubelet-device-plugins-dir"}]

    before = _writes(kubectl)
    code, again, result = _bootstrap(cli, kubectl)
    assert code == 0, result.output
    assert again["cluster"]["writes"] == 0
    assert {obj["action"] for obj in again["cluster"]["objects"]} == {"unchanged"}
    assert _writes(kubectl) == before  # not one request that writes, dry run or not

    code, check, result = _bootstrap(cli, kubectl, "--check")
    assert code == 0, result.output
    assert {obj["action"] for obj in check["cluster"]["objects"]} == {"unchanged"}
    assert check["cluster"]["writes"] == 0
    assert _writes(kubectl) == before


def test_the_current_static_manifest_converges_once_its_tolerations_are_taken_over(
    kubectl: Kubectl, cli: Callable[..., Any], tmp_path: Path
) -> None:
    """Same volume name, same image: only the tolerations conflict (one atomic list, and gpuctl's
    also tolerates the gate, gpuctl.io/unproven): refused by default naming them; --force-conflicts
    takes them over, once; then nothing."""
    _kubectl_apply(kubectl, tmp_path, NEW_STATIC)
    code, refused, result = _bootstrap(cli, kubectl)
    assert code != 0, result.output
    assert _daemonset_object(refused)["action"] == "conflict"
    assert ".spec.template.spec.tolerations" in _daemonset_object(refused)["message"]
    code, first, result = _bootstrap(cli, kubectl, "--force-conflicts")
    assert code == 0, result.output
    assert _daemonset_object(first)["action"] in ("configured", "adopted")
    assert _volumes_for_the_sockets(_daemonset(kubectl)) == ["kubelet-device-plugins-dir"]
    for check in ((), ("--check",)):
        before = _writes(kubectl)
        code, again, result = _bootstrap(cli, kubectl, *check)
        assert code == 0, result.output
        assert _daemonset_object(again)["action"] == "unchanged"
        assert "diff" not in _daemonset_object(again)
        assert _writes(kubectl) == before


def test_what_gpuctl_no_longer_renders_is_removed_once_then_nothing(
    kubectl: Kubectl, cli: Callable[..., Any]
) -> None:
    """Lists compared by their keys must not hide gpuctl's own leftovers: dropping --sharing
    removes the config volume and variable gpuctl applied before, in one write."""
    assert _bootstrap(cli, kubectl, "--sharing", "time-slicing", "--replicas", "2")[0] == 0
    container = _daemonset(kubectl)["spec"]["template"]["spec"]["containers"][0]
    assert "CONFIG_FILE" in {env["name"] for env in container["env"]}
    code, plain, result = _bootstrap(cli, kubectl)
    assert code == 0, result.output
    assert _daemonset_object(plain)["action"] == "configured"
    spec = _daemonset(kubectl)["spec"]["template"]["spec"]
    assert [volume["name"] for volume in spec["volumes"]] == ["kubelet-device-plugins-dir"]
    assert "CONFIG_FILE" not in {env["name"] for env in spec["containers"][0]["env"]}
    before = _writes(kubectl)
    assert _bootstrap(cli, kubectl)[1]["cluster"]["writes"] == 0
    assert _writes(kubectl) == before
