"""`nvidia-smi nvlink -s` read from a real capture and from what the simulated cluster prints."""

from __future__ import annotations

from pathlib import Path

from gpuctl.nvlink_status import GpuLinks, links_down, links_summary, parse_nvlink_status
from gpuctl.sim.runtime.workloads import nvlink_status
from gpuctl.sim.scenario import NodeSpec

# The output quoted in https://github.com/NVIDIA/nccl-tests/issues/228 (8 x A100-SXM4-80GB), its
# lines before the poster's "......".
A100 = (
    Path(__file__).resolve().parents[1]
    / "corpus/nvidia-smi/linux-nvidia-a100-sxm4-80gb.nvlink-status-head.txt"
)


def test_a_real_a100_capture() -> None:
    gpus = parse_nvlink_status(A100.read_text(encoding="utf-8"))
    assert [(gpu.index, gpu.name, gpu.active, gpu.total) for gpu in gpus] == [
        (0, "NVIDIA A100-SXM4-80GB", 12, 12),
        (1, "NVIDIA A100-SXM4-80GB", 12, 12),
        (2, "NVIDIA A100-SXM4-80GB", 1, 1),  # quoted up to its first link
    ]
    assert gpus[0].uuid == "GPU-ff8a40d4-abc6-08d1-f939-15848b5d4e05"
    assert set(gpus[0].speeds_gbps) == {25.0}
    assert links_down(gpus[:2]) == ""


def test_inactive_links_are_named_per_gpu() -> None:
    full = GpuLinks(0, "H100", "", (26.562,) * 18)
    short = GpuLinks(1, "H100", "", (26.562,) * 12 + (None,) * 6)
    assert (short.active, short.total) == (12, 18)
    assert links_down((full, short)) == "`nvidia-smi nvlink -s`: GPU 1: 12 of 18 NVLinks active"
    many = tuple(GpuLinks(index, "H100", "", (None,) * 18) for index in range(5))
    assert links_down((full, *many)).endswith("GPU 2: 0 of 18 NVLinks active (and 2 more GPUs)")
    assert links_down(()) == ""


def test_the_simulated_output_reads_back_with_the_scenarios_links() -> None:
    from gpuctl.sim.runtime.containers import visible_gpus

    spec = NodeSpec(
        name="hgx", gpus=8, gpu_product="NVIDIA-H100-80GB-HBM3", interconnect="nvswitch", nvlinks=12
    )
    text = nvlink_status(spec, visible_gpus(spec, list(range(8))), list(range(8)))
    gpus = parse_nvlink_status(text)
    assert [(gpu.active, gpu.total) for gpu in gpus] == [(12, 18)] * 8
    assert text.splitlines()[1] == "\t Link 0: 26.562 GB/s"  # the real line shape (A100 capture above)
    assert text.splitlines()[13] == "\t Link 12: <inactive>"
    down = NodeSpec(
        name="hgx", gpus=8, gpu_product="NVIDIA-H100-80GB-HBM3", interconnect="nvswitch", nvlink_down=2
    )
    lowered = parse_nvlink_status(nvlink_status(down, visible_gpus(down, [0, 1, 2]), [0, 1, 2]))
    assert [gpu.active for gpu in lowered] == [0, 0, 18]
    pcie = NodeSpec(name="pc", gpus=2, gpu_product="NVIDIA-H100-80GB-HBM3", interconnect="pcie")
    assert [
        gpu.total for gpu in parse_nvlink_status(nvlink_status(pcie, visible_gpus(pcie, [0, 1]), [0, 1]))
    ] == [0, 0]


def test_the_summary_says_how_many_links_each_gpu_has_active_and_at_what_speed() -> None:
    gpus = parse_nvlink_status(A100.read_text(encoding="utf-8"))[:2]
    assert links_summary(gpus) == "`nvidia-smi nvlink -s`: 2 GPUs x 12 of 12 NVLinks active at 25 GB/s"
    full = GpuLinks(0, "H100", "", (26.562,) * 18)
    short = GpuLinks(1, "H100", "", (26.562,) * 12 + (None,) * 6)
    assert links_summary((full, short)) == (
        "`nvidia-smi nvlink -s`: NVLinks active GPU 0 18 of 18, GPU 1 12 of 18 at 26.562 GB/s"
    )
    assert links_summary((GpuLinks(0, "L4", "", ()),)) == ""
    assert links_summary(()) == ""
