"""The cluster-wide checks (gpuctl.core.verify.cluster_checks) judged on node and DaemonSet objects in
the shape the API server returns them: each branch's verdict, its message and the fix its hint
names."""

from __future__ import annotations

from typing import Any

from gpuctl.core.verify import cluster_checks
from gpuctl.core.verify.model import CheckStatus, GpuCounts, NodeResult, VerifyOptions
from gpuctl.kube.daemonsets import DaemonSetInfo, daemonset_from_json
from gpuctl.kube.nodes import NodeInfo, node_from_json


def node(name: str, taints: list[dict[str, str]] | None = None) -> NodeInfo:
    return node_from_json(
        {
            "metadata": {"name": name},
            "spec": {"taints": taints or []},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "capacity": {"nvidia.com/gpu": "8"},
                "allocatable": {"nvidia.com/gpu": "8"},
            },
        }
    )


def daemonset(
    name: str, image: str, tolerations: list[dict[str, str]] | None = None, runtime_class: str = ""
) -> DaemonSetInfo:
    spec: dict[str, Any] = {
        "tolerations": tolerations or [],
        "containers": [{"name": name, "image": image}],
    }
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    return daemonset_from_json(
        {
            "metadata": {"namespace": "gpu-operator", "name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"spec": spec}},
        }
    )


PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
DCGM_IMAGE = "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04"


def test_gpu_nodes_present_or_allowed_empty() -> None:
    present = cluster_checks.gpu_nodes_present([node("gpu-0"), node("gpu-1")], allow_empty=False)
    assert present.id == "cluster.gpu-nodes"
    assert present.status is CheckStatus.PASS
    assert present.message == "2 GPU node(s)"
    allowed = cluster_checks.gpu_nodes_present([], allow_empty=True)
    assert allowed.id == "cluster.gpu-nodes"
    assert allowed.status is CheckStatus.PASS
    assert allowed.message == "no GPU node (allowed by --allow-empty)"
    none = cluster_checks.gpu_nodes_present([], allow_empty=False)
    assert none.id == "cluster.gpu-nodes"
    assert none.failed
    assert none.id == "cluster.gpu-nodes"
    assert none.message == "no GPU node: no node advertises nvidia.com/gpu or carries an NFD/GFD GPU label"
    assert none.hint == (
        "install the device plugin or NFD (`gpuctl bootstrap`), name the nodes with --expect-nodes, "
        "or pass --allow-empty for a cluster without GPUs"
    )


def test_device_plugin_present() -> None:
    plugins = [daemonset("nvidia-device-plugin-daemonset", PLUGIN_IMAGE)]
    present = cluster_checks.device_plugin_present(plugins, [node("gpu-0")])
    assert present.id == "cluster.device-plugin"
    assert present.status is CheckStatus.PASS
    assert present.message == "device plugin DaemonSet: gpu-operator/nvidia-device-plugin-daemonset"
    two = cluster_checks.device_plugin_present(
        [*plugins, daemonset("nvidia-device-plugin-mps", PLUGIN_IMAGE)], [node("gpu-0")]
    )
    assert two.message == (
        "device plugin DaemonSet: gpu-operator/nvidia-device-plugin-daemonset, "
        "gpu-operator/nvidia-device-plugin-mps"
    )
    skipped = cluster_checks.device_plugin_present([], [])
    assert skipped.id == "cluster.device-plugin"
    assert skipped.status is CheckStatus.SKIP
    assert skipped.message == "no GPU node that uses a device plugin"
    missing = cluster_checks.device_plugin_present([], [node("gpu-0")])
    assert missing.id == "cluster.device-plugin"
    assert missing.failed
    assert missing.id == "cluster.device-plugin"
    assert missing.message == "no NVIDIA device plugin DaemonSet (or GPU Operator) in any namespace"
    assert missing.hint == (
        "install it: `gpuctl render | kubectl apply -f -` (or the GPU Operator, or NVIDIA's DRA "
        "driver on Kubernetes 1.34+: docs/dra.md)"
    )


def test_runtime_class_needed_by_the_plugin_or_the_flag() -> None:
    plugin = [daemonset("nvidia-device-plugin-daemonset", PLUGIN_IMAGE, runtime_class="nvidia")]
    missing = cluster_checks.runtime_class(VerifyOptions(), plugin, {"runc"})
    assert missing.id == "cluster.runtimeclass"
    assert missing.failed
    assert missing.id == "cluster.runtimeclass"
    assert missing.message == "RuntimeClass nvidia not found (needed by --runtime-class or the device plugin)"
    assert missing.hint == "create it (handler nvidia): `gpuctl render | kubectl apply -f -`"
    both = cluster_checks.runtime_class(VerifyOptions(runtime_class="nvidia-cdi"), plugin, set())
    assert both.id == "cluster.runtimeclass"
    assert both.message.startswith("RuntimeClass nvidia, nvidia-cdi not found")
    flag_only = cluster_checks.runtime_class(VerifyOptions(runtime_class="nvidia-cdi"), [], {"nvidia-cdi"})
    assert flag_only.id == "cluster.runtimeclass"
    assert flag_only.status is CheckStatus.PASS
    assert flag_only.message == "RuntimeClass nvidia-cdi present"
    present = cluster_checks.runtime_class(
        VerifyOptions(runtime_class="nvidia-cdi"), plugin, {"nvidia", "nvidia-cdi"}
    )
    assert present.id == "cluster.runtimeclass"
    assert present.message == "RuntimeClass nvidia, nvidia-cdi present"
    unasked = cluster_checks.runtime_class(VerifyOptions(), [daemonset("p", PLUGIN_IMAGE)], {"nvidia"})
    assert unasked.id == "cluster.runtimeclass"
    assert unasked.status is CheckStatus.PASS
    assert unasked.message == "RuntimeClass nvidia present"
    default = cluster_checks.runtime_class(VerifyOptions(), [daemonset("p", PLUGIN_IMAGE)], {"runc"})
    assert default.id == "cluster.runtimeclass"
    assert default.status is CheckStatus.SKIP
    assert default.message == "no RuntimeClass needed (nvidia is the default runtime)"


def test_daemonset_tolerations_without_daemonsets_or_taints() -> None:
    skipped = cluster_checks.daemonset_tolerations(
        [], [node("gpu-0", [{"key": "a", "effect": "NoSchedule"}])]
    )
    assert skipped.id == "cluster.daemonset-tolerations"
    assert skipped.status is CheckStatus.SKIP
    assert skipped.message == "no GPU DaemonSet"
    plugin = [daemonset("nvidia-device-plugin-daemonset", PLUGIN_IMAGE)]
    untainted = cluster_checks.daemonset_tolerations(
        plugin,
        [
            node("gpu-0", [{"key": "soft", "effect": "PreferNoSchedule"}]),
            node("gpu-1", [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]),
        ],
    )
    assert untainted.id == "cluster.daemonset-tolerations"
    assert untainted.status is CheckStatus.PASS
    assert untainted.message == "GPU nodes carry no NoSchedule/NoExecute taint"


def test_daemonset_tolerations_tolerated() -> None:
    toleration = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    sets = [
        daemonset("nvidia-device-plugin-daemonset", PLUGIN_IMAGE, toleration),
        daemonset("nvidia-dcgm-exporter", DCGM_IMAGE, toleration),
    ]
    check = cluster_checks.daemonset_tolerations(
        sets, [node("gpu-0", [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}])]
    )
    assert check.id == "cluster.daemonset-tolerations"
    assert check.status is CheckStatus.PASS
    assert check.message == "2 GPU DaemonSet(s) tolerate the GPU taints"


