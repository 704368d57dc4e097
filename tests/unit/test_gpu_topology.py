"""`nvidia-smi topo -m` read from a real capture and from what the simulated cluster prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuctl.gpu_topology import describe, faster, joined_by, nvlinks, parse_topology
from gpuctl.sim.runtime.workloads import topology
from gpuctl.sim.scenario import NodeSpec

# The matrix quoted in https://github.com/NVIDIA/nccl-tests/issues/68 (a Dell C4140, 4 x V100 joined
# in pairs of 2 NVLinks, one ConnectX NIC), with its legend.
V100 = Path(__file__).resolve().parents[1] / "corpus/nvidia-smi/linux-tesla-v100-4gpu.topo-m.txt"


def test_a_real_capture() -> None:
    pairs = parse_topology(V100.read_text(encoding="utf-8"))
    assert pairs == {(0, 1): "NV2", (0, 2): "NV2", (0, 3): "NV2", (1, 2): "NV2", (1, 3): "NV2", (2, 3): "NV2"}
    assert joined_by(pairs, 6) == "nvlink"  # 2 of a V100's 6 NVLinks per pair: a mesh, no switch
    assert joined_by(pairs, 2) == "nvswitch"
    assert describe(pairs) == "`nvidia-smi topo -m`: NV2 between every GPU pair"


@pytest.mark.parametrize(
    ("cell", "count"), [("NV18", 18), ("NV2", 2), ("SYS", 0), ("PIX", 0), (" X ", 0), ("NODE", 0)]
)
def test_nvlinks_per_cell(cell: str, count: int) -> None:
    assert nvlinks(cell) == count


def test_interconnects_are_ranked() -> None:
    assert faster("nvswitch", "nvlink")
    assert faster("nvlink", "pcie")
    assert not faster("pcie", "nvswitch")
    assert not faster("nvlink", "nvlink")
    assert joined_by({}, 18) is None


@pytest.mark.parametrize(
    ("spec", "joined", "cells"),
    [
        (NodeSpec(name="a", gpus=8, interconnect="nvswitch"), "nvswitch", {"NV18"}),
        (NodeSpec(name="b", gpus=4, interconnect="nvlink"), "nvlink", {"NV18", "SYS"}),
        (NodeSpec(name="c", gpus=4, interconnect="pcie"), "pcie", {"NODE", "SYS"}),
        (
            NodeSpec(name="d", gpus=8, interconnect="nvswitch", nvlink_down=2),
            "nvlink",
            {"NODE", "NV18", "SYS"},
        ),
        (NodeSpec(name="e", gpus=8, interconnect="nvswitch", nvlinks=12), "nvlink", {"NV12"}),
    ],
    ids=["nvswitch", "bridges", "pcie", "nvlink-down", "fewer-links"],
)
def test_the_simulated_matrix_reads_back_as_the_scenario_says(
    spec: NodeSpec, joined: str, cells: set[str]
) -> None:
    text = topology(spec, list(range(spec.gpus)))
    pairs = parse_topology(text)
    assert len(pairs) == spec.gpus * (spec.gpus - 1) // 2
    assert (joined_by(pairs, 18), set(pairs.values())) == (joined, cells)
    assert (
        text.splitlines()[-1] == "  NV#  = Connection traversing a bonded set of # NVLinks"
    )  # the real legend


@pytest.mark.parametrize(
    "spec",
    [
        NodeSpec(name="hgx", gpus=8, interconnect="nvswitch"),
        NodeSpec(name="hgx", gpus=8, interconnect="nvswitch", nvls=False, nvlink_down=2),
        NodeSpec(name="pc", gpus=4, interconnect="pcie"),
    ],
    ids=["nvswitch", "degraded", "pcie"],
)
def test_the_simulated_script_output_raises_no_alarm(spec: NodeSpec) -> None:
    """What the NCCL level's pod prints on a simulated node (links, matrix, INFO lines, the table)
    names no failure: a slow node is judged by its figures, not by a diagnosis of healthy lines."""
    from gpuctl.diagnose.scan import find_all
    from gpuctl.sim.runtime.containers import visible_gpus
    from gpuctl.sim.runtime.workloads import nvlink_and_all_reduce

    text, code = nvlink_and_all_reduce(
        spec, visible_gpus(spec, list(range(spec.gpus))), list(range(spec.gpus))
    )
    assert code == 0
    assert [found.signature_id for found in find_all(text)] == []
