"""The CUDA check against the pinned program: the sim's vectorAdd output is, byte for byte, what the
pinned cuda-sample image printed in a cited capture (tests/corpus/workloads.yaml), the pin cannot
move without a capture of its CUDA release, and real failing vectorAdd output (quoted verbatim in
tests/corpus/failures.yaml with its source) drives the parser and the diagnosis through
`gpuctl verify --level cuda`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from gpuctl.cuda_workload import MARKER, NO_RESULT, cuda_check_script
from gpuctl.defaults import CUDA_SAMPLE_IMAGE
from tests.cluster.test_verify_dra import checks_of, verify_json

CORPUS = Path(__file__).parents[1] / "corpus"
WORKLOADS: list[dict[str, Any]] = yaml.safe_load((CORPUS / "workloads.yaml").read_text(encoding="utf-8"))
FAILURES: list[dict[str, Any]] = yaml.safe_load((CORPUS / "failures.yaml").read_text(encoding="utf-8"))
# The real vectorAdd failure lines (GPU Operator validators running the sample), by corpus id.
VECTOR_ADD_FAILURES = (
    "cuda-vectoradd-system-not-ready-validator",
    "cuda-vectoradd-driver-insufficient-blackwell",
    "cuda-vectoradd-no-device-validator",
    "cuda-vectoradd-devices-busy-mig",
)
# `Failed to allocate device vector A (error code ...)!`: the line the sample prints on a CUDA error.
SAMPLE_FAILURE = re.compile(r"^Failed to allocate device vector A \(error code (?P<error>.+)\)!$")


def _release(image: str) -> str:
    """The CUDA release in a cuda-sample tag: vectoradd-cuda12.5.0-ubuntu22.04 -> cuda12.5.0."""
    found = re.search(r":vectoradd-(cuda\d+(?:\.\d+)*)", image)
    assert found is not None, image
    return found.group(1)


def _capture_of(image: str) -> dict[str, Any] | None:
    """The cited vectorAdd capture of `image`'s CUDA release, None when there is none."""
    release = _release(image)
    captures = [
        item
        for item in WORKLOADS
        if item["kind"] == "vectoradd" and f"cuda-sample:vectoradd-{release}" in item["component"]
    ]
    return captures[0] if captures else None


def _pinned_capture() -> dict[str, Any]:
    capture = _capture_of(CUDA_SAMPLE_IMAGE)
    assert capture is not None, (
        f"no capture of {CUDA_SAMPLE_IMAGE}'s vectorAdd in tests/corpus/workloads.yaml"
    )
    return capture


def test_the_pinned_cuda_sample_has_a_cited_capture_of_its_release() -> None:
    capture = _pinned_capture()
    assert capture["source"].startswith("https://github.com/")
    assert (CORPUS / capture["file"]).read_text(encoding="utf-8").endswith("Test PASSED\nDone\n")
    # A pin moved to a release no capture is of fails the lookup above.
    assert _capture_of("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda99.9.0-ubuntu24.04") is None


def _segments(log: str) -> dict[int, str]:
    """Each GPU's output between the check script's markers."""
    found = re.findall(
        rf"^{re.escape(MARKER)} gpu (\d+) begin\n(.*?)^{re.escape(MARKER)} gpu \1 exit 0\n",
        log,
        re.MULTILINE | re.DOTALL,
    )
    return {int(index): text for index, text in found}


def test_the_sims_vector_add_is_byte_for_byte_the_pinned_capture(sim: Any, cli: Any) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(
        {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 2}]}
    )
    code, report = verify_json(cli, cluster, "--level", "cuda", "--keep-pods", "--timeout", "30")
    assert code == 0, report
    core = CoreV1Api(cluster.api_client())
    pods = [pod for pod in cluster.verification_pods() if pod.spec.containers[0].name == "cuda-check"]
    assert len(pods) == 1
    pod = pods[0]
    assert pod.spec.containers[0].image == CUDA_SAMPLE_IMAGE
    assert pod.spec.containers[0].command == ["sh", "-c", cuda_check_script(2)]
    log = core.read_namespaced_pod_log(pod.metadata.name, pod.metadata.namespace, container="cuda-check")
    capture = (CORPUS / _pinned_capture()["file"]).read_text(encoding="utf-8")
    assert _segments(log) == {0: capture, 1: capture}


def _failure(item_id: str) -> dict[str, Any]:
    return next(item for item in FAILURES if item["id"] == item_id)


def test_real_failing_vector_add_output_is_parsed_and_diagnosed(sim: Any, cli: Any) -> None:
    nodes = []
    for number, item_id in enumerate(VECTOR_ADD_FAILURES):
        line = _failure(item_id)["text"]
        stdout = f"{MARKER} gpu 0 begin\n{line}\n{MARKER} gpu 0 exit 1\n"
        nodes.append(
            {"name": f"gpu-{number}", "gpus": 1, "workloads": {"cuda": {"stdout": stdout, "exitCode": 1}}}
        )
    cluster = sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": nodes})
    code, report = verify_json(cli, cluster, "--level", "cuda", "--timeout", "30")
    assert code == 1, report
    for number, item_id in enumerate(VECTOR_ADD_FAILURES):
        item = _failure(item_id)
        check = checks_of(report, f"gpu-{number}")["cuda.workload"]
        assert check["status"] == "fail", item_id
        assert check["diagnosis"] == item["expect"]["signature"], (item_id, check)
        assert check["message"].startswith("vectorAdd failed on 1 of 1 GPU(s) (GPU 0): "), check
        sample_line = SAMPLE_FAILURE.match(item["text"])
        if sample_line is not None:  # the sample's own line, alone: the parser names its CUDA error
            assert check["message"].startswith(
                f"vectorAdd failed on 1 of 1 GPU(s) (GPU 0): {sample_line['error']} — "
            ), check
        node = next(node for node in report["nodes"] if node["name"] == f"gpu-{number}")
        assert [gpu["ok"] for gpu in node["cuda"]] == [False]


