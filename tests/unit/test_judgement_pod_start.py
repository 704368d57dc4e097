"""A verification pod that never ran, or ran and failed, judged by the code every level shares
(gpuctl.core.verify.pod_judgement.pod_start_problem, gpuctl.core.verify.levels.base.ProofLevel)
and by the NCCL level's failed-run rule: the check each stage fails, its message, and the command
its hint names. Scheduler and registry lines come from tests/corpus/failures.yaml (each cited
there); the failed all_reduce_perf run from tests/corpus/workloads."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuctl.core.verify.levels.cuda import CUDA
from gpuctl.core.verify.levels.nccl import NCCL
from gpuctl.core.verify.model import CheckStatus, ProofOptions, VerifyOptions
from gpuctl.core.verify.pod_judgement import pod_start_problem
from gpuctl.kube.nodes import NodeInfo, node_from_json
from gpuctl.kube.pod_states import PodOutcome

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
NODE: NodeInfo = node_from_json(
    {"metadata": {"name": "gpu-0"}, "status": {"capacity": {"nvidia.com/gpu": "2"}}}
)
OPTIONS = VerifyOptions()
NAMESPACE = OPTIONS.namespace


def failure_text(item_id: str) -> str:
    items = yaml.safe_load((CORPUS / "failures.yaml").read_text(encoding="utf-8"))
    (text,) = [item["text"] for item in items if item["id"] == item_id]
    return str(text)


def test_a_pod_not_created_names_the_permission_to_check() -> None:
    outcome = PodOutcome("p", "create-failed", message='pods "p" is forbidden')
    check = pod_start_problem(outcome, NODE, "gpu-proof", "img:1")
    assert check is not None
    assert check.id == "pod.scheduled"
    assert check.status is CheckStatus.FAIL
    assert check.message == 'could not create the verification pod: pods "p" is forbidden'
    assert check.hint == "`kubectl auth can-i create pods -n gpu-proof`"


def test_an_unschedulable_pod_is_diagnosed_from_the_scheduler_s_message() -> None:
    outcome = PodOutcome("p", "unschedulable", message=failure_text("sched-insufficient-gpu"))
    check = pod_start_problem(outcome, NODE, NAMESPACE, "img:1")
    assert check is not None
    assert check.id == "pod.scheduled"
    assert check.diagnosis == "sched.insufficient-gpu"
    assert check.message.endswith("(1 Insufficient nvidia.com/gpu)")
    assert "--field-selector spec.nodeName=gpu-0" in check.hint


def test_an_unschedulable_pod_without_a_known_cause_names_describe_node() -> None:
    odd = PodOutcome("p", "unschedulable", message="0/1 nodes are available: " + "x" * 400)
    check = pod_start_problem(odd, NODE, NAMESPACE, "img:1")
    assert check is not None
    assert check.message == ("Unschedulable: 0/1 nodes are available: " + "x" * 400)[:300]
    assert check.hint == "`kubectl describe node gpu-0`"
    assert check.diagnosis == ""
    silent = pod_start_problem(PodOutcome("p", "unschedulable"), NODE, NAMESPACE, "img:1")
    assert silent is not None
    assert silent.message == "Unschedulable"


def test_an_image_not_found_names_the_image_and_the_flag_that_sets_it() -> None:
    text = failure_text("image-digest-withdrawn-operator-cuda")
    outcome = PodOutcome("p", "image-pull", reason="ErrImagePull", message=text)
    check = pod_start_problem(outcome, NODE, NAMESPACE, "img:1")
    assert check is not None
    assert check.id == "pod.image"
    assert check.diagnosis == "image.digest-withdrawn"
    assert check.message.startswith(f"ErrImagePull: {text}"[:300] + " — ")
    assert "`gpuctl verify --image REGISTRY/IMAGE:TAG`" in check.hint
    backoff = pod_start_problem(
        PodOutcome("p", "image-pull", reason="ImagePullBackOff"), NODE, NAMESPACE, "img:1"
    )
    assert backoff is not None
    assert backoff.message.startswith("ImagePullBackOff — the node could not pull the image img:1,")
    assert "`crictl pull img:1` on gpu-0" in backoff.hint


def test_a_container_that_never_started_is_a_runtime_failure() -> None:
    outcome = PodOutcome("p", "start-error", reason="RunContainerError", message="weird")
    check = pod_start_problem(outcome, NODE, NAMESPACE, "img:1")
    assert check is not None
    assert check.id == "pod.image"
    assert check.diagnosis == "container.run-error"
    assert check.message.startswith("RunContainerError: weird — ")
    assert check.hint.startswith("on gpu-0: `sudo journalctl -u containerd --since -10min`")


def test_a_pod_that_ran_has_no_start_problem() -> None:
    for outcome in (
        PodOutcome("p", "succeeded", phase="Succeeded", exit_code=0),
        PodOutcome("p", "failed", phase="Failed", exit_code=1),
        PodOutcome("p", "timeout", phase="Running", node_name="gpu-0"),
    ):
        assert pod_start_problem(outcome, NODE, NAMESPACE, "img:1") is None, outcome.state


def test_a_level_pod_that_never_ran_fails_the_level_s_check_with_its_cause() -> None:
    outcome = PodOutcome("p", "unschedulable", message="0/1 nodes are available: odd")
    (check,) = CUDA.judge(outcome, NODE, 1, OPTIONS).checks
    assert check.id == "cuda.workload"
    assert check.status is CheckStatus.FAIL
    assert check.message == "the CUDA check pod: Unschedulable: 0/1 nodes are available: odd"
    assert check.hint == "`kubectl describe node gpu-0`"
    pulled = PodOutcome("p", "image-pull", reason="ImagePullBackOff")
    (image,) = NCCL.judge(pulled, NODE, 2, OPTIONS).checks
    assert image.id == "nccl.all-reduce"
    assert image.message.startswith(
        "the NCCL all-reduce pod: ImagePullBackOff — the node could not pull the image "
        f"{NCCL.image(OPTIONS.proof)},"
    )


def test_a_level_pod_that_ran_out_of_time() -> None:
    for phase, shown in (("Running", "Running"), ("", "Running"), ("Succeeded", "Succeeded")):
        outcome = PodOutcome("p", "timeout", phase=phase, node_name="gpu-0")
        (check,) = CUDA.judge(outcome, NODE, 1, OPTIONS).checks
        assert check.id == "cuda.workload"
        assert check.status is CheckStatus.FAIL
        assert check.message == f"the CUDA check did not finish before --timeout ran out (pod {shown})"
        assert check.hint == "rerun with a larger --timeout, and --keep-pods to inspect the pod"


def test_a_level_judges_the_log_or_else_the_termination_message() -> None:
    ran = PodOutcome("gpuctl-verify-cuda-gpu-0", "succeeded", exit_code=0, log="no result", message="ignored")
    (check,) = CUDA.judge(ran, NODE, 1, OPTIONS).checks
    assert check.message == "the CUDA check exited 0 without a result per GPU: no result"
    assert check.hint == f"`kubectl -n {NAMESPACE} logs gpuctl-verify-cuda-gpu-0` (rerun with --keep-pods)"
    silent = PodOutcome("gpuctl-verify-cuda-gpu-0", "succeeded", exit_code=0, message="from the message")
    (from_message,) = CUDA.judge(silent, NODE, 1, OPTIONS).checks
    assert from_message.message == "the CUDA check exited 0 without a result per GPU: from the message"


def test_the_level_workloads_and_their_logs_hint() -> None:
    cuda = CUDA.workload(2, ProofOptions())
    assert (cuda.level, cuda.container, cuda.memory_shm) == ("cuda", "cuda-check", False)
    assert cuda.image == CUDA.image(ProofOptions())
    assert cuda.command == CUDA.command(2)
    nccl = NCCL.workload(4, ProofOptions())
    assert (nccl.level, nccl.container, nccl.memory_shm) == ("nccl", "nccl-all-reduce", True)
    assert nccl.command == NCCL.command(4)
    assert nccl.image == NCCL.image(ProofOptions())
    options = VerifyOptions(namespace="gpu-proof")
    assert CUDA.logs_hint(PodOutcome("pod-1", "failed"), options) == (
        "`kubectl -n gpu-proof logs pod-1` (rerun with --keep-pods)"
    )
    assert CUDA.not_applicable(1) == ""
    assert NCCL.not_applicable(1) == "not applicable: 1 GPU"
    assert NCCL.not_applicable(0) == "not applicable: 0 GPU"
    assert NCCL.not_applicable(2) == ""


def test_a_failed_all_reduce_is_named_by_nccl_s_last_warning() -> None:
    text = (
        CORPUS / "workloads" / "all-reduce-perf-rtx-5090-2gpus-nccl-debug-info-cuda-failure.txt"
    ).read_text(encoding="utf-8")
    outcome = PodOutcome("p", "failed", phase="Failed", exit_code=1, log=text)
    evaluation = NCCL.judge(outcome, NODE, 2, OPTIONS)
    (check,) = evaluation.checks
    assert check.id == "nccl.all-reduce"
    assert check.status is CheckStatus.FAIL
    assert check.diagnosis == "nccl.cuda-failure"
    assert check.message == (
        "all_reduce_perf exited 1 before its summary: GENOA-06: Test NCCL failure common.cu:392 "
        "'unhandled cuda error (run with NCCL_DEBUG=INFO for details) / ' — "
        "a CUDA call inside NCCL failed: 'invalid argument'"
    )
    assert check.hint.startswith("run `gpuctl verify --level cuda` on gpu-0")
    assert evaluation.nccl is not None
    assert evaluation.nccl.gpus == 2


def test_an_all_reduce_that_printed_nothing_known_points_at_its_log() -> None:
    hint = f"`kubectl -n {NAMESPACE} logs p` (rerun with --keep-pods)"
    unknown = PodOutcome("p", "failed", phase="Failed", exit_code=1, log="\n  something\nelse")
    (check,) = NCCL.judge(unknown, NODE, 2, OPTIONS).checks
    assert check.message == "all_reduce_perf exited 1 before its summary: something"
    assert check.hint == hint
    assert check.diagnosis == ""
    killed = PodOutcome("p", "failed", phase="Failed", exit_code=137, reason="OOMKilled")
    (oom,) = NCCL.judge(killed, NODE, 2, OPTIONS).checks
    assert oom.message == "all_reduce_perf exited 137 before its summary: OOMKilled"
    nameless = PodOutcome("p", "failed", phase="Failed", exit_code=2)
    (state,) = NCCL.judge(nameless, NODE, 2, OPTIONS).checks
    assert state.message == "all_reduce_perf exited 2 before its summary: failed"
    long = PodOutcome("p", "failed", phase="Failed", exit_code=1, log="y" * 400)
    (cut,) = NCCL.judge(long, NODE, 2, OPTIONS).checks
    assert cut.message == ("all_reduce_perf exited 1 before its summary: " + "y" * 400)[:300]


def test_a_level_names_its_own_namespace_and_its_own_table() -> None:
    options = VerifyOptions(namespace="gpu-proof")
    (check,) = CUDA.judge(PodOutcome("p", "create-failed", message="denied"), NODE, 1, options).checks
    assert check.hint == "`kubectl auth can-i create pods -n gpu-proof`"
    # The CUDA check's output is read with the CUDA workload's rows (not only the catalogues).
    found = CUDA.diagnose_output(
        "CUDA driver version is insufficient for CUDA runtime version", NODE, options
    )
    assert found is not None
    assert found.signature_id == "cuda.driver-too-old"
