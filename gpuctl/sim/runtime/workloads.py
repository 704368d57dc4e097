"""The deeper proof levels' programs in a simulated container: the CUDA check (vectorAdd on each
GPU, gpuctl.cuda_workload) and nccl-tests' all_reduce_perf, printed through the same formatters
the parsers are proven against on real captures. The node's scenario decides what fails:
`host.fabricManager: stopped` on an NVSwitch node (every GPU: error 802), `eccErrors: N` (the
first N GPUs: uncorrectable ECC), `nvlinkDown: N` (the all-reduce at the PCIe figure), and
`workloads` overrides the output as `nvidiaSmi` does."""

from __future__ import annotations

from gpuctl import nvidia_smi
from gpuctl.cuda_workload import ECC_UNCORRECTABLE, MARKER, NO_DEVICE, SYSTEM_NOT_READY, format_cuda_check
from gpuctl.nccl_expectations import Expectation, Interconnect, expected_busbw
from gpuctl.nccl_tests import NcclDevice, all_reduce_rows, format_all_reduce
from gpuctl.sim.scenario import NodeSpec, NvidiaSmiOverride

# What a node's links reach when no cited figure fits its model (GB/s): a PCIe Gen4 x16 node.
FALLBACK_BUSBW_GBPS = {"nvswitch": 200.0, "nvlink": 100.0, "pcie": 20.0}


def is_cuda_check(script: str) -> bool:
    return MARKER in script


def _overridden(override: NvidiaSmiOverride | None) -> tuple[str, int] | None:
    return None if override is None else (override.stdout, override.exit_code)


def _fabric_down(spec: NodeSpec) -> bool:
    return spec.interconnect == "nvswitch" and spec.fabric_manager == "stopped"


def cuda_check(spec: NodeSpec, indices: list[int]) -> tuple[str, int]:
    """The check script's output over the container's GPUs (node indices, in the pod's order)."""
    override = _overridden(spec.workloads.cuda)
    if override is not None:
        return override
    if not indices:
        return format_cuda_check([NO_DEVICE])
    errors = [
        SYSTEM_NOT_READY if _fabric_down(spec) else ECC_UNCORRECTABLE if gpu < spec.ecc_errors else None
        for gpu in indices
    ]
    return format_cuda_check(errors)


def _busbw(spec: NodeSpec, interconnect: Interconnect) -> float:
    expected = expected_busbw(spec.gpu_product, interconnect)
    return expected.busbw_gbps if isinstance(expected, Expectation) else FALLBACK_BUSBW_GBPS[interconnect]


def all_reduce(spec: NodeSpec, visible: list[nvidia_smi.Gpu]) -> tuple[str, int]:
    """all_reduce_perf over the container's GPUs at what the node's links sustain."""
    override = _overridden(spec.workloads.nccl)
    if override is not None:
        return override
    interconnect: Interconnect = "pcie" if spec.nvlink_down else _interconnect(spec)
    devices = [
        NcclDevice(rank, spec.name, rank, gpu.pci_bus_id.lower()[-7:], gpu.name, pid=1)
        for rank, gpu in enumerate(visible)
    ]
    # one GPU has no bus to measure (the all-reduce's bus factor is 0)
    rows = all_reduce_rows(len(devices), _busbw(spec, interconnect)) if len(devices) > 1 else ()
    return format_all_reduce(devices, rows), 0


def _interconnect(spec: NodeSpec) -> Interconnect:
    if spec.interconnect == "nvlink":
        return "nvlink"
    return "pcie" if spec.interconnect == "pcie" else "nvswitch"
