"""The proven/busy/failed rule (gpuctl.core.proof.verdict.judge), the GPUProven condition it gives
(gpuctl.core.node_condition) and the DeviceTaintRule a failed DRA GPU gets
(gpuctl.core.stacks.dra.device_gate.rule_manifest), checked whole: every field a controller or a person
reads."""

from __future__ import annotations

from datetime import UTC, datetime

from gpuctl.core.node_condition import Verdict, condition, verdict_of
from gpuctl.core.proof.verdict import BUSY, FAILED, PROVEN, judge
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.dra.device_gate import failed_gpus, passed_gpus, pod_order, rule_manifest, rule_name
from gpuctl.core.verify.model import Check, CudaGpu, GpuCounts, NodeResult, failed, passed
from gpuctl.kube.dra import DraDevice, DraNode

NOW = datetime(2026, 12, 6, 21, 0, 0, tzinfo=UTC)


def node(*checks: Check, busy: bool = False) -> NodeResult:
    return NodeResult("gpu-0", GpuCounts(8, 8, 8, 8), checks, level="cuda", busy=busy)


def test_the_verdict_names_its_node_and_the_checks_that_decided_it() -> None:
    broken = failed("gpu.capacity", "capacity 7 nvidia.com/gpu, expected 8")
    proven = judge(node(passed("node.ready", "Ready")))
    assert (proven.node, proven.verdict, proven.failures) == ("gpu-0", PROVEN, ())
    failing = judge(node(passed("node.ready", "Ready"), broken))
    assert (failing.node, failing.verdict, failing.failures) == ("gpu-0", FAILED, (broken,))
    busy = judge(node(broken, busy=True))
    assert (busy.node, busy.verdict, busy.failures) == ("gpu-0", BUSY, (broken,))
    assert not busy.judged
    assert not busy.passed_unproven
    quiet = judge(node(passed("node.ready", "Ready"), busy=True))
    assert quiet.failures == ()
    assert quiet.passed_unproven


def test_each_condition_verdict_whole() -> None:
    assert verdict_of(node(passed("cuda.workload", "ok"))) == Verdict(
        "True", "cuda", "proven at level cuda by gpuctl verify"
    )
    assert verdict_of(node(failed("cuda.workload", "GPU 2 failed"), failed("node.ready", "x"))) == Verdict(
        "False", "cuda.workload", "cuda.workload: GPU 2 failed"
    )
    assert verdict_of(node(failed("gpu.capacity", "x"), busy=True)) == Verdict(
        "Unknown", "NotJudgedBusy", "not judged: its workloads hold every GPU", judged=False
    )
    late = failed("pod.scheduled", "not scheduled before --timeout ran out")
    assert verdict_of(node(late)) == Verdict(
        "Unknown",
        "NotJudgedTimedOut",
        "not judged: pod.scheduled: not scheduled before --timeout ran out",
        judged=False,
    )
    # One failure that is not a timeout: the node is judged failed.
    mixed = verdict_of(node(late, failed("gpu.capacity", "capacity 7")))
    assert (mixed.status, mixed.reason, mixed.judged) == ("False", "pod.scheduled", True)


def test_condition_messages_are_cut_at_1000_characters() -> None:
    long = "x" * 2000
    assert verdict_of(node(failed("gpu.capacity", long))).message == f"gpu.capacity: {long}"[:1000]
    timed = verdict_of(node(failed("pod.image", long + " before --timeout ran out")))
    assert timed.message == f"not judged: pod.image: {long}"[:1000]
    written = condition(Verdict("False", "gpu.capacity", long), None, NOW, "GPUProven")
    assert written == {
        "type": "GPUProven",
        "status": "False",
        "reason": "gpu.capacity",
        "message": long[:1000],
        "lastHeartbeatTime": "2026-12-06T21:00:00Z",
        "lastTransitionTime": "2026-12-06T21:00:00Z",
    }


def test_a_condition_kept_without_a_transition_time_says_before() -> None:
    busy = Verdict("Unknown", "NotJudgedBusy", "not judged: its workloads hold every GPU", judged=False)
    kept = condition(busy, {"type": "GPUProven", "status": "True"}, NOW, "GPUProven")
    assert kept["status"] == "True"
    assert kept["message"] == "not judged: its workloads hold every GPU; status kept from before"
    assert kept["lastTransitionTime"] == "2026-12-06T21:00:00Z"
    nothing = condition(busy, {"type": "GPUProven"}, NOW, "GPUProven")
    assert nothing["status"] == "Unknown"


def test_the_device_taint_rule_whole() -> None:
    device = DraDevice(name="gpu-2", pool="gpu-0", type="gpu", index=2, uuid="GPU-1", taints=())
    assert rule_manifest("gpu-0", device, "cuda", "gpuctl.io/unproven") == {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {
            "name": "gpuctl-unproven-gpu-0-gpu-2",
            "labels": {
                "app.kubernetes.io/managed-by": "gpuctl",
                "gpuctl.io/gate": "device",
                "gpuctl.io/gated-node": "gpu-0",
            },
        },
        "spec": {
            "deviceSelector": {"driver": "gpu.nvidia.com", "pool": "gpu-0", "device": "gpu-2"},
            "taint": {"key": "gpuctl.io/unproven", "value": "cuda", "effect": "NoSchedule"},
        },
    }


def test_a_rule_name_at_the_limit_keeps_its_name() -> None:
    node_name = "n" * (253 - len("gpuctl-unproven--gpu-0"))
    assert rule_name(node_name, "gpu-0") == f"gpuctl-unproven-{node_name}-gpu-0"
    longer = rule_name(node_name + "n", "gpu-0")
    assert len(longer) == 253
    assert longer.startswith(f"gpuctl-unproven-{node_name}"[:242] + "-")


def published(count: int = 4) -> DraNode:
    return DraNode("gpu-0", tuple(DraDevice(f"gpu-{i}", "gpu", index=i, pool="gpu-0") for i in range(count)))


def dra_node(*checks: Check, cuda: tuple[CudaGpu, ...] | None) -> NodeResult:
    return NodeResult("gpu-0", GpuCounts(4, 4, 4, 4), checks, cuda=cuda, gpu_allocation=Stack.DRA)


def test_a_cuda_failure_is_confined_only_with_one_result_per_gpu_and_some_gpus_failed() -> None:
    failing = failed("cuda.workload", "vectorAdd failed")
    three = (CudaGpu(0, True), CudaGpu(1, False, "ecc"), CudaGpu(2, True))
    assert failed_gpus(dra_node(failing, cuda=three), published()) is None  # 3 results for 4 GPUs
    assert failed_gpus(dra_node(failing, cuda=None), published()) is None
    every_ok = tuple(CudaGpu(i, True) for i in range(4))
    assert failed_gpus(dra_node(failing, cuda=every_ok), published()) is None  # failed, yet no GPU did
    assert passed_gpus(dra_node(failing, cuda=three), pod_order(published())) == set()


def test_a_result_for_a_gpu_the_claim_did_not_get_is_ignored() -> None:
    failing = failed("cuda.workload", "vectorAdd failed")
    beyond = (CudaGpu(0, True), CudaGpu(1, False, "ecc"), CudaGpu(2, True), CudaGpu(4, False, "ecc"))
    assert failed_gpus(dra_node(failing, cuda=beyond), published()) == {"gpu-1"}
    assert passed_gpus(dra_node(failing, cuda=beyond), pod_order(published())) == {"gpu-0", "gpu-2"}
