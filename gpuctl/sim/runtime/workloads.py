"""The deeper proof levels' programs in a simulated container: the CUDA check (vectorAdd on each GPU,
gpuctl.cuda_workload) and nccl-tests' all_reduce_perf, printed through the same formatters the
parsers are proven against on real captures. The node's scenario decides what fails:
`host.fabricManager: stopped` on an NVSwitch node (every GPU: error 802), `eccErrors: N` (the first
N GPUs: uncorrectable ECC), `gpuHealth` (a GPU's ECC error from a time on, until cleared),
`nvlinkDown: N` (the all-reduce at the PCIe figure), `nvls: false` (ring where NVLink SHARP was
due), `nvlinks: N` (fewer active NVLinks per GPU), and `workloads` overrides the output as
`nvidiaSmi` does. all_reduce_perf prints the NCCL_DEBUG=INFO lines NCCL 2.30 prints about what it
chose (multicast, rings, NVLS buffers, channels, transports)."""

from __future__ import annotations

from gpuctl import nvidia_smi
from gpuctl.cuda_workload import ECC_UNCORRECTABLE, MARKER, NO_DEVICE, SYSTEM_NOT_READY, format_cuda_check
from gpuctl.nccl_expectations import (
    Expectation,
    Interconnect,
    NodeHardware,
    expected_for,
    gpu_family,
    ring_figure,
)
from gpuctl.nccl_tests import ALL_REDUCE_BINARY, NcclDevice, all_reduce_rows, format_all_reduce
from gpuctl.nvlink_status import COMMAND as NVLINK_COMMAND
from gpuctl.pcie_link import link_gbytes
from gpuctl.sim.scenario import NodeSpec, NvidiaSmiOverride

# What a node's links reach when no cited figure fits its model (GB/s): a PCIe Gen4 x16 node.
FALLBACK_BUSBW_GBPS = {"nvswitch": 200.0, "nvlink": 100.0, "pcie": 20.0}


def is_cuda_check(script: str) -> bool:
    return MARKER in script


def is_all_reduce_script(script: str) -> bool:
    """The NCCL level's `sh -c` script: nvidia-smi's link status, then all_reduce_perf."""
    return NVLINK_COMMAND in script and ALL_REDUCE_BINARY in script


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
        SYSTEM_NOT_READY
        if _fabric_down(spec)
        else ECC_UNCORRECTABLE
        if gpu < spec.ecc_errors or gpu in spec.ecc_gpus
        else None
        for gpu in indices
    ]
    return format_cuda_check(errors)


# NVLinks per GPU (NVLink2 V100 6, NVLink3 A100 12, H800 8, NVLink4 H100/H200 18, NVLink5 B200 18):
# the whole of a GPU's links, which `nvlinks: N` lowers in proportion.
NVLINKS_PER_GPU = {"V100": 6, "A100": 12, "H800": 8, "H100": 18, "H200": 18, "B200": 18, "GB200": 18}
# NVLink SHARP's gain over ring on all-reduce, where no ring figure is cited: "a 30% improvement"
# (NCCL's maintainer, https://github.com/NVIDIA/nccl/issues/1442).
NVLS_GAIN = 1.3


def _figure(hardware: NodeHardware) -> float:
    expected = expected_for(hardware)
    if isinstance(expected, Expectation):
        return expected.busbw_gbps
    return FALLBACK_BUSBW_GBPS[hardware.interconnect]


# The PCIe link of each GPU model (generation, width) as its product brief gives it; a model not
# listed plays Gen4 x16.
PCIE_LINK_BY_FAMILY = {
    "V100": (3, 16), "T4": (3, 16), "A100": (4, 16), "A800": (4, 16), "A10": (4, 16), "A10G": (4, 16),
    "A30": (4, 16), "A40": (4, 16), "L4": (4, 16), "L40": (4, 16), "L40S": (4, 16), "H100": (5, 16),
    "H200": (5, 16), "H800": (5, 16), "B200": (5, 16), "GB200": (5, 16),
}  # fmt: skip


