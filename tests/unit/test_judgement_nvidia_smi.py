"""The nvidia-smi pod's verdict (gpuctl.core.verify.pod_judgement.evaluate) on real nvidia-smi
output (tests/corpus/nvidia-smi: an H200 and an H100 80GB HBM3 on driver 580.159.04, and the
driver failure line cited in tests/corpus/failures.yaml): every check of every stage, its status,
message and hint, and each numeric judgement on both sides of its boundary."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuctl.core.verify.model import PodEvaluation
from gpuctl.core.verify.pod_judgement import evaluate
from gpuctl.kube.nodes import GFD_MEMORY_LABEL, GFD_PRODUCT_LABEL, NodeInfo
from gpuctl.kube.pod_states import PodOutcome

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
H200 = (CORPUS / "nvidia-smi" / "linux-nvidia-h200-580.159.04.query-verify.txt").read_text(encoding="utf-8")
H100 = (CORPUS / "nvidia-smi" / "linux-nvidia-h100-80gb-hbm3-580.159.04.query-verify.txt").read_text(
    encoding="utf-8"
)
H200_LISTED = (CORPUS / "nvidia-smi" / "linux-nvidia-h200-580.159.04.mig-pod.txt").read_text(encoding="utf-8")
NO_DEVICES = (CORPUS / "nvidia-smi" / "linux-nvidia-h200-580.159.04.no-devices.txt").read_text(
    encoding="utf-8"
)
H200_UUID = "GPU-1b11370e-064c-64d9-859e-5b243ba48c00"
IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
NAMESPACE = "gpuctl-system"
SMI = ("nvidia-smi.run", "nvidia-smi.gpus", "nvidia-smi.product", "nvidia-smi.memory", "nvidia-smi.driver")
HEAD = [
    ("pod.scheduled", "pass", "scheduled through nodeSelector kubernetes.io/hostname"),
    ("pod.image", "pass", f"pulled {IMAGE}"),
]


def node(product: str = "NVIDIA-H200", memory: str = "143771") -> NodeInfo:
    labels = {GFD_PRODUCT_LABEL: product, GFD_MEMORY_LABEL: memory}
    return NodeInfo("h200", labels, {}, (), True, "", "", False, 1, 1)


def ran(log: str, *, exit_code: int = 0) -> PodOutcome:
    return PodOutcome("pod-1", "succeeded", phase="Succeeded", exit_code=exit_code, log=log)


def judged(outcome: PodOutcome, requested: int | None = 1, on: NodeInfo | None = None) -> PodEvaluation:
    return evaluate(outcome, on or node(), requested, NAMESPACE, IMAGE)


def summary(evaluation: PodEvaluation) -> list[tuple[str, str, str]]:
    return [(check.id, check.status.value, check.message) for check in evaluation.checks]


def hint(evaluation: PodEvaluation, check_id: str) -> str:
    (found,) = [check for check in evaluation.checks if check.id == check_id]
    return found.hint


def test_a_healthy_h200_passes_every_check() -> None:
    evaluation = judged(ran(H200))
    assert summary(evaluation) == [
        *HEAD,
        ("nvidia-smi.run", "pass", "nvidia-smi listed 1 GPU(s)"),
        ("nvidia-smi.gpus", "pass", "1 GPU(s) seen = 1 requested"),
        ("nvidia-smi.product", "pass", "NVIDIA H200"),
        ("nvidia-smi.memory", "pass", "143771 MiB per GPU"),
        ("nvidia-smi.driver", "pass", "driver 580.159.04"),
    ]
    assert (evaluation.seen, evaluation.product, evaluation.driver_version) == (
        1,
        "NVIDIA H200",
        "580.159.04",
    )
    assert evaluation.uuids == (H200_UUID,)
    assert evaluation.mig_devices == 0


def test_the_listing_before_the_query_is_not_a_gpu() -> None:
    evaluation = judged(ran(H200_LISTED))
    assert summary(evaluation)[2] == ("nvidia-smi.run", "pass", "nvidia-smi listed 1 GPU(s)")
    assert evaluation.uuids == (H200_UUID,)
    assert evaluation.mig_devices == 0


def test_gpus_seen_against_the_request_on_both_sides() -> None:
    for requested in (0, 2):
        evaluation = judged(ran(H200), requested)
        assert summary(evaluation)[3] == ("nvidia-smi.gpus", "fail", f"1 GPU(s) seen, {requested} requested")
        assert hint(evaluation, "nvidia-smi.gpus") == (
            "the runtime exposed the wrong devices: check NVIDIA_VISIBLE_DEVICES/CDI handling of the "
            "nvidia runtime on h200 and `nvidia-smi -L` on the node"
        )
    assert summary(judged(ran(H200), None))[3] == ("nvidia-smi.gpus", "pass", "1 GPU(s) seen")


def test_a_product_label_of_another_gpu_means_a_stale_feature_discovery() -> None:
    evaluation = judged(ran(H200), on=node(product="NVIDIA-H100-80GB-HBM3"))
    assert summary(evaluation)[4] == (
        "nvidia-smi.product",
        "fail",
        "nvidia-smi shows 'NVIDIA H200', node label says 'NVIDIA-H100-80GB-HBM3'",
    )
    assert hint(evaluation, "nvidia-smi.product") == "GPU feature discovery is stale: restart it on h200"
    # GFD's suffixes for time-slicing and MIG, a lower-case label, and no label at all pass.
    for label in ("NVIDIA-H200-SHARED", "NVIDIA-H200-MIG-1g.18gb", "nvidia-h200", ""):
        assert summary(judged(ran(H200), on=node(product=label, memory="")))[4] == (
            "nvidia-smi.product",
            "pass",
            "NVIDIA H200",
        ), label


def test_the_memory_label_is_allowed_one_percent() -> None:
    # 143771 MiB: one percent of a label is label // 100 MiB either way.
    for label in (143771, 145223, 142348):
        check = summary(judged(ran(H200), on=node(memory=str(label))))[5]
        assert check == ("nvidia-smi.memory", "pass", "143771 MiB per GPU"), label
    for label in (145224, 142347, 81559):
        evaluation = judged(ran(H200), on=node(memory=str(label)))
        assert summary(evaluation)[5] == (
            "nvidia-smi.memory",
            "fail",
            f"143771 MiB per GPU, node label says {label} MiB",
        ), label
        assert hint(evaluation, "nvidia-smi.memory") == (
            "`nvidia-smi -q -d MEMORY` on h200; a different board or a MIG mode change"
        )
    # A MIG node's memory label is its MIG devices' memory: not compared.
    mig = node(product="NVIDIA-H200-MIG-1g.18gb", memory="16384")
    assert summary(judged(ran(H200), on=mig))[5] == ("nvidia-smi.memory", "pass", "143771 MiB per GPU")


def test_the_tolerance_is_one_percent_of_the_label_not_of_the_figure() -> None:
    h100 = "NVIDIA-H100-80GB-HBM3"  # nvidia-smi: 81559 MiB
    for label, verdict in (("80752", "pass"), ("80751", "fail"), ("82382", "pass"), ("82383", "fail")):
        assert summary(judged(ran(H100), on=node(product=h100, memory=label)))[5][1] == verdict, label


def test_mixed_gpus_on_one_node_are_warnings() -> None:
    evaluation = judged(ran(H100 + H200), 2)
    assert summary(evaluation)[2:] == [
        ("nvidia-smi.run", "pass", "nvidia-smi listed 2 GPU(s)"),
        ("nvidia-smi.gpus", "pass", "2 GPU(s) seen = 2 requested"),
        ("nvidia-smi.product", "warn", "mixed products: NVIDIA H100 80GB HBM3, NVIDIA H200"),
        ("nvidia-smi.memory", "warn", "GPUs differ in memory: [81559, 143771] MiB"),
        ("nvidia-smi.driver", "pass", "driver 580.159.04"),
    ]
    assert hint(evaluation, "nvidia-smi.product") == (
        "mixed GPU models on one node confuse schedulers; label or split the node"
    )
    assert hint(evaluation, "nvidia-smi.memory") == "check `nvidia-smi -q -d MEMORY` on h200"
    assert evaluation.product == "NVIDIA H100 80GB HBM3, NVIDIA H200"


def test_no_gpu_listed_skips_the_product_memory_and_driver() -> None:
    assert summary(judged(ran("")))[2:] == [
        ("nvidia-smi.run", "pass", "nvidia-smi listed 0 GPU(s)"),
        ("nvidia-smi.gpus", "fail", "0 GPU(s) seen, 1 requested"),
        ("nvidia-smi.product", "skip", "no GPU listed"),
        ("nvidia-smi.memory", "skip", "no memory figure"),
        ("nvidia-smi.driver", "skip", "no driver version"),
    ]


def test_output_that_is_not_the_query_fails_the_run() -> None:
    evaluation = judged(ran(NO_DEVICES))
    assert summary(evaluation)[2:] == [
        (
            "nvidia-smi.run",
            "fail",
            "unexpected nvidia-smi output: expected 6 comma-separated values, got 1: 'No devices were found'",
        ),
        *[(check, "skip", "no parsable output") for check in ("gpus", "product", "memory", "driver")],
    ][:1] + [
        (f"nvidia-smi.{check}", "skip", "no parsable output")
        for check in ("gpus", "product", "memory", "driver")
    ]
    assert hint(evaluation, "nvidia-smi.run") == (
        "rerun with --keep-pods and read pod-1's output (its log, or "
        "`.status.containerStatuses[0].state.terminated.message`); is its image a CUDA image?"
    )
    assert evaluation.seen is None


def test_nvidia_smi_failing_on_a_missing_driver_is_diagnosed() -> None:
    items = yaml.safe_load((CORPUS / "failures.yaml").read_text(encoding="utf-8"))
    (line,) = [item["text"] for item in items if item["id"] == "smi-couldnt-communicate-module-missing"]
    outcome = PodOutcome("pod-1", "failed", phase="Failed", exit_code=9, reason="Error", log=f"{line}\n")
    evaluation = judged(outcome)
    run = evaluation.checks[2]
    assert run.id == "nvidia-smi.run"
    assert run.status.value == "fail"
    assert run.diagnosis == "smi.driver-not-loaded"
    assert run.message.startswith(f"nvidia-smi exited 9 (Error): {line}"[:240] + " — nvidia-smi cannot talk")
    assert run.hint.startswith("on h200: check `nvidia-smi` and `lsmod | grep nvidia`")
    assert summary(evaluation)[3:] == [
        (f"nvidia-smi.{check}", "skip", "nvidia-smi failed")
        for check in ("gpus", "product", "memory", "driver")
    ]


def test_nvidia_smi_failing_on_something_unknown_points_at_its_log() -> None:
    outcome = PodOutcome(
        "pod-1", "failed", phase="Failed", exit_code=1, reason="Error", log="\n  odd\nmore\n"
    )
    evaluation = judged(outcome)
    assert summary(evaluation)[2] == ("nvidia-smi.run", "fail", "nvidia-smi exited 1 (Error): odd")
    assert (
        hint(evaluation, "nvidia-smi.run") == f"`kubectl -n {NAMESPACE} logs pod-1` (rerun with --keep-pods)"
    )
    silent = PodOutcome("pod-1", "failed", phase="Failed", exit_code=2)
    assert summary(judged(silent))[2] == ("nvidia-smi.run", "fail", "nvidia-smi exited 2 (failed): ")
    long = PodOutcome("pod-1", "failed", phase="Failed", exit_code=1, reason="Error", log="z" * 400)
    assert summary(judged(long))[2][2] == ("nvidia-smi exited 1 (Error): " + "z" * 400)[:300]
    exited = ran(H200, exit_code=3)
    assert summary(judged(exited))[2][:2] == ("nvidia-smi.run", "fail")


def test_a_container_that_never_started_its_process_is_a_runtime_failure() -> None:
    outcome = PodOutcome(
        "pod-1", "failed", phase="Failed", exit_code=128, reason="StartError", message="failed to create task"
    )
    run = judged(outcome).checks[2]
    assert run.diagnosis == "container.run-error"
    assert run.message.startswith(
        "nvidia-smi exited 128 (StartError): StartError — the container was created"
    )


def test_a_timeout_at_each_stage() -> None:
    hint_text = (
        "rerun with a larger --timeout (and --keep-pods), then "
        f"`kubectl -n {NAMESPACE} describe pod pod-1` and "
        f"`kubectl -n {NAMESPACE} get events --field-selector involvedObject.name=pod-1`"
    )
    running = judged(PodOutcome("pod-1", "timeout", phase="Running", node_name="h200"))
    assert summary(running)[2:] == [
        ("nvidia-smi.run", "fail", "nvidia-smi did not finish before --timeout ran out (pod Running)"),
        *[(f"nvidia-smi.{check}", "skip", "no output") for check in ("gpus", "product", "memory", "driver")],
    ]
    assert (
        hint(running, "nvidia-smi.run") == "rerun with a larger --timeout, and --keep-pods to inspect the pod"
    )
    phaseless = judged(PodOutcome("pod-1", "timeout", node_name="h200"))
    assert summary(phaseless)[2][2] == "nvidia-smi did not finish before --timeout ran out (pod Running)"
    bound = judged(PodOutcome("pod-1", "timeout", phase="Pending", node_name="h200"))
    assert summary(bound)[1:] == [
        (
            "pod.image",
            "fail",
            "container not started before --timeout ran out "
            "(pod still Pending: image pull or container creation)",
        ),
        *[
            (f"nvidia-smi.{check}", "skip", "container did not start")
            for check in ("run", "gpus", "product", "memory", "driver")
        ],
    ]
    assert hint(bound, "pod.image") == hint_text
    unbound = judged(PodOutcome("pod-1", "timeout", phase="Pending"))
    assert summary(unbound) == [
        ("pod.scheduled", "fail", "not scheduled before --timeout ran out"),
        ("pod.image", "skip", "pod not scheduled"),
        *[
            (f"nvidia-smi.{check}", "skip", "pod not scheduled")
            for check in ("run", "gpus", "product", "memory", "driver")
        ],
    ]
    assert hint(unbound, "pod.scheduled") == hint_text


def test_each_stage_that_failed_skips_the_later_checks_saying_why() -> None:
    created = judged(PodOutcome("pod-1", "create-failed", message="denied"))
    assert [(c.id, c.status.value, c.message) for c in created.checks[1:]] == [
        (check, "skip", "pod not created") for check in ("pod.image", *SMI)
    ]
    unschedulable = judged(PodOutcome("pod-1", "unschedulable", message="0/1 nodes are available: odd"))
    assert unschedulable.checks[0].id == "pod.scheduled"
    assert [(c.status.value, c.message) for c in unschedulable.checks[1:]] == [
        ("skip", "pod not scheduled")
    ] * 6
    pulled = judged(PodOutcome("pod-1", "image-pull", reason="ErrImagePull", message="odd", node_name="h200"))
    assert [(c.id, c.message) for c in pulled.checks[2:]] == [(check, "image not pulled") for check in SMI]
    started = judged(
        PodOutcome("pod-1", "start-error", reason="RunContainerError", message="odd", node_name="h200")
    )
    assert [(c.id, c.message) for c in started.checks[2:]] == [
        (check, "container did not start") for check in SMI
    ]


def test_an_image_failure_no_row_knows_names_the_image_flag() -> None:
    outcome = PodOutcome("pod-1", "image-pull", reason="ImageInspectError", message="odd", node_name="h200")
    image = judged(outcome).checks[1]
    assert (image.id, image.status.value, image.message, image.diagnosis) == (
        "pod.image",
        "fail",
        "ImageInspectError: odd",
        "",
    )
    assert image.hint == f"check --image {IMAGE}"
    bare = judged(PodOutcome("pod-1", "image-pull", reason="ImageInspectError", node_name="h200")).checks[1]
    assert bare.message == "ImageInspectError"


def test_the_mig_devices_listed_before_the_query_are_counted() -> None:
    listing = (CORPUS / "nvidia-smi" / "linux-nvidia-h100-mig-590.48.01.list.txt").read_text(encoding="utf-8")
    evaluation = judged(ran(listing + H100), None, on=node(product="NVIDIA-H100-80GB-HBM3", memory="81559"))
    mig_lines = [line for line in listing.splitlines() if line.lstrip().startswith("MIG ")]
    assert evaluation.mig_devices == len(mig_lines) > 1
    assert evaluation.seen == 1
    assert summary(evaluation)[2] == ("nvidia-smi.run", "pass", "nvidia-smi listed 1 GPU(s)")
