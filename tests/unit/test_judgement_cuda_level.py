"""The CUDA level's verdict (gpuctl.core.verify.levels.cuda) on the pod's log: the check script's
own marker lines around each GPU's vectorAdd output, that output taken from real runs (the
passing capture in tests/corpus/workloads, the failing line cited in tests/corpus/failures.yaml).
Each branch: every GPU passed, some failed (named, with the diagnosis), a GPU with no result, and a
pod that printed no result per GPU."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuctl.core.verify.levels.cuda import CUDA
from gpuctl.core.verify.model import CheckStatus, CudaGpu, PodEvaluation, VerifyOptions
from gpuctl.cuda_workload import NO_RESULT, cuda_check_script, format_vector_add
from gpuctl.kube.nodes import node_from_json
from gpuctl.kube.pod_states import PodOutcome

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
PASSED = (CORPUS / "workloads" / "vectoradd-pass.txt").read_text(encoding="utf-8")
NODE = node_from_json({"metadata": {"name": "gpu-0"}, "status": {"capacity": {"nvidia.com/gpu": "2"}}})
OPTIONS = VerifyOptions()
LOGS_HINT = f"`kubectl -n {OPTIONS.namespace} logs pod-1` (rerun with --keep-pods)"


def failure_line(item_id: str) -> str:
    items = yaml.safe_load((CORPUS / "failures.yaml").read_text(encoding="utf-8"))
    (text,) = [item["text"] for item in items if item["id"] == item_id]
    return str(text)


def gpu(index: int, output: str, exit_code: int | None) -> str:
    """What the check script prints around one GPU's vectorAdd (cuda_check_script's echo lines)."""
    end = f"[gpuctl-cuda] gpu {index} exit {exit_code}\n" if exit_code is not None else ""
    return f"[gpuctl-cuda] gpu {index} begin\n{output}{end}"


def judged(log: str, exit_code: int, gpus: int = 2) -> PodEvaluation:
    state = "succeeded" if exit_code == 0 else "failed"
    return CUDA.judge(PodOutcome("pod-1", state, exit_code=exit_code, log=log), NODE, gpus, OPTIONS)


def test_vectoradd_passing_on_every_gpu() -> None:
    evaluation = judged(gpu(0, PASSED, 0) + gpu(1, PASSED, 0), 0)
    (check,) = evaluation.checks
    assert (check.id, check.status, check.message) == (
        "cuda.workload",
        CheckStatus.PASS,
        "vectorAdd passed on 2 GPU(s)",
    )
    assert evaluation.cuda == (CudaGpu(0, True, None), CudaGpu(1, True, None))


def test_one_gpu_failing_is_named_with_its_error_and_diagnosis() -> None:
    line = failure_line("cuda-vectoradd-driver-insufficient-blackwell")
    evaluation = judged(gpu(0, PASSED, 0) + gpu(1, f"{line}\n", 1), 1)
    (check,) = evaluation.checks
    assert check.status is CheckStatus.FAIL
    assert check.diagnosis == "cuda.driver-too-old"
    error = "CUDA driver version is insufficient for CUDA runtime version"
    assert check.message.startswith(f"vectorAdd failed on 1 of 2 GPU(s) (GPU 1): {error} — CUDA cannot use")
    assert check.hint.startswith("on gpu-0: `nvidia-smi` shows the newest CUDA the driver runs")
    assert evaluation.cuda == (CudaGpu(0, True, None), CudaGpu(1, False, error))


def test_every_failed_gpu_is_counted_and_listed() -> None:
    evaluation = judged(gpu(0, "weird\n", 3) + gpu(1, "odd\n", 4) + gpu(2, PASSED, 0), 1, gpus=3)
    (check,) = evaluation.checks
    assert check.message == "vectorAdd failed on 2 of 3 GPU(s) (GPU 0, 1): weird"
    assert check.hint == LOGS_HINT
    assert check.diagnosis == ""
    assert [result.ok for result in evaluation.cuda or ()] == [False, False, True]


def test_a_gpu_with_no_result_failed() -> None:
    evaluation = judged(gpu(0, PASSED, 0) + gpu(1, "", None), 1)
    (check,) = evaluation.checks
    assert check.message == f"vectorAdd failed on 1 of 2 GPU(s) (GPU 1): {NO_RESULT}"
    assert check.hint == LOGS_HINT
    assert evaluation.cuda == (CudaGpu(0, True, None), CudaGpu(1, False, NO_RESULT))
    missing = judged(gpu(0, PASSED, 0), 1)  # GPU 1 never began
    assert missing.cuda == (CudaGpu(0, True, None), CudaGpu(1, False, NO_RESULT))


def test_a_pod_that_printed_no_result_per_gpu() -> None:
    evaluation = judged("\n  exec format error\n", 1)
    (check,) = evaluation.checks
    assert check.message == "the CUDA check exited 1 without a result per GPU: exec format error"
    assert check.hint == LOGS_HINT
    assert evaluation.cuda == (CudaGpu(0, False, NO_RESULT), CudaGpu(1, False, NO_RESULT))
    silent = CUDA.judge(PodOutcome("pod-1", "failed", exit_code=137, reason="OOMKilled"), NODE, 1, OPTIONS)
    assert silent.checks[0].message == "the CUDA check exited 137 without a result per GPU: OOMKilled"
    nameless = CUDA.judge(PodOutcome("pod-1", "failed", exit_code=2), NODE, 1, OPTIONS)
    assert nameless.checks[0].message == "the CUDA check exited 2 without a result per GPU: failed"


def test_every_gpu_passing_but_the_pod_failing_is_no_pass() -> None:
    (check,) = judged(gpu(0, PASSED, 0) + gpu(1, PASSED, 0), 1).checks
    assert check.status is CheckStatus.FAIL
    assert check.message == "the CUDA check exited 1 without a result per GPU: [gpuctl-cuda] gpu 0 begin"
    (unknown,) = judged(gpu(0, PASSED, 0) + gpu(1, PASSED, 0), 0).checks  # exit 0: passed
    assert unknown.status is CheckStatus.PASS


def test_an_unknown_failure_keeps_300_characters() -> None:
    long = "y" * 400
    (unknown,) = judged(gpu(0, f"{long}\n", 1) + gpu(1, PASSED, 0), 1).checks
    assert unknown.message == f"vectorAdd failed on 1 of 2 GPU(s) (GPU 0): {long}"[:300]


def test_the_pod_runs_the_check_script() -> None:
    assert CUDA.command(3) == ("sh", "-c", cuda_check_script(3))
    assert CUDA.image(OPTIONS.proof) == OPTIONS.proof.cuda_image


def test_the_sim_prints_vectoradd_as_the_capture_does() -> None:
    assert format_vector_add() == PASSED
