"""The CUDA and NVML catalogues: every code of the headers, each spelling programs print, and nothing
read out of healthy output."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from gpuctl.cuda_workload import format_cuda_check
from gpuctl.diagnose.catalogues.cuda import CATALOGUE as CUDA
from gpuctl.diagnose.catalogues.nvml import CATALOGUE as NVML
from gpuctl.diagnose.scan import find_all

# CUDA 13.3 driver_types.h (enum cudaError, cudaSuccess left out) and cuda.h (enum cudaError_enum,
# CUDA_SUCCESS left out): the runtime has 136 codes, the driver 102; 100 numbers are both's.
RUNTIME_ONLY = {9, 10, 12, 13, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 31, 32, 35, 37}
RUNTIME_ONLY |= {43, 44, 45, 49, 52, 53, 65, 66, 67, 68, 69, 98, 103, 127, 10000}
DRIVER_ONLY = {202, 916}


def test_every_cuda_code_is_one_entry() -> None:
    codes = [entry for entry in CUDA.entries if entry.code.isdigit()]
    # besides the codes, only a code's meaning in one API's context (CUDA 800 from cuMem* fabric handles)
    variants = {entry.code for entry in CUDA.entries if not entry.code.isdigit()}
    assert variants == {"fabric-handle-not-permitted"}
    runtime = [entry for entry in codes if any(a.startswith("cudaError") for a in entry.aliases)]
    driver = [entry for entry in codes if any(a.startswith("CUDA_ERROR_") for a in entry.aliases)]
    assert (len(runtime), len(driver), len(codes)) == (136, 102, 138)
    numbers = {int(entry.code) for entry in codes}
    assert numbers >= RUNTIME_ONLY | DRIVER_ONLY
    assert {int(e.code) for e in runtime} ^ {int(e.code) for e in driver} == RUNTIME_ONLY | DRIVER_ONLY


def test_every_nvml_return_code_is_one_entry() -> None:
    assert [int(entry.code) for entry in NVML.entries] == [*range(1, 31), 999]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('CUDA error at matrixMul.cu:123 code=802(cudaErrorSystemNotReady) "cudaGetDeviceCount(&n)"', "802"),
        ("failed call to cuInit: CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility", "804"),
        ("cudaGetDeviceCount returned 46", "46"),
        ("-> no CUDA-capable device is detected", "100"),
        ("Failed to allocate device vector A (error code out of memory)!", "2"),
        ("RuntimeError: CUDA error: misaligned address", "716"),
        ("ggml_cuda_init: failed to initialize CUDA: initialization error", "3"),
        ("NCCL WARN Cuda failure 'unknown error'", "999"),
        ("cudaErrorFabricNotReady", "unknown"),
        # ollama's spellings (ollama/ollama#12173, #8791): the driver API's code after `init failure:`
        # and after `cuInit err:`.
        (
            "Unable to load cudart library /usr/lib/x86_64-linux-gnu/libcuda.so.570.169: cuda driver "
            "library init failure: 802",
            "802",
        ),
        ("cuInit err: 500", "500"),
    ],
)
def test_cuda_errors_are_read_in_each_spelling(line: str, expected: str) -> None:
    assert [hit.id for hit in CUDA.find(line)][:1] == [f"cuda.{expected}"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("error getting device count: ERROR_LIB_RM_VERSION_MISMATCH", "18"),
        ("dcgm: NVML_ERROR_CORRUPTED_INFOROM", "14"),
        ("pynvml.nvml.NVMLError_GpuIsLost: GPU is lost", "15"),
        ("NVML: GPU requires reset", "16"),
        ("Failed to initialize NVML: Insufficient Permissions", "4"),
        ("GPU 00000000:3B:00.0: Timeout", "10"),
    ],
)
def test_nvml_codes_are_read_in_each_spelling(line: str, expected: str) -> None:
    assert [hit.id for hit in NVML.find(line)][:1] == [f"nvml.{expected}"]


def test_short_texts_need_their_prefix() -> None:
    for line in (
        "Timeout",
        "Not Supported",
        "unknown error",
        "out of memory",
        "ERROR_TIMEOUT",
        "curl returned 7",
    ):
        assert not CUDA.find(line), line
        assert not NVML.find(line), line


def test_healthy_cuda_check_output_matches_nothing() -> None:
    output, _ = format_cuda_check([None, None, None, None])
    assert find_all(output) == []


def test_a_healthy_log_costs_well_under_a_millisecond_per_catalogue() -> None:
    output, _ = format_cuda_check([None] * 8)
    log = "\n".join([*output.splitlines(), "| NVML Version: 13.580.65.06  CUDA Version: 13.0 |"] * 5)[:12000]
    for catalogue in (CUDA, NVML):
        catalogue.find(log)
        best = min(_timed(catalogue.find, log) for _ in range(20))
        assert best < 0.005, (catalogue.id, best)


def _timed(function: Callable[[str], object], text: str) -> float:
    start = time.perf_counter()
    function(text)
    return time.perf_counter() - start