def pcie_links(spec: NodeSpec, gpus: int) -> list[tuple[int, int, int, int]]:
    """(gen, max gen, width, max width) of each of the node's first `gpus` GPUs: `pcieLink` or
    the model's own, and `pcieDegradedLink` (default: half the width) for the `pcieDegraded` first."""
    model = PCIE_LINK_BY_FAMILY.get(gpu_family(spec.gpu_product) or "", (4, 16))
    max_gen, max_width = spec.pcie_link or model
    low_gen, low_width = spec.pcie_degraded_link or (max_gen, max(max_width // 2, 1))
    return [
        (low_gen, max_gen, low_width, max_width)
        if gpu < spec.pcie_degraded
        else (max_gen, max_gen, max_width, max_width)
        for gpu in range(gpus)
    ]


def pcie_samples(spec: NodeSpec, visible: list[nvidia_smi.Gpu], indices: list[int]) -> str:
    """What the NCCL level's link sampler prints (gpuctl.pcie_link.COMMAND), two samples of each
    of the container's GPUs in nvidia-smi's csv,noheader layout."""
    links = pcie_links(spec, spec.gpus)
    rows = [
        f"{gpu.index}, {gpu.pci_bus_id}, {gen}, {max_gen}, {width}, {max_width}"
        for gpu, node_index in zip(visible, indices, strict=False)
        for gen, max_gen, width, max_width in [links[node_index] if node_index < len(links) else links[-1]]
    ]
    return "".join(f"{row}\n" for row in rows * 2)


def _pcie_share(spec: NodeSpec, indices: list[int]) -> float:
    """A PCIe-only all-reduce runs at its slowest link: that link's bandwidth over the model's own."""
    links = pcie_links(spec, spec.gpus)
    if not links or not indices:
        return 1.0
    model = PCIE_LINK_BY_FAMILY.get(gpu_family(spec.gpu_product) or "", (4, 16))
    slowest = min(link_gbytes(links[i][0], links[i][2]) for i in indices if i < len(links))
    return min(slowest / link_gbytes(*model), 1.0)


def _busbw(spec: NodeSpec, hardware: NodeHardware, nvls: bool, indices: list[int] | None = None) -> float:
    """What the node's links sustain: its figure, ring's where NVLS was due but is off, in
    proportion to the NVLinks still active; over PCIe only, in proportion to the slowest link."""
    busbw = _figure(hardware)
    if hardware.interconnect == "pcie" and indices:
        busbw *= _pcie_share(spec, indices)
    if hardware.nvls and not nvls:
        ring = ring_figure(hardware)
        busbw = ring.busbw_gbps if ring is not None else busbw / NVLS_GAIN
    links = NVLINKS_PER_GPU.get(hardware.family or "", 0)
    if spec.nvlinks is not None and hardware.interconnect != "pcie" and links:
        busbw *= min(spec.nvlinks, links) / links
    return busbw


def nccl_info_lines(host: str, gpus: int, *, nvls_support: bool, nvls: bool) -> list[str]:
    """What NCCL prints with NCCL_DEBUG=INFO while one process sets up `gpus` GPUs (the line shapes
    of NCCL 2.2x-2.30 logs, e.g. NVIDIA/nccl issue 2094's multicast line): multicast support, the
    ring, each rank's P2P connection, NVLS buffers when NVLS runs, the channel summary."""

    def line(rank: int, text: str) -> str:
        return f"{host}:1:{100 + rank} [{rank}] NCCL INFO {text}"

    order = "".join(f"{rank:>4}" for rank in range(gpus))
    available = "" if nvls_support else "not "
    lines = ["NCCL version 2.30.4+cuda12.9"]
    lines += [line(r, f"NVLS multicast support is {available}available on dev {r} (NVLS_NCHANNELS 16)")
              for r in range(gpus)]  # fmt: skip
    lines.append(line(0, f"Channel 00/24 :{order}"))
    lines += [line(r, f"Channel 00/0 : {r}[{r}] -> {(r + 1) % gpus}[{(r + 1) % gpus}] via P2P/CUMEM/read")
              for r in range(gpus)]  # fmt: skip
    lines += [line(r, "Connected all rings") for r in range(gpus)]
    if nvls:
        lines += [line(r, f"NVLS comm 0x{0x55D0_0000_0000 + r * 0x1000:x} headRank {r} nHeads {gpus} "
                          f"nvlsRanks {gpus} buffSize 1048576 nvlsPerRankSize 33554432 "
                          f"nvlsTotalSize {33554432 * gpus}") for r in range(gpus)]  # fmt: skip
    channels = 16 if nvls else 0
    lines += [line(r, f"24 coll channels, 24 collnet channels, {channels} nvls channels, 32 p2p channels, "
                      "32 p2p channels per peer") for r in range(gpus)]  # fmt: skip
    return lines


# The speed `nvidia-smi nvlink -s` shows per active link (GB/s): NVLink3 on A100 25 (a real A100
# capture in tests/corpus/nvidia-smi), NVLink4 on Hopper 26.562, NVLink5 on Blackwell 53.125.
NVLINK_SPEED_GBPS = {"A100": "25", "H800": "26.562", "H100": "26.562", "H200": "26.562", "B200": "53.125",
                     "GB200": "53.125"}  # fmt: skip


def nvlink_status(spec: NodeSpec, visible: list[nvidia_smi.Gpu], indices: list[int]) -> str:
    """`nvidia-smi nvlink -s` over the container's GPUs: every link of an NVLink GPU at its speed,
    `<inactive>` for the links `nvlinks: N` leaves down and for every link of the `nvlinkDown`
    GPUs; a GPU on PCIe only lists no link."""
    family = gpu_family(spec.gpu_product) or ""
    links = 0 if spec.interconnect == "pcie" else NVLINKS_PER_GPU.get(family, 0)
    active = links if spec.nvlinks is None else min(spec.nvlinks, links)
    speed = NVLINK_SPEED_GBPS.get(family, "25")
    lines = []
    for gpu, node_index in zip(visible, indices, strict=False):
        lines.append(f"GPU {gpu.index}: {gpu.name} (UUID: {gpu.uuid})")
        up = 0 if node_index < spec.nvlink_down else active
        lines += [
            f"\t Link {link}: {speed + ' GB/s' if link < up else '<inactive>'}" for link in range(links)
        ]
    return "".join(f"{line}\n" for line in lines)


def all_reduce(
    spec: NodeSpec, visible: list[nvidia_smi.Gpu], indices: list[int] | None = None
) -> tuple[str, int]:
    """all_reduce_perf over the container's GPUs at what the node's links sustain."""
    override = _overridden(spec.workloads.nccl)
    if override is not None:
        return override
    interconnect: Interconnect = "pcie" if spec.nvlink_down else _interconnect(spec)
    devices = [
        NcclDevice(rank, spec.name, rank, gpu.pci_bus_id.lower()[-7:], gpu.name, pid=1)
        for rank, gpu in enumerate(visible)
    ]
    hardware = NodeHardware(gpu_family(spec.gpu_product), interconnect, len(devices))
    nvls = hardware.nvls and spec.nvls
    # one GPU has no bus to measure (the all-reduce's bus factor is 0)
    if len(devices) < 2:
        return format_all_reduce(devices, ()), 0
    rows = all_reduce_rows(len(devices), _busbw(spec, hardware, nvls, indices))
    info = nccl_info_lines(spec.name, len(devices), nvls_support=nvls, nvls=nvls)
    return format_all_reduce(devices, rows, info_lines=info), 0


def _interconnect(spec: NodeSpec) -> Interconnect:
    if spec.interconnect == "nvlink":
        return "nvlink"
    return "pcie" if spec.interconnect == "pcie" else "nvswitch"


# `nvidia-smi topo -m`'s legend, as the driver prints it under the matrix (a real capture:
# tests/corpus/nvidia-smi/linux-tesla-v100-4gpu.topo-m.txt).
_TOPOLOGY_LEGEND = """
Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks
"""


def topology(spec: NodeSpec, indices: list[int]) -> str:
    """`nvidia-smi topo -m` over the container's GPUs: on NVSwitch every pair over all the GPU's
    active NVLinks, on NVLink bridges each even/odd pair, else the PCIe path (NODE within a CPU's
    half of the GPUs, SYS across); a GPU whose links are down (`nvlinkDown`) reaches the others over
    PCIe."""
    family = gpu_family(spec.gpu_product) or ""
    links = NVLINKS_PER_GPU.get(family, 0) if spec.interconnect != "pcie" else 0
    active = links if spec.nvlinks is None else min(spec.nvlinks, links)
    half = max(spec.gpus // 2, 1)

    def cell(first: int, second: int) -> str:
        if first == second:
            return " X "
        up = active and first >= spec.nvlink_down and second >= spec.nvlink_down
        bridged = spec.interconnect == "nvlink" and first // 2 == second // 2
        if up and (spec.interconnect != "nvlink" or bridged):
            return f"NV{active}"
        return "NODE" if first // half == second // half else "SYS"

    lines = ["\t" + "\t".join(f"GPU{gpu}" for gpu in range(len(indices))) + "\tCPU Affinity\tNUMA Affinity"]
    for gpu, node_index in enumerate(indices):
        numa = node_index // half
        cells = "\t".join(cell(node_index, other) for other in indices)
        lines.append(f"GPU{gpu}\t{cells}\t{numa * 32}-{numa * 32 + 31}\t{numa}")
    return "\n".join(lines) + "\n" + _TOPOLOGY_LEGEND


def nvlink_and_all_reduce(
    spec: NodeSpec, visible: list[nvidia_smi.Gpu], indices: list[int]
) -> tuple[str, int]:
    """The NCCL level's script: the link status, then the all-reduce (a `workloads.nccl` override
    is the whole output, as for all_reduce_perf alone)."""
    if spec.workloads.nccl is not None:
        return all_reduce(spec, visible)
    text, code = all_reduce(spec, visible, indices)
    samples = pcie_samples(spec, visible, indices)
    return nvlink_status(spec, visible, indices) + topology(spec, indices) + text + samples, code
