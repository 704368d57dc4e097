"""`gpuctl render` and the templates behind it (validation against the schemas: tests/cluster)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuctl.core.render import (
    DEVICE_PLUGIN_IMAGE,
    RbacSubject,
    RenderOptions,
    parse_rbac_subject,
    render_manifests,
)
from gpuctl.errors import ConfigError
from gpuctl.templating import render_template, template_names


def _documents(text: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


def _by_kind(text: str) -> dict[str, dict]:
    return {doc["kind"]: doc for doc in _documents(text)}


def test_default_render_is_nvidia_static_plugin_and_runtime_class() -> None:
    docs = _by_kind(render_manifests(RenderOptions()).as_stream())
    assert set(docs) == {"DaemonSet", "RuntimeClass"}
    daemonset = docs["DaemonSet"]
    assert daemonset["metadata"] == {
        "name": "nvidia-device-plugin-daemonset",
        "namespace": "kube-system",
        "labels": {
            "app.kubernetes.io/name": "nvidia-device-plugin",
            "app.kubernetes.io/managed-by": "gpuctl",
        },
    }
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["priorityClassName"] == "system-node-critical"
    container = pod["containers"][0]
    assert container["image"] == DEVICE_PLUGIN_IMAGE == "nvcr.io/nvidia/k8s-device-plugin:v0.17.1"
    assert {"name": "MIG_STRATEGY", "value": "none"} in container["env"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
    }
    assert pod["volumes"][0]["hostPath"] == {"path": "/var/lib/kubelet/device-plugins", "type": "Directory"}
    assert docs["RuntimeClass"]["handler"] == "nvidia"
    assert docs["RuntimeClass"]["metadata"]["name"] == "nvidia"


def test_time_slicing_adds_config_map_mounted_by_the_plugin() -> None:
    text = render_manifests(RenderOptions(sharing="time-slicing", replicas=4)).as_stream()
    docs = _by_kind(text)
    config = yaml.safe_load(docs["ConfigMap"]["data"]["config.yaml"])
    assert config == {
        "version": "v1",
        "flags": {"migStrategy": "none", "failOnInitError": False},
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
    }
    pod = docs["DaemonSet"]["spec"]["template"]["spec"]
    assert {"name": "CONFIG_FILE", "value": "/config/config.yaml"} in pod["containers"][0]["env"]
    assert {"name": "config", "configMap": {"name": "nvidia-device-plugin-config"}} in pod["volumes"]


def test_mps_and_mig_mixed() -> None:
    docs = _by_kind(render_manifests(RenderOptions(sharing="mps", mig_strategy="mixed")).as_stream())
    config = yaml.safe_load(docs["ConfigMap"]["data"]["config.yaml"])
    assert "mps" in config["sharing"]
    assert config["flags"]["migStrategy"] == "mixed"
    container = docs["DaemonSet"]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "MIG_STRATEGY", "value": "mixed"} in container["env"]
    assert {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"} in container["env"]
    assert container["securityContext"]["capabilities"]["add"] == ["SYS_ADMIN"]


def test_custom_taint_image_namespace_and_node_selector() -> None:
    options = RenderOptions(
        namespace="nvidia",
        image="registry.local/k8s-device-plugin:v0.17.1",
        taint_key="gpu",
        taint_effect="NoExecute",
        node_selector=(("nvidia.com/gpu.present", "true"),),
    )
    daemonset = _by_kind(render_manifests(options).as_stream())["DaemonSet"]
    pod = daemonset["spec"]["template"]["spec"]
    assert daemonset["metadata"]["namespace"] == "nvidia"
    assert pod["containers"][0]["image"] == "registry.local/k8s-device-plugin:v0.17.1"
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists", "effect": "NoExecute"}]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}


def test_gpu_operator_values() -> None:
    result = render_manifests(RenderOptions(gpu_operator=True, sharing="time-slicing", mig_strategy="single"))
    assert [rendered.filename for rendered in result.files] == ["gpu-operator-values.yaml"]
    values = yaml.safe_load(result.files[0].content)
    assert values["driver"] == {"enabled": False}
    assert values["toolkit"] == {"enabled": False}
    assert values["mig"] == {"strategy": "single"}
    assert values["daemonsets"]["tolerations"][0] == {
        "key": "nvidia.com/gpu",
        "operator": "Exists",
        "effect": "NoSchedule",
    }
    plugin_config = yaml.safe_load(values["devicePlugin"]["config"]["data"]["config.yaml"])
    assert plugin_config["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 2


def test_rbac_roles_are_least_privilege() -> None:
    result = render_manifests(RenderOptions(rbac=True))
    docs = [
        doc
        for rendered in result.files
        if rendered.filename.startswith("rbac-")
        for doc in _documents(rendered.content)
    ]
    roles = {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] in ("ClusterRole", "Role")}
    assert set(roles) == {"gpuctl-verify", "gpuctl-verify-pods", "gpuctl-taint", "gpuctl-status"}
    taint_rules = {tuple(rule["resources"]): rule["verbs"] for rule in roles["gpuctl-taint"]["rules"]}
    assert taint_rules == {("nodes",): ["get", "list", "patch"], ("daemonsets",): ["list"]}
    status_verbs = {verb for rule in roles["gpuctl-status"]["rules"] for verb in rule["verbs"]}
    assert status_verbs <= {"get", "list", "watch"}
    cluster_verify = [rule for rule in roles["gpuctl-verify"]["rules"] if "pods" in rule["resources"]]
    assert "create" not in cluster_verify[0]["verbs"]  # pods are only created in their namespace
    assert roles["gpuctl-verify-pods"]["metadata"]["namespace"] == "gpuctl-system"
    bindings = [doc for doc in docs if doc["kind"].endswith("Binding")]
    assert len(bindings) == 4
    assert all(
        binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpuctl", "namespace": "gpuctl-system"}]
        for binding in bindings
    )


def test_rbac_subject_user_and_group() -> None:
    assert parse_rbac_subject("User:alice") == RbacSubject(kind="User", name="alice", namespace="")
    result = render_manifests(RenderOptions(rbac=True, rbac_subject=parse_rbac_subject("Group:gpu-admins")))
    binding = next(
        doc
        for rendered in result.files
        for doc in _documents(rendered.content)
        if doc["kind"] == "ClusterRoleBinding"
    )
    assert binding["subjects"] == [
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "gpu-admins"}
    ]
    with pytest.raises(ConfigError, match="--rbac-subject"):
        parse_rbac_subject("ServiceAccount:onlyname")


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        (RenderOptions(mig_strategy="auto"), "--mig-strategy"),
        (RenderOptions(sharing="vgpu"), "--sharing"),
        (RenderOptions(sharing="time-slicing", replicas=1), "--replicas"),
    ],
)
def test_bad_options_name_the_flag(options: RenderOptions, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        render_manifests(options)


def test_strict_undefined_names_the_missing_variable() -> None:
    with pytest.raises(ConfigError, match="runtime_class_name"):
        render_template("runtimeclass-nvidia.yaml.j2", runtime_handler="nvidia")


def test_every_template_is_reachable_from_render() -> None:
    """No template rots unrendered: each one is produced by some render option."""
    produced = set()
    for options in (
        RenderOptions(sharing="time-slicing", rbac=True),
        RenderOptions(gpu_operator=True),
    ):
        produced |= {rendered.filename for rendered in render_manifests(options).files}
    mine = {name for name in template_names() if name != "verify-pod.yaml.j2"}
    expected = {name.replace(".yaml.j2", ".yaml") for name in mine}
    assert expected <= produced


def _gpuctl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, check=False, cwd=cwd
    )


def test_cli_stdout_and_out_dir(tmp_path: Path) -> None:
    # Run from an unrelated folder: templates must come from the installed package.
    printed = _gpuctl("render", "--sharing", "time-slicing", cwd=tmp_path)
    assert printed.returncode == 0, printed.stderr
    assert [doc["kind"] for doc in _documents(printed.stdout)] == ["ConfigMap", "DaemonSet", "RuntimeClass"]
    written = _gpuctl("render", "--rbac", "--out", str(tmp_path / "manifests"))
    assert written.returncode == 0, written.stderr
    names = sorted(path.name for path in (tmp_path / "manifests").iterdir())
    assert names == [
        "nvidia-device-plugin.yaml",
        "rbac-status.yaml",
        "rbac-taint.yaml",
        "rbac-verify.yaml",
        "runtimeclass-nvidia.yaml",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mig-strategy", "auto"], "--mig-strategy"),
        (["--sharing", "time-slicing", "--replicas", "0"], "--replicas"),
        (["--gpu-operator", "--rbac"], "Helm values"),
        (["--rbac", "--rbac-subject", "Robot:x"], "--rbac-subject"),
        (["--taint-effect", "Sometimes"], "--taint-effect"),
        (["--taint-key", "bad key"], "--taint-key"),
        (["--node-selector", "novalue"], "--node-selector"),
    ],
)
def test_cli_bad_input_exit_2_without_traceback(args: list[str], message: str) -> None:
    completed = _gpuctl("render", *args)
    assert completed.returncode == 2
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr + completed.stdout
