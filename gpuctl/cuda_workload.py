"""The per-GPU CUDA check: the script the verification pod runs, its output, and the parser of it.

NVIDIA's CUDA sample image runs `vectorAdd` once, on device 0. To prove every GPU of a node, the
pod runs the sample once per GPU with `CUDA_VISIBLE_DEVICES=i` (the container sees exactly the GPUs
it was allocated, numbered from 0) and brackets each run with marker lines:

    [gpuctl-cuda] gpu 0 begin
    [Vector addition of 50000 elements]
    ...
    Test PASSED
    Done
    [gpuctl-cuda] gpu 0 exit 0

A GPU passes when its run exits 0 and prints `Test PASSED`. A failing run names the CUDA error the
way vectorAdd prints it: `Failed to allocate device vector A (error code system not yet
initialized)!` (stderr, so it comes before the banner when both go to one pipe). The formatter
writes the same shape for simulated GPUs. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Where NVIDIA's cuda-sample image keeps the sample (NVIDIA/k8s-samples deployments/container/Dockerfile:
# `COPY --from=builder /build/${SAMPLE_NAME} /cuda-samples/${SAMPLE_NAME}`, the image's entrypoint).
VECTOR_ADD = "/cuda-samples/vectorAdd"
MARKER = "[gpuctl-cuda]"
ELEMENTS = 50000
THREADS_PER_BLOCK = 256

# cudaGetErrorString() of the errors the check meets on broken nodes (CUDA runtime API, cudaError_t).
SYSTEM_NOT_READY = "system not yet initialized"  # 802: NVSwitch fabric not up (Fabric Manager)
INSUFFICIENT_DRIVER = "CUDA driver version is insufficient for CUDA runtime version"  # 35
NO_DEVICE = "no CUDA-capable device is detected"  # 100
ECC_UNCORRECTABLE = "uncorrectable ECC error encountered"  # 214
DEVICES_UNAVAILABLE = "CUDA-capable device(s) is/are busy or unavailable"  # 46 (CUDA 11.x and later)


def cuda_check_script(gpus: int, program: str = VECTOR_ADD) -> str:
    """The POSIX shell script that runs `program` on each of the pod's `gpus` GPUs in turn and
    exits 1 when any run failed (the pod's phase then says so too)."""
    return (
        f'failed=0; i=0; while [ "$i" -lt {int(gpus)} ]; do '
        f"echo '{MARKER} gpu '\"$i\"' begin'; "
        f'CUDA_VISIBLE_DEVICES="$i" {program} 2>&1; rc=$?; '
        f"echo '{MARKER} gpu '\"$i\"' exit '\"$rc\"; "
        '[ "$rc" -eq 0 ] || failed=1; i=$((i + 1)); done; exit "$failed"'
    )


@dataclass(frozen=True)
class VectorAddResult:
    """What one vectorAdd run printed: passed, or the CUDA error (or other failure) it named."""

    passed: bool
    error: str | None  # "system not yet initialized", "Result verification failed at element 7"


@dataclass(frozen=True)
class GpuResult:
    """One GPU's run inside the check."""

    index: int
    passed: bool
    exit_code: int | None  # None: the run never finished (pod killed, timed out)
    error: str | None
    output: str


@dataclass(frozen=True)
class CudaCheck:
    gpus: tuple[GpuResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.gpus) and all(gpu.passed for gpu in self.gpus)

    @property
    def failed(self) -> tuple[GpuResult, ...]:
        return tuple(gpu for gpu in self.gpus if not gpu.passed)


_ERROR_CODE = re.compile(r"^Failed to (?P<what>.+?) \(error code (?P<error>.+)\)!\s*$")
_VERIFICATION = re.compile(r"^(?P<error>Result verification failed at element \d+)!?\s*$")
_MARKER_LINE = re.compile(
    rf"^{re.escape(MARKER)} gpu (?P<index>\d+) (?:(?P<begin>begin)|exit (?P<exit>-?\d+))\s*$"
)
NO_RESULT = "the run never finished (the pod was stopped or timed out)"


def parse_vector_add(text: str) -> VectorAddResult:
    """Read one vectorAdd run's output."""
    for line in text.splitlines():
        if failed := _ERROR_CODE.match(line):
            return VectorAddResult(passed=False, error=failed["error"])
        if wrong := _VERIFICATION.match(line):
            return VectorAddResult(passed=False, error=wrong["error"])
    passed = any(line.strip() == "Test PASSED" for line in text.splitlines())
    return VectorAddResult(passed=passed, error=None if passed else _last_line(text))


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def parse_cuda_check(text: str) -> CudaCheck:
    """Read the check script's output: one result per GPU whose run began, in index order."""
    outputs: dict[int, list[str]] = {}
    exits: dict[int, int] = {}
    current: int | None = None
    for line in text.splitlines():
        marker = _MARKER_LINE.match(line)
        if marker is None:
            if current is not None:
                outputs[current].append(line)
            continue
        index = int(marker["index"])
        if marker["begin"]:
            outputs[index], current = [], index
        else:
            exits[index], current = int(marker["exit"]), None
    return CudaCheck(
        tuple(_gpu_result(index, "\n".join(outputs[index]), exits.get(index)) for index in sorted(outputs))
    )


def _gpu_result(index: int, output: str, exit_code: int | None) -> GpuResult:
    if exit_code is None:
        return GpuResult(index, passed=False, exit_code=None, error=NO_RESULT, output=output)
    run = parse_vector_add(output)
    passed = exit_code == 0 and run.passed
    error = None if passed else run.error or f"exit code {exit_code}"
    return GpuResult(index, passed=passed, exit_code=exit_code, error=error, output=output)


# --- the formatter: what vectorAdd prints (NVIDIA/cuda-samples Samples/0_Introduction/vectorAdd) ----
def format_vector_add(error: str | None = None) -> str:
    """vectorAdd's output: the passing run, or the allocation failure naming CUDA's `error`."""
    banner = f"[Vector addition of {ELEMENTS} elements]\n"
    if error is not None:
        return f"Failed to allocate device vector A (error code {error})!\n{banner}"
    blocks = (ELEMENTS + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    return (
        f"{banner}Copy input data from the host memory to the CUDA device\n"
        f"CUDA kernel launch with {blocks} blocks of {THREADS_PER_BLOCK} threads\n"
        "Copy output data from the CUDA device to the host memory\nTest PASSED\nDone\n"
    )


def format_cuda_check(errors: Sequence[str | None]) -> tuple[str, int]:
    """The check script's output and exit code for GPUs 0..n-1, where `errors[i]` is the CUDA
    error GPU i fails with (None: it passes)."""
    parts = []
    for index, error in enumerate(errors):
        exit_code = 0 if error is None else 1
        parts.append(
            f"{MARKER} gpu {index} begin\n{format_vector_add(error)}{MARKER} gpu {index} exit {exit_code}\n"
        )
    return "".join(parts), int(any(error is not None for error in errors))
