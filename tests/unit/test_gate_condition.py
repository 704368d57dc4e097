"""The GPUProven condition's verdicts (gpuctl.core.node_condition) and which GPUs a DRA node's
failure is confined to (gpuctl.core.stacks.dra.device_gate), from verify's own result objects."""

from __future__ import annotations

from datetime import UTC, datetime

from gpuctl.core.node_condition import Verdict, condition, verdict_of
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.dra.device_gate import failed_gpus, passed_gpus, pod_order, rule_name
from gpuctl.core.verify.model import Check, CudaGpu, GpuCounts, NodeResult, failed, passed
from gpuctl.kube.dra import DraDevice, DraNode

NOW = datetime(2026, 12, 6, 21, 0, 0, tzinfo=UTC)
COUNTS = GpuCounts(8, 8, 8, 8)


def _node(*checks: Check, cuda: tuple[CudaGpu, ...] | None = None, busy: bool = False) -> NodeResult:
    return NodeResult("gpu-0", COUNTS, checks, level="cuda", cuda=cuda, busy=busy, gpu_allocation=Stack.DRA)


def test_reasons_are_the_failing_check_id_or_the_level_proven() -> None:
    proven = verdict_of(_node(passed("cuda.workload", "vectorAdd passed on 8 GPU(s)")))
    assert (proven.status, proven.reason) == ("True", "cuda")
    broken = verdict_of(_node(passed("node.ready", "Ready"), failed("gpu.capacity", "0 of 8")))
    assert (broken.status, broken.reason) == ("False", "gpu.capacity")
    assert broken.message == "gpu.capacity: 0 of 8"


def test_a_node_not_judged_keeps_its_status_and_says_why() -> None:
    busy = verdict_of(_node(passed("node.ready", "Ready"), busy=True))
    assert (busy.judged, busy.reason) == (False, "NotJudgedBusy")
    timed_out = verdict_of(_node(failed("pod.scheduled", "nvidia-smi did not run before --timeout ran out")))
    assert (timed_out.judged, timed_out.reason) == (False, "NotJudgedTimedOut")
    before = {
        "type": "GPUProven",
        "status": "False",
        "reason": "cuda.workload",
        "lastTransitionTime": "2026-12-06T20:00:00Z",
        "lastHeartbeatTime": "2026-12-06T20:00:00Z",
    }
    kept = condition(busy, before, NOW, "GPUProven")
    assert (kept["status"], kept["reason"]) == ("False", "NotJudgedBusy")
    assert kept["lastTransitionTime"] == "2026-12-06T20:00:00Z"
    assert kept["lastHeartbeatTime"] == "2026-12-06T21:00:00Z"
    assert "status kept from 2026-12-06T20:00:00Z" in kept["message"]
    first = condition(busy, None, NOW, "GPUProven")  # nothing to keep: Unknown
    assert first["status"] == "Unknown"


def test_the_transition_time_moves_only_with_the_status() -> None:
    before = {"type": "GPUProven", "status": "True", "lastTransitionTime": "2026-12-06T20:00:00Z"}
    same = condition(Verdict("True", "CudaProven", "proven"), before, NOW, "GPUProven")
    assert same["lastTransitionTime"] == "2026-12-06T20:00:00Z"
    flipped = condition(Verdict("False", "CudaWorkload", "broken"), before, NOW, "GPUProven")
    assert flipped["lastTransitionTime"] == "2026-12-06T21:00:00Z"


def _published(*tainted: int) -> DraNode:
    devices = [
        DraDevice(
            f"gpu-{i}",
            "gpu",
            uuid=f"GPU-{i}",
            index=i,
            pool="gpu-0",
            taints=("gpu.nvidia.com/xid=79:NoSchedule",) if i in tainted else (),
        )
        for i in (3, 0, 2, 1)
    ]
    return DraNode("gpu-0", tuple(devices))


def test_the_pod_sees_the_claimable_gpus_in_index_order() -> None:
    assert [d.name for d in pod_order(_published())] == ["gpu-0", "gpu-1", "gpu-2", "gpu-3"]
    assert [d.name for d in pod_order(_published(1))] == ["gpu-0", "gpu-2", "gpu-3"]


def test_a_failure_is_confined_only_when_the_cuda_check_alone_failed_on_some_gpus() -> None:
    published = _published()
    devices = pod_order(published)
    cuda = tuple(
        CudaGpu(i, i != 2, None if i != 2 else "uncorrectable ECC error encountered") for i in range(4)
    )
    ecc = _node(passed("node.ready", "Ready"), failed("cuda.workload", "vectorAdd failed"), cuda=cuda)
    assert failed_gpus(ecc, published) == {"gpu-2"}
    assert passed_gpus(ecc, devices) == {"gpu-0", "gpu-1", "gpu-3"}
    driver = _node(failed("nvidia-smi.run", "failed"), failed("cuda.workload", "vectorAdd failed"), cuda=cuda)
    assert failed_gpus(driver, published) is None  # the node's failure: the node taint
    every = tuple(CudaGpu(i, False, "system not yet initialized") for i in range(4))
    assert failed_gpus(_node(failed("cuda.workload", "all"), cuda=every), published) is None
    assert passed_gpus(_node(busy=True, cuda=cuda), devices) == set()


def test_a_gpu_the_driver_reports_unhealthy_is_confined_to_itself() -> None:
    published = _published(1)  # gpu-1 carries the DRA driver's gpu.nvidia.com/xid=79 taint
    devices = pod_order(published)  # the pod's GPU 1 is then the node's gpu-2
    cuda = (CudaGpu(0, True), CudaGpu(1, True), CudaGpu(2, True))
    sick = _node(failed("gpu.allocatable", "1 GPU(s) tainted unhealthy"), cuda=cuda)
    assert failed_gpus(sick, published) == {"gpu-1"}
    assert passed_gpus(sick, devices) == {"gpu-0", "gpu-2", "gpu-3"}
    both = _node(
        failed("gpu.allocatable", "tainted"),
        failed("cuda.workload", "ecc"),
        cuda=(*cuda[:2], CudaGpu(2, False)),
    )
    assert failed_gpus(both, published) == {"gpu-1", "gpu-3"}
    admin = DraNode(
        "gpu-0",
        (*published.devices, DraDevice("gpu-4", "gpu", index=4, taints=("example.com/fan:NoSchedule",))),
    )
    assert failed_gpus(sick, admin) is None  # an admin's taint is no GPU failure


def test_rule_names_are_dns_subdomains() -> None:
    assert rule_name("gpu-0", "gpu-2") == "gpuctl-unproven-gpu-0-gpu-2"
    long = rule_name("n" * 250, "gpu-2")
    assert len(long) <= 253
    assert long != rule_name("n" * 249 + "m", "gpu-2")
