"""`gpuctl render` and the templates behind it (validation against the schemas: tests/cluster)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpuctl.core.render import (
    RbacSubject,
    RenderOptions,
    parse_rbac_subject,
    render_manifests,
)
from gpuctl.core.stacks import Stack
from gpuctl.defaults import DEVICE_PLUGIN_IMAGE
from gpuctl.errors import ConfigError
from gpuctl.templating import render_template, template_names

# Every GPU DaemonSet gpuctl renders tolerates the gate (gpuctl.core.gate) too.
GATE_TOLERATION = {"key": "gpuctl.io/unproven", "operator": "Exists", "effect": "NoSchedule"}
# The Node Readiness Controller's taint of `render --readiness-rule`, any effect.
READINESS_TOLERATION = {"key": "readiness.k8s.io/gpu-proven", "operator": "Exists"}


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
    assert pod["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        GATE_TOLERATION,
        READINESS_TOLERATION,
    ]
    assert pod["priorityClassName"] == "system-node-critical"
    container = pod["containers"][0]
    # The pin (gpuctl/defaults.py), as NVIDIA's static manifest of that release names the image.
    assert container["image"] == DEVICE_PLUGIN_IMAGE == "nvcr.io/nvidia/k8s-device-plugin:v0.20.1"
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


def _daemonsets(text: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in _documents(text) if doc["kind"] == "DaemonSet"}


def _env(container: dict) -> dict[str, object]:
    return {item["name"]: item.get("value", item.get("valueFrom")) for item in container["env"]}


def _mounts(container: dict) -> dict[str, str]:
    return {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}


def test_mps_and_mig_single() -> None:
    text = render_manifests(RenderOptions(sharing="mps", mig_strategy="single")).as_stream()
    config = yaml.safe_load(_by_kind(text)["ConfigMap"]["data"]["config.yaml"])
    assert config["sharing"] == {"mps": {"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}}
    assert config["flags"]["migStrategy"] == "single"
    daemonsets = _daemonsets(text)
    plugin = daemonsets["nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"} in plugin["env"]
    assert plugin["securityContext"]["capabilities"]["add"] == ["SYS_ADMIN"]
    daemon = daemonsets["nvidia-device-plugin-mps-control-daemon"]["spec"]["template"]["spec"]
    assert _env(daemon["containers"][0])["MIG_STRATEGY"] == "single"
    assert _env(daemon["containers"][0])["NVIDIA_MIG_MONITOR_DEVICES"] == "all"


def test_mps_renders_nvidias_control_daemon() -> None:
    """What NVIDIA's chart v0.20.0 renders for MPS (templates/daemonset-mps-control-daemon.yml)."""
    options = RenderOptions(
        sharing="mps", replicas=4, namespace="nvidia", node_selector=(("pool", "gpu"),), taint_key="gpu"
    )
    text = render_manifests(options).as_stream()
    daemonset = _daemonsets(text)["nvidia-device-plugin-mps-control-daemon"]
    assert daemonset["metadata"]["namespace"] == "nvidia"
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"pool": "gpu", "nvidia.com/mps.capable": "true"}
    assert pod["tolerations"] == [
        {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
        GATE_TOLERATION,
        READINESS_TOLERATION,
    ]
    assert pod["priorityClassName"] == "system-node-critical"
    assert pod["hostPID"] is True  # the chart's mps.enableHostPID, on by default since v0.18
    assert "serviceAccountName" not in pod  # no config-manager sidecar: nothing reads the API
    [init] = pod["initContainers"]
    assert init["image"] == DEVICE_PLUGIN_IMAGE
    assert init["command"] == ["mps-control-daemon", "mount-shm"]
    assert init["securityContext"] == {"privileged": True}
    assert init["volumeMounts"] == [
        {"name": "mps-root", "mountPath": "/mps", "mountPropagation": "Bidirectional"}
    ]
    [daemon] = pod["containers"]
    assert daemon["image"] == DEVICE_PLUGIN_IMAGE
    assert daemon["command"] == ["mps-control-daemon"]
    assert daemon["securityContext"] == {"privileged": True}
    env = _env(daemon)
    assert env["CONFIG_FILE"] == "/config/config.yaml"
    assert env["NODE_NAME"] == {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}
    assert (env["MIG_STRATEGY"], env["NVIDIA_VISIBLE_DEVICES"]) == ("none", "all")
    assert env["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"
    assert "NVIDIA_MIG_MONITOR_DEVICES" not in env
    assert _mounts(daemon) == {"mps-shm": "/dev/shm", "mps-root": "/mps", "config": "/config"}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert volumes["mps-root"]["hostPath"] == {"path": "/run/nvidia/mps", "type": "DirectoryOrCreate"}
    assert volumes["mps-shm"]["hostPath"] == {"path": "/run/nvidia/mps/shm"}
    assert volumes["config"]["configMap"] == {"name": "nvidia-device-plugin-config"}


def test_mps_plugin_and_daemon_share_the_config() -> None:
    text = render_manifests(RenderOptions(sharing="mps", replicas=8)).as_stream()
    config_map = _by_kind(text)["ConfigMap"]
    config = yaml.safe_load(config_map["data"]["config.yaml"])
    assert config["sharing"]["mps"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 8}]
    assert "also needs" not in text
    daemonsets = _daemonsets(text)
    plugin_pod = daemonsets["nvidia-device-plugin-daemonset"]["spec"]["template"]
    daemon_pod = daemonsets["nvidia-device-plugin-mps-control-daemon"]["spec"]["template"]
    checksum = "gpuctl.io/config-checksum"
    assert plugin_pod["metadata"]["annotations"][checksum] == daemon_pod["metadata"]["annotations"][checksum]
    for pod in (plugin_pod["spec"], daemon_pod["spec"]):
        assert {"name": "config", "configMap": {"name": config_map["metadata"]["name"]}} in pod["volumes"]
    plugin = plugin_pod["spec"]["containers"][0]
    assert _env(plugin)["MPS_ROOT"] == "/run/nvidia/mps"
    assert _env(plugin)["CONFIG_FILE"] == "/config/config.yaml"
    assert _mounts(plugin) == {
        "kubelet-device-plugins-dir": "/var/lib/kubelet/device-plugins",
        "config": "/config",
        "mps-shm": "/dev/shm",
        "mps-root": "/mps",
    }
    # The plugin itself stays unprivileged with MPS, as in the chart.
    assert plugin["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    plugin_volumes = {volume["name"]: volume for volume in plugin_pod["spec"]["volumes"]}
    assert plugin_volumes["mps-root"]["hostPath"] == {"path": "/run/nvidia/mps", "type": "DirectoryOrCreate"}


@pytest.mark.parametrize("sharing", ["none", "time-slicing"])
def test_only_mps_renders_the_control_daemon(sharing: str) -> None:
    result = render_manifests(RenderOptions(sharing=sharing))
    assert "nvidia-device-plugin-mps-control-daemon.yaml" not in [r.filename for r in result.files]
    text = result.as_stream()
    assert list(_daemonsets(text)) == ["nvidia-device-plugin-daemonset"]
    plugin = _daemonsets(text)["nvidia-device-plugin-daemonset"]["spec"]["template"]["spec"]
    assert "MPS_ROOT" not in _env(plugin["containers"][0])
    assert not {"mps-root", "mps-shm"} & {volume["name"] for volume in plugin["volumes"]}


def test_verify_tells_the_mps_daemon_from_the_device_plugin() -> None:
    """verify and taint-gpu-nodes audit it as a GPU DaemonSet, but read plugin logs elsewhere."""
    from gpuctl.kube.daemonsets import daemonset_from_json

    daemonsets = _daemonsets(render_manifests(RenderOptions(sharing="mps")).as_stream())
    recognised = {name: daemonset_from_json(doc) for name, doc in daemonsets.items()}
    assert recognised["nvidia-device-plugin-daemonset"].is_device_plugin
    daemon = recognised["nvidia-device-plugin-mps-control-daemon"]
    assert daemon.is_gpu_daemonset
    assert not daemon.is_device_plugin


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
    assert pod["tolerations"] == [
        {"key": "gpu", "operator": "Exists", "effect": "NoExecute"},
        GATE_TOLERATION,
        READINESS_TOLERATION,
    ]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}


def test_gpu_operator_values() -> None:
    result = render_manifests(
        RenderOptions(stack=Stack.OPERATOR, sharing="time-slicing", mig_strategy="single")
    )
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
    assert set(roles) == {
        "gpuctl-verify",
        "gpuctl-verify-pods",
        "gpuctl-verify-plugin-logs",
        "gpuctl-taint",
        "gpuctl-status",
        "gpuctl-upgrade",
    }
    # The upgrade adds to verify's rights only the drains' evictions.
    assert roles["gpuctl-upgrade"]["rules"] == [
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}
    ]
    taint_rules = {tuple(rule["resources"]): rule["verbs"] for rule in roles["gpuctl-taint"]["rules"]}
    assert taint_rules == {
        ("nodes",): ["get", "list", "patch"],
        ("daemonsets",): ["list"],
        ("pods",): ["list"],
        ("deviceclasses", "resourceslices"): ["list"],
    }
    status_verbs = {verb for rule in roles["gpuctl-status"]["rules"] for verb in rule["verbs"]}
    assert status_verbs <= {"get", "list", "watch"}
    cluster_verify = [rule for rule in roles["gpuctl-verify"]["rules"] if "pods" in rule["resources"]]
    assert "create" not in cluster_verify[0]["verbs"]  # pods are only created in their namespace
    assert roles["gpuctl-verify-pods"]["metadata"]["namespace"] == "gpuctl-system"
    # DRA claim templates and claims are written only in the verification namespace too.
    # Cluster-wide, only the gate's DeviceTaintRules (cluster-scoped) are written.
    cluster_dra = [r for r in roles["gpuctl-verify"]["rules"] if r["apiGroups"] == ["resource.k8s.io"]]
    writes = {
        (tuple(rule["resources"]), verb) for rule in cluster_dra for verb in rule["verbs"] if verb != "list"
    }
    assert writes == {(("devicetaintrules",), "create"), (("devicetaintrules",), "delete")}
    # Each command's roles are bound to its own account (the upgrade's holds verify's too).
    bindings = [doc for doc in docs if doc["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    accounts = {
        binding["metadata"]["name"]: [subject["name"] for subject in binding["subjects"]]
        for binding in bindings
    }
    assert accounts == {
        "gpuctl-verify": ["gpuctl-verify"],
        "gpuctl-verify-pods": ["gpuctl-verify"],
        "gpuctl-verify-plugin-logs": ["gpuctl-verify"],
        "gpuctl-upgrade-verify": ["gpuctl-upgrade"],
        "gpuctl-upgrade-verify-pods": ["gpuctl-upgrade"],
        "gpuctl-upgrade-plugin-logs": ["gpuctl-upgrade"],
        "gpuctl-taint": ["gpuctl-taint"],
        "gpuctl-status": ["gpuctl-status"],
        "gpuctl-upgrade": ["gpuctl-upgrade"],
    }
    assert all(subject["namespace"] == "gpuctl-system" for b in bindings for subject in b["subjects"])


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
        (RenderOptions(sharing="mps", mig_strategy="mixed"), "--sharing mps --mig-strategy mixed"),
        (RenderOptions(sharing="mps", replicas=49), "--sharing mps --replicas 49"),
        (RenderOptions(stack=Stack.OPERATOR, sharing="mps", mig_strategy="mixed"), "--mig-strategy mixed"),
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
        RenderOptions(sharing="mps"),
        RenderOptions(stack=Stack.OPERATOR),
        RenderOptions(stack=Stack.DRA),
        RenderOptions(verify_cronjob=True, gpuctl_image="example.org/gpuctl:0.1.0"),
        RenderOptions(verify_deployment=True, service_monitor=True, gpuctl_image="example.org/gpuctl:0.1.0"),
        RenderOptions(readiness_rule=True),
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
        "rbac-upgrade.yaml",
        "rbac-verify.yaml",
        "runtimeclass-nvidia.yaml",
    ]


