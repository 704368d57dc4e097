"""The per-node checks (gpuctl.core.verify.node_checks) judged on node, DaemonSet and pod objects in
the shape the API server returns them: each branch's verdict, its message and the command its hint
names (a user copies that command, so a wrong one is a wrong product)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpuctl.core.verify import node_checks
from gpuctl.core.verify.model import IN_USE_CHECK, CheckStatus, Held
from gpuctl.kube.daemonsets import PluginPod, daemonset_from_json
from gpuctl.kube.nodes import NodeInfo, node_from_json

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "failures.yaml"


def corpus_text(item_id: str) -> str:
    items = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    (text,) = [item["text"] for item in items if item["id"] == item_id]
    return str(text)


def node(
    *,
    name: str = "gpu-0",
    ready: str = "True",
    reason: str = "KubeletReady",
    message: str = "kubelet is posting ready status",
    labels: dict[str, str] | None = None,
    capacity: dict[str, str] | None = None,
    allocatable: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> NodeInfo:
    capacity = {"cpu": "64", "nvidia.com/gpu": "8"} if capacity is None else capacity
    item: dict[str, Any] = {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"taints": taints or [], **({"unschedulable": True} if unschedulable else {})},
        "status": {
            "conditions": [{"type": "Ready", "status": ready, "reason": reason, "message": message}],
            "capacity": capacity,
            "allocatable": capacity if allocatable is None else allocatable,
        },
    }
    return node_from_json(item)


def plugin_pod(
    phase: str = "Running", *, ready: bool = True, waiting: str = "", restarts: int = 0
) -> PluginPod:
    return PluginPod(
        "kube-system", "nvidia-device-plugin-abcde", "gpu-0", phase, ready, "plugin", waiting, restarts
    )


def daemonset(tolerations: list[dict[str, str]]) -> Any:
    return daemonset_from_json(
        {
            "metadata": {"namespace": "kube-system", "name": "nvidia-device-plugin"},
            "spec": {
                "selector": {"matchLabels": {"app": "nvidia-device-plugin"}},
                "template": {
                    "spec": {
                        "tolerations": tolerations,
                        "containers": [
                            {"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}
                        ],
                    }
                },
            },
        }
    )


def test_node_ready_passes_a_ready_node_and_names_a_not_ready_one_with_describe() -> None:
    ready = node_checks.node_ready(node())
    assert (ready.id, ready.status, ready.message) == ("node.ready", CheckStatus.PASS, "Ready")
    check = node_checks.node_ready(
        node(ready="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.")
    )
    assert check.failed
    assert check.id == "node.ready"
    assert check.message.startswith("NotReady (NodeStatusUnknown): Kubelet stopped posting node status.")
    assert "`kubectl describe node gpu-0`" in check.hint or check.diagnosis


def test_node_ready_of_an_unknown_cause_hints_describe_and_cuts_the_message() -> None:
    check = node_checks.node_ready(node(ready="False", reason="Odd", message="x" * 400))
    assert check.failed
    assert check.message == ("NotReady (Odd): " + "x" * 400)[:200]
    assert check.hint.startswith("`kubectl describe node gpu-0`; on the node: `systemctl status kubelet")
    assert check.diagnosis


def test_node_ready_diagnoses_a_network_plugin_not_ready() -> None:
    message = (
        "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
        "message:Network plugin returns error: cni plugin not initialized"
    )
    check = node_checks.node_ready(node(ready="False", reason="KubeletNotReady", message=message))
    assert check.failed
    assert check.diagnosis
    assert check.hint != "`kubectl describe node gpu-0`"


def test_a_cordoned_node_fails_schedulable_with_the_uncordon_command() -> None:
    schedulable = node_checks.node_schedulable(node())
    assert (schedulable.id, schedulable.status, schedulable.message) == (
        "node.schedulable",
        CheckStatus.PASS,
        "schedulable",
    )
    check = node_checks.node_schedulable(node(unschedulable=True))
    assert check.failed
    assert check.id == "node.schedulable"
    assert check.message == "cordoned (spec.unschedulable): no GPU workload can land here"
    assert check.hint == "`kubectl uncordon gpu-0` if the maintenance is over"
    assert check.diagnosis == "sched.unschedulable"


def test_gpu_capacity_against_the_expected_count_on_both_sides() -> None:
    eight = node()
    assert node_checks.gpu_capacity(eight, 8).status is CheckStatus.PASS
    assert node_checks.gpu_capacity(eight, 8).message == "capacity 8 nvidia.com/gpu"
    assert node_checks.gpu_capacity(eight, None).status is CheckStatus.PASS
    for expected in (7, 9):
        check = node_checks.gpu_capacity(eight, expected)
        assert check.failed, expected
        assert check.id == "gpu.capacity"
        assert check.message == f"capacity 8 nvidia.com/gpu, expected {expected}"
        assert (
            check.hint
            == "`kubectl describe node gpu-0`; compare `nvidia-smi -L` on the node with --expect-gpus"
        )


def test_gpu_capacity_of_time_sliced_gpus_counts_physical_gpus() -> None:
    shared = node(
        labels={
            "nvidia.com/gpu.sharing-strategy": "time-slicing",
            "nvidia.com/gpu.replicas": "4",
            "nvidia.com/gpu.count": "2",
        },
        capacity={"nvidia.com/gpu": "8"},
    )
    assert node_checks.gpu_capacity(shared, 2).status is CheckStatus.PASS
    check = node_checks.gpu_capacity(shared, 8)
    assert check.failed
    assert check.message == "capacity 2 physical GPU(s), expected 8"


def test_gpu_capacity_of_mig_devices_only_passes_with_their_counts() -> None:
    mig = node(capacity={"nvidia.com/gpu": "0", "nvidia.com/mig-1g.10gb": "7", "nvidia.com/mig-2g.20gb": "0"})
    check = node_checks.gpu_capacity(mig, 8)
    assert check.status is CheckStatus.PASS
    assert check.message == "capacity 7 nvidia.com/mig-1g.10gb"
    allocatable = node_checks.gpu_allocatable(mig)
    assert allocatable.status is CheckStatus.PASS
    assert allocatable.id == "gpu.allocatable"
    assert allocatable.message == "allocatable 7"


def test_no_gpu_capacity_fails_and_says_whether_the_node_is_labelled() -> None:
    bare = node(capacity={"cpu": "8"})
    check = node_checks.gpu_capacity(bare, 8)
    assert check.failed
    assert check.message == "expected to be a GPU node but advertises no nvidia.com/gpu capacity"
    assert check.diagnosis
    assert check.hint
    labelled = node(capacity={"cpu": "8"}, labels={"nvidia.com/gpu.present": "true"})
    assert node_checks.gpu_capacity(labelled, None).message == (
        "labelled as a GPU node but advertises no nvidia.com/gpu capacity"
    )
    assert node_checks.gpu_allocatable(bare).status is CheckStatus.SKIP
    assert node_checks.gpu_allocatable(bare).id == "gpu.allocatable"
    assert node_checks.gpu_allocatable(bare).message == "no GPU capacity"


def test_no_gpu_capacity_takes_the_cause_and_fix_of_the_plugin_log() -> None:
    bare = node(capacity={"cpu": "8"})
    log = node_checks.device_plugin_log(bare, plugin_pod(), corpus_text("plugin-mps-daemon-not-running"))
    assert log.failed  # no capacity: a plugin failure is severe
    assert log.diagnosis == "plugin.mps-daemon-missing"
    check = node_checks.gpu_capacity(bare, 8, log)
    assert check.failed
    assert check.diagnosis == "plugin.mps-daemon-missing"
    assert check.hint == log.hint
    cause = log.message.split("; log:", 1)[0]
    assert check.message == f"expected to be a GPU node but advertises no nvidia.com/gpu capacity: {cause}"
    assert "; log:" not in check.message


def test_gpu_allocatable_below_capacity_counts_the_unhealthy_gpus() -> None:
    healthy = node_checks.gpu_allocatable(node())
    assert (healthy.id, healthy.status, healthy.message) == (
        "gpu.allocatable",
        CheckStatus.PASS,
        "allocatable 8",
    )
    check = node_checks.gpu_allocatable(node(allocatable={"nvidia.com/gpu": "6"}))
    assert check.failed
    assert check.id == "gpu.allocatable"
    assert check.message == "allocatable 6 < capacity 8: 2 GPU(s) unhealthy"
    assert check.diagnosis == "node.unhealthy-gpus"
    assert check.hint == (
        "find the device plugin pod (`kubectl get pods -A -o wide --field-selector spec.nodeName=gpu-0`), "
        "read its log for the XID, then `dmesg | grep -i xid` on gpu-0"
    )
    one_less = node_checks.gpu_allocatable(node(allocatable={"nvidia.com/gpu": "7"}))
    assert one_less.failed
    assert "1 GPU(s) unhealthy" in one_less.message


def test_device_plugin_pod_missing_in_the_cluster_or_on_the_node() -> None:
    nowhere = node_checks.device_plugin_pod(node(), None, any_plugin=False)
    assert nowhere.failed
    assert nowhere.id == "device-plugin.pod"
    assert nowhere.message == "no NVIDIA device plugin DaemonSet in the cluster"
    assert nowhere.hint == "install it: `gpuctl render | kubectl apply -f -` (or the GPU Operator)"
    elsewhere = node_checks.device_plugin_pod(node(), None, any_plugin=True)
    assert elsewhere.failed
    assert elsewhere.id == "device-plugin.pod"
    assert elsewhere.message == "no device plugin pod runs on this node"
    assert (
        elsewhere.hint
        == "check the DaemonSet's nodeSelector/tolerations against `kubectl describe node gpu-0`"
    )


def test_a_starting_plugin_pod_asks_for_a_rerun() -> None:
    for pod, state in (
        (plugin_pod("Pending", ready=False), "Pending"),
        (plugin_pod("Pending", ready=False, waiting="ContainerCreating"), "ContainerCreating"),
        (plugin_pod("Running", ready=False, waiting="PodInitializing"), "PodInitializing"),
    ):
        check = node_checks.device_plugin_pod(node(), pod, any_plugin=True)
        assert check.failed
        assert check.id == "device-plugin.pod"
        assert check.message == (
            f"kube-system/nvidia-device-plugin-abcde is still starting ({state}): "
            "its GPUs are not registered yet"
        )
        assert check.hint == (
            "rerun `gpuctl verify` in a minute; if it stays so, "
            "`kubectl -n kube-system describe pod nvidia-device-plugin-abcde`"
        )


def test_a_crashing_or_unready_plugin_pod_names_describe_and_logs() -> None:
    hint = (
        "`kubectl -n kube-system describe pod nvidia-device-plugin-abcde` and "
        "`kubectl -n kube-system logs nvidia-device-plugin-abcde`"
    )
    for pod, state in (
        (plugin_pod("Running", ready=False, waiting="CrashLoopBackOff", restarts=5), "CrashLoopBackOff"),
        (plugin_pod("Pending", ready=False, waiting="ContainerCreating", restarts=1), "ContainerCreating"),
        (plugin_pod("Running", ready=False, waiting="ErrImagePull"), "ErrImagePull"),
        (plugin_pod("Failed", ready=True), "Failed"),
        (plugin_pod("Running", ready=False), "Running"),
    ):
        check = node_checks.device_plugin_pod(node(), pod, any_plugin=True)
        assert check.failed, pod
        assert check.id == "device-plugin.pod"
        assert check.message == (
            f"kube-system/nvidia-device-plugin-abcde is {state}, not ready (restarts {pod.restarts})"
        )
        assert check.hint == hint
    ready = node_checks.device_plugin_pod(node(), plugin_pod(), any_plugin=True)
    assert ready.status is CheckStatus.PASS
    assert ready.id == "device-plugin.pod"
    assert ready.message == "kube-system/nvidia-device-plugin-abcde ready"


def test_device_plugin_log_fails_only_when_gpus_are_missing() -> None:
    text = corpus_text("plugin-mps-daemon-not-running")
    skipped = node_checks.device_plugin_log(node(), None, text)
    assert skipped.status is CheckStatus.SKIP
    assert skipped.message == "no device plugin pod to read"
    assert node_checks.device_plugin_log(node(), plugin_pod(), None).status is CheckStatus.SKIP
    clean = node_checks.device_plugin_log(
        node(), plugin_pod(), "I0423 06:04:56.558122 39 main.go:1] Starting"
    )
    assert clean.status is CheckStatus.PASS
    assert clean.message == "no known failure signature in the recent log"
    healthy = node_checks.device_plugin_log(node(), plugin_pod(), text)
    assert healthy.status is CheckStatus.WARN
    assert healthy.id == "device-plugin.log"
    assert healthy.diagnosis == "plugin.mps-daemon-missing"
    assert healthy.message.endswith("; log: " + text[:40]) or "; log: " in healthy.message
    short = node_checks.device_plugin_log(node(allocatable={"nvidia.com/gpu": "7"}), plugin_pod(), text)
    assert short.failed
    assert short.message == healthy.message
    assert short.hint == healthy.hint


def test_a_plugin_restart_hint_names_the_pod_it_deletes() -> None:
    text = corpus_text("plugin-mps-daemon-not-running")
    check = node_checks.device_plugin_log(node(), plugin_pod(), text)
    if "delete pod" in check.hint:
        assert "kubectl -n kube-system delete pod nvidia-device-plugin-abcde" in check.hint


def test_taint_toleration_on_each_side() -> None:
    plugin = [daemonset([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])]
    untainted = node_checks.taint_toleration(
        node(taints=[{"key": "x", "value": "y", "effect": "PreferNoSchedule"}]), plugin
    )
    assert untainted.status is CheckStatus.PASS
    assert untainted.id == "taint.toleration"
    assert untainted.message == "no NoSchedule/NoExecute taints"
    tolerated = node_checks.taint_toleration(
        node(taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]), plugin
    )
    assert tolerated.status is CheckStatus.PASS
    assert tolerated.id == "taint.toleration"
    assert tolerated.message == "taints tolerated by the device plugin: nvidia.com/gpu=present:NoSchedule"
    two = node_checks.taint_toleration(
        node(
            taints=[
                {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
            ]
        ),
        plugin,
    )
    assert two.message == (
        "taints tolerated by the device plugin: nvidia.com/gpu=present:NoSchedule, nvidia.com/gpu:NoSchedule"
    )
    foreign = node_checks.taint_toleration(
        node(
            taints=[
                {"key": "dedicated", "value": "ml", "effect": "NoExecute"},
                {"key": "nvidia.com/gpu", "effect": "NoSchedule"},
            ]
        ),
        plugin,
    )
    assert foreign.failed
    assert foreign.id == "taint.toleration"
    assert foreign.message == (
        "device plugin does not tolerate the node's taint: "
        "kube-system/nvidia-device-plugin ✗ dedicated=ml:NoExecute"
    )
    assert foreign.hint == (
        "add a matching toleration to the DaemonSet (`gpuctl taint-gpu-nodes` audits this), "
        "or remove the taint: `kubectl taint nodes gpu-0 KEY-`"
    )


def test_an_untolerated_gate_taint_is_only_a_warning() -> None:
    plugin = [daemonset([])]
    for key in ("gpuctl.io/unproven", "readiness.k8s.io/gpu-proven"):
        check = node_checks.taint_toleration(
            node(taints=[{"key": key, "value": "cuda", "effect": "NoSchedule"}]), plugin
        )
        assert check.status is CheckStatus.WARN, key
    both = node_checks.taint_toleration(
        node(
            taints=[
                {"key": "gpuctl.io/unproven", "value": "cuda", "effect": "NoSchedule"},
                {"key": "dedicated", "effect": "NoSchedule"},
            ]
        ),
        plugin,
    )
    assert both.failed
    assert both.message.endswith(
        "kube-system/nvidia-device-plugin ✗ dedicated:NoSchedule; "
        "kube-system/nvidia-device-plugin ✗ gpuctl.io/unproven=cuda:NoSchedule"
    )


def test_gpus_in_use_warns_only_when_every_gpu_is_held() -> None:
    assert node_checks.gpus_in_use(node(), Held(0, 8)) is None
    some = node_checks.gpus_in_use(node(), Held(2, 6, ("ml/train-0",)))
    assert some is not None
    assert some.id == IN_USE_CHECK
    assert some.status is CheckStatus.PASS
    assert some.message == "2 GPU(s) held by 1 workload(s) (ml/train-0): the verification took the 6 free"
    held = ("ml/a", "ml/b", "ml/c", "ml/d", "ml/e")
    busy = node_checks.gpus_in_use(node(), Held(8, 0, held))
    assert busy is not None
    assert busy.status is CheckStatus.WARN
    assert busy.id == IN_USE_CHECK
    one = node_checks.gpus_in_use(node(), Held(1, 7, ("ml/a",)))
    assert one is not None
    assert one.message == "1 GPU(s) held by 1 workload(s) (ml/a): the verification took the 7 free"
    assert (
        busy.message
        == "all 8 GPU(s) held by 5 workload(s) (ml/a, ml/b, ml/c and 2 more): not proven by this run"
    )
    assert busy.hint == (
        "verify it again when they have finished, or drain it for a proof now "
        "(`kubectl drain gpu-0 --ignore-daemonsets`, then verify, then `kubectl uncordon gpu-0`)"
    )
    three = node_checks.gpus_in_use(node(), Held(8, 0, held[:3]))
    assert three is not None
    assert "(ml/a, ml/b, ml/c): not proven" in three.message
    four = node_checks.gpus_in_use(node(), Held(8, 0, held[:4]))
    assert four is not None
    assert "(ml/a, ml/b, ml/c and 1 more)" in four.message
    anonymous = node_checks.gpus_in_use(node(), Held(8, 0))
    assert anonymous is not None
    assert anonymous.message == "all 8 GPU(s) held by its workloads: not proven by this run"


def test_mig_devices_only_are_listed_by_profile() -> None:
    mig = node(
        capacity={
            "nvidia.com/gpu": "0",
            "nvidia.com/mig-1g.10gb": "7",
            "nvidia.com/mig-2g.20gb": "2",
            "nvidia.com/mig-3g.40gb": "0",
        }
    )
    check = node_checks.gpu_capacity(mig, None)
    assert (check.id, check.status, check.message) == (
        "gpu.capacity",
        CheckStatus.PASS,
        "capacity 7 nvidia.com/mig-1g.10gb, 2 nvidia.com/mig-2g.20gb",
    )


def test_every_gpu_capacity_verdict_has_its_id() -> None:
    bare = node(capacity={"cpu": "8"})
    plain = node_checks.gpu_capacity(bare, 8)
    log = node_checks.device_plugin_log(bare, plugin_pod(), corpus_text("plugin-mps-daemon-not-running"))
    explained = node_checks.gpu_capacity(bare, 8, log)
    passing = node_checks.gpu_capacity(node(), 8)
    assert [check.id for check in (plain, explained, passing)] == ["gpu.capacity"] * 3
    assert plain.diagnosis == "node.no-gpu-advertised"
    assert "gpu-0" in plain.hint


def test_device_plugin_log_ids_and_the_restart_command_its_hint_names() -> None:
    assert node_checks.device_plugin_log(node(), None, "x").id == "device-plugin.log"
    assert node_checks.device_plugin_log(node(), plugin_pod(), "nothing known").id == "device-plugin.log"
    check = node_checks.device_plugin_log(node(), plugin_pod(), corpus_text("xid31-dmesg"))
    assert check.diagnosis == "xid.31"
    assert "(`kubectl -n kube-system delete pod nvidia-device-plugin-abcde`)" in check.hint
    assert check.status is CheckStatus.WARN
