"""Every number `gpuctl verify` judges by, tested just inside and just outside its boundary through
the whole command against the sim: the expected GPU count, allocatable against capacity (GPUs the
plugin reports unhealthy), the GPUs nvidia-smi lists against those the pod requested, the memory
nvidia-smi reports against the node's label (1 % of the label, at least 1 MiB), the busy rule (every
GPU held) and vectorAdd on every GPU. nvidia-smi's answers are in its real query format
(tests/corpus/nvidia-smi/linux-nvidia-h100-80gb-hbm3-580.159.04.query-verify.txt is one such row);
vectorAdd's lines are the real sample's (tests/corpus/workloads/vectoradd-pass.txt and the failure
line of NVIDIA/gpu-operator issue 1947 in tests/corpus/failures.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpuctl.cuda_workload import MARKER
from tests.cluster.test_verify_busy import _hold
from tests.cluster.test_verify_dra import checks_of, verify_json

CORPUS = Path(__file__).parents[1] / "corpus"
PRODUCT = "NVIDIA-H100-80GB-HBM3"
MEMORY_MIB = 81559  # the H100 80GB HBM3 capture's memory.total, and the node's GFD label
TOLERANCE_MIB = MEMORY_MIB // 100  # 815
DRIVER = "580.159.04"


def _node(name: str, gpus: int = 2, **fields: Any) -> dict[str, Any]:
    base = {"name": name, "gpus": gpus, "gpuProduct": PRODUCT, "gpuMemoryMiB": MEMORY_MIB}
    return {**base, "driverVersion": DRIVER, **fields}


def _scenario(*nodes: dict[str, Any]) -> dict[str, Any]:
    return {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": list(nodes)}


def _smi_rows(memories: list[int]) -> dict[str, Any]:
    """nvidia-smi's answer to verify's query (--format=csv,noheader,nounits), one row per GPU."""
    rows = [
        f"{index}, GPU-e753301f-2534-a622-087a-08511ef7046{index}, NVIDIA H100 80GB HBM3, {memory}, "
        f"{DRIVER}, 00000000:00:0{6 + index}.0"
        for index, memory in enumerate(memories)
    ]
    return {"stdout": "\n".join(rows) + "\n", "exitCode": 0}


def _status(report: dict[str, Any], node: str, check: str) -> tuple[str, str]:
    found = checks_of(report, node)[check]
    return found["status"], found["message"]


def test_the_expected_gpu_count_passes_only_when_equal(sim: Any, cli: Any) -> None:
    cluster = sim(_scenario(_node("gpu-0", gpus=4)))
    code, report = verify_json(cli, cluster, "--expect-gpus", "4")
    assert code == 0, report
    assert _status(report, "gpu-0", "gpu.capacity") == ("pass", "capacity 4 nvidia.com/gpu")
    assert report["nodes"][0]["gpus"]["expected"] == 4
    for expected in ("5", "3"):
        code, report = verify_json(cli, cluster, "--expect-gpus", expected)
        assert code == 1, (expected, report)
        assert _status(report, "gpu-0", "gpu.capacity") == (
            "fail",
            f"capacity 4 nvidia.com/gpu, expected {expected}",
        )
        assert checks_of(report, "gpu-0")["gpu.capacity"]["hint"] == (
            "`kubectl describe node gpu-0`; compare `nvidia-smi -L` on the node with --expect-gpus"
        )
        assert report["ok"] is False


def test_one_unhealthy_gpu_fails_the_node_and_none_passes_it(sim: Any, cli: Any) -> None:
    cluster = sim(_scenario(_node("gpu-healthy", unhealthyGpus=0), _node("gpu-one-sick", unhealthyGpus=1)))
    code, report = verify_json(cli, cluster, "--expect-gpus", "2")
    assert code == 1, report
    assert _status(report, "gpu-healthy", "gpu.allocatable") == ("pass", "allocatable 2")
    status, message = _status(report, "gpu-one-sick", "gpu.allocatable")
    assert (status, message) == ("fail", "allocatable 1 < capacity 2: 1 GPU(s) unhealthy")
    nodes = {node["name"]: node for node in report["nodes"]}
    assert (nodes["gpu-healthy"]["ok"], nodes["gpu-one-sick"]["ok"]) == (True, False)


def test_nvidia_smi_must_list_exactly_the_requested_gpus(sim: Any, cli: Any) -> None:
    cluster = sim(
        _scenario(
            _node("gpu-exact", nvidiaSmi=_smi_rows([MEMORY_MIB] * 2)),
            _node("gpu-one-short", nvidiaSmi=_smi_rows([MEMORY_MIB])),
            _node("gpu-one-over", nvidiaSmi=_smi_rows([MEMORY_MIB] * 3)),
        )
    )
    code, report = verify_json(cli, cluster, "--expect-gpus", "2", "--timeout", "30")
    assert code == 1, report
    assert _status(report, "gpu-exact", "nvidia-smi.gpus") == ("pass", "2 GPU(s) seen = 2 requested")
    assert _status(report, "gpu-one-short", "nvidia-smi.gpus") == ("fail", "1 GPU(s) seen, 2 requested")
    assert _status(report, "gpu-one-over", "nvidia-smi.gpus") == ("fail", "3 GPU(s) seen, 2 requested")
    assert checks_of(report, "gpu-one-short")["nvidia-smi.gpus"]["hint"] == (
        "the runtime exposed the wrong devices: check NVIDIA_VISIBLE_DEVICES/CDI handling of the "
        "nvidia runtime on gpu-one-short and `nvidia-smi -L` on the node"
    )
    seen = {node["name"]: node["gpus"]["seen"] for node in report["nodes"]}
    assert seen == {"gpu-exact": 2, "gpu-one-short": 1, "gpu-one-over": 3}


def test_memory_within_one_percent_of_the_label_passes_and_a_mib_more_fails(sim: Any, cli: Any) -> None:
    below_ok, below_bad = MEMORY_MIB - TOLERANCE_MIB, MEMORY_MIB - TOLERANCE_MIB - 1
    above_ok, above_bad = MEMORY_MIB + TOLERANCE_MIB, MEMORY_MIB + TOLERANCE_MIB + 1
    cluster = sim(
        _scenario(
            _node("gpu-below-ok", nvidiaSmi=_smi_rows([below_ok] * 2)),
            _node("gpu-below-bad", nvidiaSmi=_smi_rows([below_bad] * 2)),
            _node("gpu-above-ok", nvidiaSmi=_smi_rows([above_ok] * 2)),
            _node("gpu-above-bad", nvidiaSmi=_smi_rows([above_bad] * 2)),
        )
    )
    code, report = verify_json(cli, cluster, "--timeout", "30")
    assert code == 1, report
    assert _status(report, "gpu-below-ok", "nvidia-smi.memory") == ("pass", f"{below_ok} MiB per GPU")
    assert _status(report, "gpu-above-ok", "nvidia-smi.memory") == ("pass", f"{above_ok} MiB per GPU")
    for node, size in (("gpu-below-bad", below_bad), ("gpu-above-bad", above_bad)):
        assert _status(report, node, "nvidia-smi.memory") == (
            "fail",
            f"{size} MiB per GPU, node label says {MEMORY_MIB} MiB",
        )
        assert checks_of(report, node)["nvidia-smi.memory"]["hint"] == (
            f"`nvidia-smi -q -d MEMORY` on {node}; a different board or a MIG mode change"
        )
    verdicts = {node["name"]: node["ok"] for node in report["nodes"]}
    assert verdicts == {
        "gpu-below-ok": True,
        "gpu-below-bad": False,
        "gpu-above-ok": True,
        "gpu-above-bad": False,
    }


def test_one_free_gpu_is_proven_and_none_free_is_busy(sim: Any, cli: Any) -> None:
    cluster = sim(_scenario(_node("gpu-one-free"), _node("gpu-none-free")))
    _hold(cluster, "half", "gpu-one-free", 1)
    _hold(cluster, "whole", "gpu-none-free", 2)
    code, report = verify_json(cli, cluster, "--timeout", "30", "--expect-gpus", "2")
    assert code == 0, report
    nodes = {node["name"]: node for node in report["nodes"]}
    one_free, none_free = nodes["gpu-one-free"], nodes["gpu-none-free"]
    assert (one_free["proven"], one_free["busy"], one_free["gpus"]["seen"]) == (True, False, 1)
    assert (none_free["ok"], none_free["proven"], none_free["busy"]) == (True, False, True)
    assert _status(report, "gpu-one-free", "gpu.in-use")[0] == "pass"
    assert _status(report, "gpu-none-free", "gpu.in-use")[0] == "warn"


def _vector_add_runs(outputs: list[tuple[str, int]]) -> dict[str, Any]:
    """The CUDA check's output: each GPU's vectorAdd output between the check script's markers."""
    text = "".join(
        f"{MARKER} gpu {index} begin\n{output}{MARKER} gpu {index} exit {exit_code}\n"
        for index, (output, exit_code) in enumerate(outputs)
    )
    return {"cuda": {"stdout": text, "exitCode": int(any(code for _, code in outputs))}}