def test_cli_mps_out_dir_writes_the_daemon_to_its_own_file(tmp_path: Path) -> None:
    written = _gpuctl("render", "--sharing", "mps", "--replicas", "4", "--out", str(tmp_path / "mps"))
    assert written.returncode == 0, written.stderr
    names = sorted(path.name for path in (tmp_path / "mps").iterdir())
    assert names == [
        "nvidia-device-plugin-config.yaml",
        "nvidia-device-plugin-mps-control-daemon.yaml",
        "nvidia-device-plugin.yaml",
        "runtimeclass-nvidia.yaml",
    ]
    daemon_file = (tmp_path / "mps" / "nvidia-device-plugin-mps-control-daemon.yaml").read_text()
    assert [doc["metadata"]["name"] for doc in _documents(daemon_file)] == [
        "nvidia-device-plugin-mps-control-daemon"
    ]
    assert "# SECURITY: privileged" in daemon_file  # the posture is documented where it is set


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
        (["--sharing", "mps", "--mig-strategy", "mixed"], "--sharing mps --mig-strategy mixed"),
        (["--sharing", "mps", "--replicas", "64"], "--sharing mps --replicas 64"),
        (["--sharing", "mps", "--replicas", "1"], "--replicas 1"),
    ],
)
def test_cli_bad_input_exit_2_without_traceback(args: list[str], message: str) -> None:
    completed = _gpuctl("render", *args)
    assert completed.returncode == 2
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr + completed.stdout


