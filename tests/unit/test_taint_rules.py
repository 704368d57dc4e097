"""Taint planning, flag validation and the GPU DaemonSet toleration audit (no cluster needed)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuctl.core.taint import plan_taints, taint_spec
from gpuctl.core.taint.audit import admission_notes, audit_daemonsets
from gpuctl.core.taint.rules import check_label_selector
from gpuctl.errors import ConfigError
from gpuctl.kube.daemonsets import DaemonSetInfo, daemonset_from_json
from gpuctl.kube.nodes import Taint, tolerates

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
OTHER = {"key": "dedicated", "value": "ml", "effect": "NoSchedule", "timeAdded": None}


def test_plan_add_keeps_other_taints() -> None:
    plan = plan_taints([OTHER], GPU_TAINT, remove=False)
    assert plan.verb == "add"
    assert plan.taints == [OTHER, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert (plan.before, plan.after) == ("", "nvidia.com/gpu=present:NoSchedule")


def test_plan_unchanged_when_present() -> None:
    current = [OTHER, {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    plan = plan_taints(current, GPU_TAINT, remove=False)
    assert plan.verb == ""


def test_plan_update_other_value_in_place() -> None:
    current = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}, OTHER]
    plan = plan_taints(current, GPU_TAINT, remove=False)
    assert plan.verb == "update"
    assert plan.taints == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}, OTHER]
    assert plan.before == "nvidia.com/gpu=true:NoSchedule"


def test_plan_same_key_other_effect_is_another_taint() -> None:
    current = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoExecute"}]
    plan = plan_taints(current, GPU_TAINT, remove=False)
    assert plan.verb == "add"
    assert len(plan.taints) == 2


def test_plan_remove_by_key_and_effect_whatever_the_value() -> None:
    current = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}, OTHER]
    plan = plan_taints(current, GPU_TAINT, remove=True)
    assert plan.verb == "remove"
    assert plan.taints == [OTHER]
    assert plan_taints([OTHER], GPU_TAINT, remove=True).verb == ""


@pytest.mark.parametrize(
    ("key", "value", "effect", "flag"),
    [
        ("", "present", "NoSchedule", "--key"),
        ("nvidia.com/", "present", "NoSchedule", "--key"),
        ("Bad_Prefix.com/gpu", "present", "NoSchedule", "--key"),
        ("nvidia.com/gpu", "has space", "NoSchedule", "--value"),
        ("nvidia.com/gpu", "x" * 64, "NoSchedule", "--value"),
        ("nvidia.com/gpu", "present", "Never", "--effect"),
    ],
)
def test_bad_taint_flags(key: str, value: str, effect: str, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        taint_spec(key, value, effect)


def test_empty_value_is_allowed() -> None:
    assert str(taint_spec("nvidia.com/gpu", "", "NoExecute")) == "nvidia.com/gpu:NoExecute"


@pytest.mark.parametrize(
    "selector",
    [
        "nvidia.com/gpu.present=true",
        "pool==gpu,zone!=b",
        "pool in (gpu, a100),!spot",
        "pool notin (cpu)",
        "nvidia.com/gpu.present",
    ],
)
def test_good_selectors(selector: str) -> None:
    check_label_selector(selector)


@pytest.mark.parametrize("selector", ["", "a=b,", "pool in gpu", "=x", "a=b=c", "bad key=1"])
def test_bad_selectors(selector: str) -> None:
    with pytest.raises(ConfigError, match="--selector"):
        check_label_selector(selector)


def _daemonset(
    name: str,
    image: str,
    tolerations: list[dict[str, Any]],
    init_image: str = "",
    args: tuple[str, ...] = (),
) -> DaemonSetInfo:
    pod_spec: dict[str, Any] = {
        "containers": [{"image": image, "args": list(args)}],
        "tolerations": tolerations,
    }
    if init_image:
        pod_spec["initContainers"] = [{"image": init_image}]
    return daemonset_from_json(
        {
            "metadata": {"name": name, "namespace": "gpu-operator", "labels": {"app": name}},
            "spec": {"template": {"spec": pod_spec}},
        }
    )


def gpu_component(daemonset: DaemonSetInfo) -> str:
    return daemonset.component


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}, GPU_TAINT, True),
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present"}, GPU_TAINT, True),
        (
            {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
            Taint("nvidia.com/gpu", "true", "NoSchedule"),
            False,
        ),
        ({"key": "nvidia.com/gpu", "value": "present"}, GPU_TAINT, True),  # operator defaults to Equal
        ({"operator": "Exists"}, GPU_TAINT, True),  # tolerates everything
        ({"operator": "Exists", "effect": "NoSchedule"}, GPU_TAINT, True),  # every NoSchedule taint
        ({"operator": "Exists", "effect": "NoExecute"}, GPU_TAINT, False),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "value": "ignored"}, GPU_TAINT, True),
        ({"key": "nvidia.com/gpu", "operator": "Equal"}, GPU_TAINT, False),  # "" != "present"
        ({"key": "nvidia.com/gpu", "operator": "Equal"}, Taint("nvidia.com/gpu", "", "NoSchedule"), True),
        ({"key": "nvidia.com/gpu", "operator": "Gt", "value": "present"}, GPU_TAINT, False),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, GPU_TAINT, False),
        ({"key": "other", "operator": "Exists"}, GPU_TAINT, False),
    ],
)
def test_tolerates(toleration: dict[str, Any], taint: Taint, expected: bool) -> None:
    assert tolerates(toleration, taint) is expected


def test_component_identification() -> None:
    assert gpu_component(
        _daemonset("nvidia-device-plugin-daemonset", "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", [])
    )
    gfd = _daemonset("gpu-feature-discovery", "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", [])
    assert gpu_component(gfd) == "GPU feature discovery"
    nfd = _daemonset("nfd-worker", "registry.k8s.io/nfd/node-feature-discovery:v0.16.4", [])
    assert gpu_component(nfd) == "NFD worker"
    nfd_gc = _daemonset("nfd-gc", "registry.k8s.io/nfd/node-feature-discovery:v0.16.4", [])
    assert gpu_component(nfd_gc) == ""
    assert gpu_component(
        _daemonset(
            "nvidia-operator-validator", "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0", []
        )
    )
    assert (
        gpu_component(_daemonset("exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8", [])) == "dcgm-exporter"
    )
    assert gpu_component(_daemonset("kube-proxy", "registry.k8s.io/kube-proxy:v1.31.2", [])) == ""


def test_one_definition_of_gpu_daemonset_for_verify_and_taint() -> None:
    """verify (is_gpu_daemonset/is_device_plugin) and taint-gpu-nodes (component) agree."""
    plugin = _daemonset("nvidia-device-plugin-daemonset", "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", [])
    gfd = _daemonset("gpu-feature-discovery", "nvcr.io/nvidia/k8s-device-plugin:v0.17.1", [])
    assert plugin.is_device_plugin
    assert plugin.is_gpu_daemonset
    assert gfd.is_gpu_daemonset
    assert not gfd.is_device_plugin
    driver = _daemonset("nvidia-driver-daemonset", "nvcr.io/nvidia/driver:550.127.05-ubuntu22.04", [])
    assert gpu_component(driver) == "NVIDIA driver"
    toolkit = _daemonset("toolkit", "nvcr.io/nvidia/k8s/container-toolkit:v1.17.0-ubuntu20.04", [])
    assert gpu_component(toolkit) == "NVIDIA container toolkit"
    validator_init = "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v24.9.0"
    exporter = _daemonset(
        "nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8", [], validator_init
    )
    assert gpu_component(exporter) == "dcgm-exporter"  # the validator init container does not win
    mig = _daemonset(
        "nvidia-mig-manager", "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.10.0", [], validator_init
    )
    assert gpu_component(mig) == "GPU Operator component"
    nfd = "registry.k8s.io/nfd/node-feature-discovery:v0.16.4"
    assert gpu_component(_daemonset("nfd", nfd, [], args=("nfd-worker",))) == "NFD worker"
    assert gpu_component(_daemonset("gpu-operator-node-feature-discovery-master", nfd, [])) == ""
    assert not _daemonset("kube-proxy", "registry.k8s.io/kube-proxy:v1.31.2", []).is_gpu_daemonset


def test_daemonset_controller_tolerations_are_implicit() -> None:
    daemonset = _daemonset("nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8", [])
    assert daemonset.tolerates(Taint("node.kubernetes.io/not-ready", "", "NoExecute"))
    assert daemonset.tolerates(Taint("nvidia.com/gpu", "present", "PreferNoSchedule"))
    assert not daemonset.tolerates(GPU_TAINT)


def test_audit_flags_equal_present_against_true() -> None:
    equal_present = [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    daemonsets = [
        _daemonset("nfd-worker", "registry.k8s.io/nfd/node-feature-discovery:v0.16.4", equal_present),
        _daemonset("nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8", []),
        _daemonset(
            "nvidia-device-plugin-daemonset",
            "nvcr.io/nvidia/k8s-device-plugin:v0.17.1",
            [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        ),
        _daemonset("kube-proxy", "registry.k8s.io/kube-proxy:v1.31.2", []),
    ]
    warnings = audit_daemonsets(daemonsets, Taint("nvidia.com/gpu", "true", "NoSchedule"))
    assert [warning.name for warning in warnings] == ["nfd-worker", "nvidia-dcgm-exporter"]
    assert "nvidia.com/gpu=present:NoSchedule (Equal)" in warnings[0].message
    assert "no toleration" in warnings[1].message
    assert "kubectl -n gpu-operator edit daemonset nfd-worker" in warnings[0].hint
    assert [w.name for w in audit_daemonsets(daemonsets, GPU_TAINT)] == ["nvidia-dcgm-exporter"]
    assert audit_daemonsets(daemonsets, Taint("nvidia.com/gpu", "true", "PreferNoSchedule")) == []


def test_admission_note_mentions_plugin_and_its_limits() -> None:
    assert "ExtendedResourceToleration" in admission_notes(GPU_TAINT)[0]
    assert "will not cover" not in admission_notes(GPU_TAINT)[0]
    assert "will not cover gpu:NoSchedule" in admission_notes(Taint("gpu", "", "NoSchedule"))[0]