def _real_failure_line() -> str:
    items = yaml.safe_load((CORPUS / "failures.yaml").read_text(encoding="utf-8"))
    item = next(item for item in items if item["id"] == "cuda-vectoradd-driver-insufficient-blackwell")
    return str(item["text"])


def test_vector_add_must_pass_on_every_gpu(sim: Any, cli: Any) -> None:
    passing = (CORPUS / "workloads" / "vectoradd-pass.txt").read_text(encoding="utf-8")
    failing = _real_failure_line() + "\n"
    cluster = sim(
        _scenario(
            _node("gpu-all-pass", workloads=_vector_add_runs([(passing, 0), (passing, 0)])),
            _node("gpu-one-fails", workloads=_vector_add_runs([(passing, 0), (failing, 1)])),
        )
    )
    code, report = verify_json(cli, cluster, "--level", "cuda", "--timeout", "30")
    assert code == 1, report
    assert _status(report, "gpu-all-pass", "cuda.workload") == ("pass", "vectorAdd passed on 2 GPU(s)")
    check = checks_of(report, "gpu-one-fails")["cuda.workload"]
    assert check["status"] == "fail"
    assert check["message"].startswith(
        "vectorAdd failed on 1 of 2 GPU(s) (GPU 1): "
        "CUDA driver version is insufficient for CUDA runtime version"
    )
    assert check["diagnosis"] == "cuda.driver-too-old"
    cuda = {node["name"]: node["cuda"] for node in report["nodes"]}
    assert [gpu["ok"] for gpu in cuda["gpu-one-fails"]] == [True, False]
    assert [gpu["ok"] for gpu in cuda["gpu-all-pass"]] == [True, True]


def test_a_pod_that_starts_within_the_timeout_passes_and_one_that_does_not_fails(sim: Any, cli: Any) -> None:
    """--timeout decides the verdict of a slow node, whose pod takes 2 s to start (the sim's
    podStartSeconds): 20 s is enough, 1 s is not."""
    cluster = sim({**_scenario(_node("gpu-slow")), "podStartSeconds": 2.0})
    code, report = verify_json(cli, cluster, "--timeout", "20")
    assert code == 0, report
    assert _status(report, "gpu-slow", "nvidia-smi.run")[0] == "pass"
    code, report = verify_json(cli, cluster, "--timeout", "1")
    assert code == 1, report
    # Where the pod was when the second ran out depends on the machine's load: scheduling,
    # starting or running. Either way the node fails, and the failing check says --timeout ran out.
    assert report["nodes"][0]["ok"] is False
    failing = [check for check in report["nodes"][0]["checks"] if check["status"] == "fail"]
    assert len(failing) == 1, failing
    assert failing[0]["id"] in ("pod.scheduled", "pod.image", "nvidia-smi.run"), failing
    assert "before --timeout ran out" in failing[0]["message"], failing