def test_out_dir_holds_exactly_the_current_render(tmp_path: Path) -> None:
    """A GitOps sync applies every file in the folder: an earlier render's leftovers must go."""
    out = tmp_path / "manifests"
    first = _gpuctl(
        "render", "--sharing", "mps", "--replicas", "4", "--rbac", "--runtime-class", "gpu", "--out", str(out)
    )
    assert first.returncode == 0, first.stderr
    (out / "kustomization.yaml").write_text("resources: []\n", encoding="utf-8")  # the user's own file
    second = _gpuctl("render", "--out", str(out))
    assert second.returncode == 0, second.stderr
    names = sorted(path.name for path in out.iterdir())
    assert names == ["kustomization.yaml", "nvidia-device-plugin.yaml", "runtimeclass-nvidia.yaml"]
    assert f"removed {out / 'nvidia-device-plugin-mps-control-daemon.yaml'}" in second.stdout
    assert f"removed {out / 'runtimeclass-gpu.yaml'}" in second.stdout


def test_verify_cronjob_runs_verify_as_a_restricted_least_privilege_pod() -> None:
    options = RenderOptions(
        verify_cronjob=True,
        verify_namespace="gpu-proof",
        verify_schedule="0 * * * *",
        gpuctl_image="example.org/gpuctl:0.1.0",
    )
    files = {rendered.filename: rendered.content for rendered in render_manifests(options).files}
    documents = list(yaml.safe_load_all(files["verify-cronjob.yaml"]))
    by_kind = {document["kind"]: document for document in documents}
    namespace = by_kind["Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    cronjob = by_kind["CronJob"]
    assert cronjob["spec"]["schedule"] == "0 * * * *"
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == by_kind["ServiceAccount"]["metadata"]["name"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    assert container["command"][:4] == ["gpuctl", "verify", "--output", "json"]
    assert container["command"][4:6] == ["--namespace", "gpu-proof"]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    rbac = list(yaml.safe_load_all(files["verify-cronjob-rbac.yaml"]))
    subjects = [subject for doc in rbac if doc and "subjects" in doc for subject in doc["subjects"]]
    assert subjects
    assert all(
        subject == {"kind": "ServiceAccount", "name": "gpuctl-verify", "namespace": "gpu-proof"}
        for subject in subjects
    )


def test_verify_cronjob_needs_an_image_and_a_cron_schedule() -> None:
    with pytest.raises(ConfigError, match="--gpuctl-image"):
        render_manifests(RenderOptions(verify_cronjob=True))
    with pytest.raises(ConfigError, match="five-field"):
        render_manifests(
            RenderOptions(verify_cronjob=True, gpuctl_image="x/gpuctl:1", verify_schedule="hourly")
        )