def test_an_untolerated_taint_fails_the_device_plugin_and_names_the_missing_tolerations() -> None:
    sets = [daemonset("nvidia-device-plugin-daemonset", PLUGIN_IMAGE)]
    nodes = [
        node("gpu-0", [{"key": "dedicated", "value": "ml", "effect": "NoExecute"}]),
        node("gpu-1", [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
    ]
    check = cluster_checks.daemonset_tolerations(sets, nodes)
    assert check.id == "cluster.daemonset-tolerations"
    assert check.failed
    assert check.id == "cluster.daemonset-tolerations"
    assert check.message == (
        "gpu-operator/nvidia-device-plugin-daemonset does not tolerate dedicated=ml:NoExecute; "
        "gpu-operator/nvidia-device-plugin-daemonset does not tolerate nvidia.com/gpu:NoSchedule"
    )
    assert check.hint == (
        "add the toleration `key: dedicated, operator: Exists, effect: NoExecute` and "
        "`key: nvidia.com/gpu, operator: Exists, effect: NoSchedule` to those DaemonSets; "
        "`gpuctl taint-gpu-nodes --dry-run` audits them"
    )


def test_only_the_gate_or_another_daemonset_untolerated_is_a_warning() -> None:
    gate = [node("gpu-0", [{"key": "gpuctl.io/unproven", "value": "cuda", "effect": "NoSchedule"}])]
    plugin = [daemonset("nvidia-device-plugin-daemonset", PLUGIN_IMAGE)]
    assert cluster_checks.daemonset_tolerations(plugin, gate).status is CheckStatus.WARN
    dcgm = [daemonset("nvidia-dcgm-exporter", DCGM_IMAGE)]
    dedicated = [node("gpu-0", [{"key": "dedicated", "effect": "NoSchedule"}])]
    assert cluster_checks.daemonset_tolerations(dcgm, dedicated).status is CheckStatus.WARN


def test_a_long_list_of_gaps_is_cut_at_500_characters() -> None:
    sets = [daemonset(f"nvidia-device-plugin-{index}", PLUGIN_IMAGE) for index in range(12)]
    check = cluster_checks.daemonset_tolerations(
        sets, [node("gpu-0", [{"key": "dedicated", "effect": "NoSchedule"}])]
    )
    assert check.id == "cluster.daemonset-tolerations"
    full = "; ".join(
        f"gpu-operator/nvidia-device-plugin-{index} does not tolerate dedicated:NoSchedule"
        for index in range(12)
    )
    assert len(full) > 501
    assert check.message == full[:500]


def result(name: str, driver: str) -> NodeResult:
    return NodeResult(name, GpuCounts(8, 8, 8, 8), (), driver_version=driver)


def test_driver_drift() -> None:
    unknown = cluster_checks.driver_drift([result("gpu-0", "")], {})
    assert unknown.id == "cluster.driver-drift"
    assert unknown.status is CheckStatus.SKIP
    assert unknown.message == "no driver version known (no verification pod ran)"
    same = cluster_checks.driver_drift(
        [result("gpu-0", "550.54.15"), result("gpu-1", "")], {"gpu-1": "550.54.15"}
    )
    assert same.id == "cluster.driver-drift"
    assert same.status is CheckStatus.PASS
    assert same.message == "all GPU nodes run driver 550.54.15"
    mixed_on_one_node = cluster_checks.driver_drift([result("gpu-0", "550.54.15,535.104.05")], {})
    assert mixed_on_one_node.id == "cluster.driver-drift"
    assert mixed_on_one_node.status is CheckStatus.SKIP
    drift = cluster_checks.driver_drift(
        [result("gpu-0", "550.54.15"), result("gpu-1", "535.104.05"), result("gpu-2", "")],
        {"gpu-2": "550.54.15"},
    )
    assert drift.id == "cluster.driver-drift"
    assert drift.status is CheckStatus.WARN
    assert drift.id == "cluster.driver-drift"
    assert (
        drift.message
        == "driver versions differ between nodes: 550.54.15 on 2 node(s), 535.104.05 on 1 node(s)"
    )
    assert drift.hint == (
        "pin one driver version for all GPU nodes (gpuctl_driver_version in the inventory), "
        "then `gpuctl bootstrap --phase host -i INVENTORY`"
    )
