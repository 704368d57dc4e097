"""all_reduce_perf output at a chosen bus bandwidth, printed by the sim's formatter in the layout of
the pinned nccl-tests release: the input of the NCCL level's judgement tests."""

from __future__ import annotations

from gpuctl.nccl_tests import LARGEST_SIZE_BYTES, NcclDevice, NcclRow, format_all_reduce
from gpuctl.sim.runtime.workloads import nccl_info_lines


def all_reduce_output(
    busbw_gbps: float, *, gpus: int = 8, product: str = "NVIDIA L40S", info: list[str] | None = None
) -> str:
    """One 8 GiB row at exactly `busbw_gbps` (both placements) on `gpus` GPUs of `product`; `info`
    the NCCL_DEBUG=INFO lines before it (by default a node without NVLS)."""
    algbw = busbw_gbps / (2 * (gpus - 1) / gpus)
    time_us = LARGEST_SIZE_BYTES / algbw / 1000
    row = NcclRow(LARGEST_SIZE_BYTES, LARGEST_SIZE_BYTES // 4, "float", "sum", time_us, algbw, busbw_gbps,
                  time_us, algbw, busbw_gbps)  # fmt: skip
    devices = [NcclDevice(r, "gpu-0", r, f"0000:{0x18 + r:02x}:00", product, pid=9) for r in range(gpus)]
    if info is None:
        info = nccl_info_lines("gpu-0", gpus, nvls_support=False, nvls=False)
    return format_all_reduce(devices, [row], info_lines=info)
