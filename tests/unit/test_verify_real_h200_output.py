"""`gpuctl verify` judges what nvidia-smi printed on a real H200 (driver 580.159.04, one GPU, MIG
off; tests/corpus/nvidia-smi/linux-nvidia-h200-580.159.04.*): the pod as the kubelet reports it
(classify), its answer taken from the termination message or its log (PodRun), then judged."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from gpuctl.core.verify.model import CheckStatus, PodEvaluation
from gpuctl.core.verify.pod_judgement import SMI_CHECKS, evaluate
from gpuctl.core.verify.pod_run import PlannedPod, PodRun
from gpuctl.kube.nodes import GFD_MEMORY_LABEL, GFD_PRODUCT_LABEL, NodeInfo
from gpuctl.kube.pod_states import classify
from gpuctl.kube.pods import PodBatch, PodOutcome

CAPTURES = Path(__file__).parents[1] / "corpus" / "nvidia-smi"
POD = "gpuctl-verify-ab12cd34-h200"
IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
UUID = "GPU-1b11370e-064c-64d9-859e-5b243ba48c00"
# GPU feature discovery's labels for that machine's GPU.
NODE = NodeInfo(
    "h200", {GFD_PRODUCT_LABEL: "NVIDIA-H200", GFD_MEMORY_LABEL: "143771"}, {}, (), True, "", "", False, 1, 1
)


def _capture(name: str) -> str:
    return (CAPTURES / f"linux-nvidia-h200-580.159.04.{name}").read_text(encoding="utf-8")


class _Logs:
    """The one PodBatch call judging a finished pod can make: read its container's log."""

    def __init__(self, log: str) -> None:
        self.log = log

    def read_log(self, name: str, container: str) -> str:
        assert (name, container) == (POD, "nvidia-smi")
        return self.log


def _pod(phase: str, exit_code: int, reason: str, message: str) -> dict[str, Any]:
    terminated = {"exitCode": exit_code, "reason": reason, "message": message}
    return {
        "metadata": {"name": POD, "namespace": "gpuctl-verify"},
        "spec": {"nodeName": "h200"},
        "status": {
            "phase": phase,
            "containerStatuses": [{"name": "nvidia-smi", "state": {"terminated": terminated}}],
        },
    }


def _judge(pod: dict[str, Any], log: str = "", requested: int | None = 1) -> PodEvaluation:
    outcome = classify(pod)
    assert outcome is not None

    def judge(outcome: PodOutcome, node: NodeInfo) -> PodEvaluation:
        return evaluate(outcome, node, requested, "gpuctl-verify", IMAGE)

    run = PodRun(cast(PodBatch, _Logs(log)), [PlannedPod(POD, NODE, dict)], "nvidia-smi", judge)
    return run._evaluate(outcome)


def _checks(evaluation: PodEvaluation) -> dict[str, tuple[CheckStatus, str]]:
    return {check.id: (check.status, check.message) for check in evaluation.checks}


def _after_run(evaluation: PodEvaluation) -> set[tuple[CheckStatus, str]]:
    """The checks of nvidia-smi's output (GPUs, product, memory, driver)."""
    return {_checks(evaluation)[check] for check in SMI_CHECKS[1:]}


def test_the_real_termination_message_passes_a_node_with_one_h200() -> None:
    # What `nvidia-smi ... -f /dev/termination-log` wrote (95 bytes: the kubelet keeps it whole).
    message = _capture("query-verify-f.txt")
    evaluation = _judge(_pod("Succeeded", 0, "Completed", message), log="(the log is not read)")
    assert _checks(evaluation) == {
        "pod.scheduled": (CheckStatus.PASS, "scheduled through nodeSelector kubernetes.io/hostname"),
        "pod.image": (CheckStatus.PASS, f"pulled {IMAGE}"),
        "nvidia-smi.run": (CheckStatus.PASS, "nvidia-smi listed 1 GPU(s)"),
        "nvidia-smi.gpus": (CheckStatus.PASS, "1 GPU(s) seen = 1 requested"),
        "nvidia-smi.product": (CheckStatus.PASS, "NVIDIA H200"),
        "nvidia-smi.memory": (CheckStatus.PASS, "143771 MiB per GPU"),
        "nvidia-smi.driver": (CheckStatus.PASS, "driver 580.159.04"),
    }
    assert (evaluation.seen, evaluation.uuids, evaluation.mig_devices) == (1, (UUID,), 0)
    assert (evaluation.product, evaluation.driver_version) == ("NVIDIA H200", "580.159.04")


def test_the_real_answer_fails_a_node_expecting_two_gpus() -> None:
    evaluation = _judge(_pod("Succeeded", 0, "Completed", _capture("query-verify-f.txt")), requested=2)
    assert _checks(evaluation)["nvidia-smi.gpus"] == (CheckStatus.FAIL, "1 GPU(s) seen, 2 requested")


def test_the_real_mig_pod_output_on_a_gpu_without_mig() -> None:
    """The MIG pod's `nvidia-smi -L && <query>` answers in its log: the GPU's -L line, then the CSV."""
    evaluation = _judge(_pod("Succeeded", 0, "Completed", ""), log=_capture("mig-pod.txt"), requested=None)
    assert {status for status, _ in _checks(evaluation).values()} == {CheckStatus.PASS}
    assert (evaluation.seen, evaluation.uuids, evaluation.mig_devices) == (1, (UUID,), 0)


def test_the_real_no_devices_exit_6_fails_with_its_diagnosis() -> None:
    # FallbackToLogsOnError: the failed container's message is its log's tail, which gpuctl reads.
    text = _capture("no-devices.txt")
    evaluation = _judge(_pod("Failed", 6, "Error", text), log=text)
    run = next(check for check in evaluation.checks if check.id == "nvidia-smi.run")
    assert run.status is CheckStatus.FAIL
    assert run.diagnosis == "smi.no-devices"
    assert run.message.startswith("nvidia-smi exited 6 (Error): No devices were found — ")
    assert _after_run(evaluation) == {(CheckStatus.SKIP, "nvidia-smi failed")}
    assert (evaluation.seen, evaluation.uuids) == (None, ())


def test_the_real_invalid_field_exit_2_fails_nvidia_smi_run() -> None:
    text = _capture("invalid-field.txt")
    evaluation = _judge(_pod("Failed", 2, "Error", text), log=text)
    assert _checks(evaluation)["nvidia-smi.run"] == (
        CheckStatus.FAIL,
        'nvidia-smi exited 2 (Error): Field "no.such.field" is not a valid field to query.',
    )
    assert _after_run(evaluation) == {(CheckStatus.SKIP, "nvidia-smi failed")}
    assert (evaluation.seen, evaluation.uuids) == (None, ())


@pytest.mark.parametrize(
    ("capture", "first_line"),
    [("no-devices.txt", "No devices were found"), ("invalid-field.txt", 'Field "no.such.field"')],
)
def test_real_error_text_is_no_gpu_list_even_when_the_pod_succeeded(capture: str, first_line: str) -> None:
    """An error text in a message that reports success (a wrapper that lost the exit code)."""
    evaluation = _judge(_pod("Succeeded", 0, "Completed", _capture(capture)))
    status, message = _checks(evaluation)["nvidia-smi.run"]
    assert status is CheckStatus.FAIL
    assert message.startswith("unexpected nvidia-smi output: expected 6 comma-separated values, got 1: ")
    assert first_line in message
    assert _after_run(evaluation) == {(CheckStatus.SKIP, "no parsable output")}
    assert (evaluation.seen, evaluation.uuids) == (None, ())