def test_a_gpu_without_a_result_or_a_failed_exit_fails_the_check(sim: Any, cli: Any) -> None:
    """The pod's output must hold a passing run for every GPU it was given, and the check script
    must exit 0: a GPU whose run never began, or a non-zero exit, fails the node."""
    capture = (CORPUS / _pinned_capture()["file"]).read_text(encoding="utf-8")
    only_gpu_0 = f"{MARKER} gpu 0 begin\n{capture}{MARKER} gpu 0 exit 0\n"
    both = only_gpu_0 + f"{MARKER} gpu 1 begin\n{capture}{MARKER} gpu 1 exit 0\n"
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [
                {
                    "name": "gpu-missing",
                    "gpus": 2,
                    "workloads": {"cuda": {"stdout": only_gpu_0, "exitCode": 0}},
                },
                {"name": "gpu-exit-1", "gpus": 2, "workloads": {"cuda": {"stdout": both, "exitCode": 1}}},
                {"name": "gpu-both", "gpus": 2, "workloads": {"cuda": {"stdout": both, "exitCode": 0}}},
            ],
        }
    )
    code, report = verify_json(cli, cluster, "--level", "cuda", "--timeout", "30")
    assert code == 1, report
    nodes = {node["name"]: node for node in report["nodes"]}
    assert nodes["gpu-missing"]["cuda"] == [
        {"index": 0, "ok": True, "error": None},
        {"index": 1, "ok": False, "error": NO_RESULT},
    ]
    missing = checks_of(report, "gpu-missing")["cuda.workload"]
    assert missing["status"] == "fail"
    assert missing["message"].startswith(f"vectorAdd failed on 1 of 2 GPU(s) (GPU 1): {NO_RESULT}")
    exit_1 = checks_of(report, "gpu-exit-1")["cuda.workload"]
    assert exit_1["status"] == "fail"
    # Every GPU passed, yet the script failed: the message quotes its first line of output.
    assert exit_1["message"] == f"the CUDA check exited 1 without a result per GPU: {MARKER} gpu 0 begin"
    assert [gpu["ok"] for gpu in nodes["gpu-exit-1"]["cuda"]] == [True, True]
    assert checks_of(report, "gpu-both")["cuda.workload"]["status"] == "pass"
    assert (nodes["gpu-missing"]["ok"], nodes["gpu-exit-1"]["ok"], nodes["gpu-both"]["ok"]) == (
        False,
        False,
        True,
    )


def _one_gpu(name: str, stdout: str) -> dict[str, Any]:
    return {"name": name, "gpus": 1, "workloads": {"cuda": {"stdout": stdout, "exitCode": 1}}}


def test_failure_messages_name_every_failed_gpu_and_stay_one_bounded_line(sim: Any, cli: Any) -> None:
    """Two failed GPUs are both named; a pod that printed nothing is named by its reason; an
    unknown error is cut at 300 characters, a diagnosed one at 240 before the diagnosis's cause; a
    failure no row explains points at the pod's log."""
    unknown = "Failed to allocate device vector A (error code " + "z" * 400 + ")!"
    known = (
        "Failed to allocate device vector A (error code CUDA driver version is insufficient for CUDA "
        "runtime version" + " y" * 200 + ")!"
    )
    both = "".join(
        f"{MARKER} gpu {index} begin\n{unknown}\n{MARKER} gpu {index} exit 1\n" for index in (0, 1)
    )
    nodes = [
        {"name": "gpu-both", "gpus": 2, "workloads": {"cuda": {"stdout": both, "exitCode": 1}}},
        _one_gpu("gpu-silent", ""),
        _one_gpu("gpu-unknown", f"{MARKER} gpu 0 begin\n{unknown}\n{MARKER} gpu 0 exit 1\n"),
        _one_gpu("gpu-known", f"{MARKER} gpu 0 begin\n{known}\n{MARKER} gpu 0 exit 1\n"),
    ]
    cluster = sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": nodes})
    code, report = verify_json(cli, cluster, "--level", "cuda", "--timeout", "30")
    assert code == 1, report
    checks = {node["name"]: checks_of(report, node["name"])["cuda.workload"] for node in report["nodes"]}
    assert checks["gpu-both"]["message"].startswith("vectorAdd failed on 2 of 2 GPU(s) (GPU 0, 1): zzz")
    assert checks["gpu-silent"]["message"] == "the CUDA check exited 1 without a result per GPU: Error"
    unexplained = checks["gpu-unknown"]
    assert unexplained["message"] == ("vectorAdd failed on 1 of 1 GPU(s) (GPU 0): " + "z" * 400)[:300]
    pod = f"gpuctl-verify-{report['run_id']}-cuda-gpu-unknown"
    assert unexplained["hint"] == f"`kubectl -n {report['namespace']} logs {pod}` (rerun with --keep-pods)"
    diagnosed = checks["gpu-known"]
    assert diagnosed["diagnosis"] == "cuda.driver-too-old"
    quoted, _, cause = diagnosed["message"].partition(" — ")
    assert quoted == ("vectorAdd failed on 1 of 1 GPU(s) (GPU 0): " + known[47:])[:240]
    assert cause.startswith("CUDA cannot use the node's driver")
