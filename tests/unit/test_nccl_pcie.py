"""GPUs without NVLink: each GPU's PCIe link read while the all-reduce runs, the figure derived from
the node's own links, and a link trained below its maximum named with its figures.

The `nvidia-smi -q` captures in tests/corpus/nvidia-smi are real machines' (their "GPU Link Info"
blocks); the sampled lines are nvidia-smi's `--format=csv,noheader` layout (the same layout as the
captured query-verify files), as the simulated cluster prints them."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuctl.core.verify.levels.nccl import NCCL, target_of
from gpuctl.core.verify.model import ProofOptions, VerifyOptions
from gpuctl.errors import ConfigError
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pod_states import PodOutcome
from gpuctl.nccl_expectations import TABLE, Expectation, NodeHardware, expected_for
from gpuctl.pcie_link import below_max, link_gbytes, parse_pcie_links, parse_query_links, slowest
from gpuctl.sim.runtime.workloads import pcie_links
from gpuctl.sim.scenario import NodeSpec, parse_scenario
from tests.nccl_output import all_reduce_output

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "nvidia-smi"
DONE = PodOutcome(name="gpuctl-verify-nccl-gpu-0", state="succeeded", phase="Succeeded", exit_code=0)
L40S = {"nvidia.com/gpu.product": "NVIDIA-L40S", "gpuctl.io/interconnect": "pcie"}


def _node(labels: dict[str, str], gpus: int = 8) -> NodeInfo:
    return NodeInfo("gpu-0", labels, {}, (), True, "", "", False, gpus, gpus)


def test_the_link_of_real_gpus_from_nvidia_smi_q() -> None:
    """An L40S under load at Gen4 x16; idle GeForce cards at Gen1 of their Gen3/Gen4: why the run
    samples its links while the all-reduce runs instead of before it."""
    (l40s,) = parse_query_links((CORPUS / "linux-nvidia-l40s-595.80.q.txt").read_text(encoding="utf-8"))
    assert (l40s.bus_id, l40s.gen, l40s.max_gen, l40s.width, l40s.max_width) == (
        "00000000:01:00.0",
        4,
        4,
        16,
        16,
    )
    assert not l40s.below_max
    (h100,) = parse_query_links(
        (CORPUS / "linux-nvidia-h100-80gb-hbm3-590.48.01.q.txt").read_text(encoding="utf-8")
    )
    assert (h100.gen, h100.width) == (5, 16)
    idle = parse_query_links(
        (CORPUS / "linux-nvidia-geforce-rtx-2080-super-595.71.05.q.txt").read_text(encoding="utf-8")
    )
    assert [(link.gen, link.max_gen) for link in idle] == [(1, 3)]


def test_the_samples_keep_each_gpus_best_link() -> None:
    text = (
        "0, 00000000:01:00.0, 1, 4, 16, 16\n1, 00000000:02:00.0, 1, 4, 8, 16\n"
        "# nccl-tests' lines in between are skipped\n"
        "0, 00000000:01:00.0, 4, 4, 16, 16\n1, 00000000:02:00.0, 4, 4, 8, 16\n"
        "2, 00000000:03:00.0, [N/A], [N/A], [N/A], [N/A]\n"
    )
    links = parse_pcie_links(text)
    assert [(link.index, link.gen, link.width, link.below_max) for link in links] == [
        (0, 4, 16, False),
        (1, 4, 8, True),
    ]
    assert below_max(links) == (
        "`nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current,...`: PCIe link below its "
        "maximum: GPU 1 (00000000:02:00.0) at PCIe Gen4 x8, capable of Gen4 x16"
    )
    assert slowest(links) == links[0]  # the slowest by what each can run


@pytest.mark.parametrize(
    ("gen", "width", "gbytes"), [(3, 16, 15.8), (4, 16, 31.5), (5, 16, 63.0), (4, 8, 15.8)]
)
def test_link_bandwidth_by_generation_and_width(gen: int, width: int, gbytes: float) -> None:
    assert round(link_gbytes(gen, width), 1) == round(gbytes, 1)


@pytest.mark.parametrize("family", ["L40S", "L4", "A100"])
def test_the_pcie_families_have_a_derived_row_that_says_so(family: str) -> None:
    found = expected_for(NodeHardware(family, "pcie", 8))
    assert isinstance(found, Expectation)
    assert (found.busbw_gbps, found.derivation.startswith("derived from PCIe Gen4 x16")) == (14.0, True)
    assert found.measured_on.startswith("derived, not measured: 5/6/7/8 x ")
    assert "derived from PCIe Gen4 x16 (31.5 GB/s per direction) x 0.444" in found.reason(
        NodeHardware(family, "pcie", 8)
    )
    four = expected_for(NodeHardware(family, "pcie", 4))
    assert isinstance(four, Expectation)
    assert four.busbw_gbps == 17.5
    # never another configuration's figure: NVSwitch, or more GPUs than any row has
    assert not isinstance(expected_for(NodeHardware(family, "pcie", 9)), Expectation)
    assert all(row.derivation == "" for row in TABLE if row.family == family and row.interconnect != "pcie")


def test_a_measured_row_stays_before_the_derived_one() -> None:
    three = expected_for(NodeHardware("A100", "pcie", 3))
    assert isinstance(three, Expectation)
    assert (three.busbw_gbps, three.derivation) == (20.0, "")


def _samples(
    gen: int, width: int, gpus: int = 8, short: int = -1, short_link: tuple[int, int] = (4, 8)
) -> str:
    return "".join(
        f"{gpu}, 00000000:{0x18 + gpu:02X}:00.0, "
        + (
            f"{short_link[0]}, {gen}, {short_link[1]}, {width}"
            if gpu == short
            else f"{gen}, {gen}, {width}, {width}"
        )
        + "\n"
        for gpu in range(gpus)
    )


def test_the_figure_comes_from_the_slowest_link_where_no_row_is_measured() -> None:
    gen3 = target_of(_node(L40S), ProofOptions(), 8, "pcie", parse_pcie_links(_samples(3, 16)))
    assert (gen3.expected_gbps, gen3.minimum_gbps) == (7.0, 5.6)
    assert gen3.reason is not None
    assert "derived from PCIe Gen3 x16 (15.8 GB/s per direction)" in gen3.reason
    gen4 = target_of(_node(L40S), ProofOptions(), 8, "pcie", parse_pcie_links(_samples(4, 16)))
    assert gen4.expected_gbps == 14.0
    no_samples = target_of(_node(L40S), ProofOptions(), 8, "pcie")
    assert no_samples.expected_gbps == 14.0  # the model's row: L40S cards are Gen4 x16


def _output(busbw_gbps: float, gpus: int = 8) -> str:
    return all_reduce_output(busbw_gbps, gpus=gpus)


TOPOLOGY = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t0-31\t0\nGPU1\tSYS\t X \t32-63\t1\n"


def test_a_gpu_whose_link_trained_below_its_maximum_is_named() -> None:
    options = VerifyOptions(proof=ProofOptions())
    degraded = _samples(4, 16, short=3)
    passing = NCCL.judge_output(_output(15.0) + degraded, DONE, _node(L40S), 8, options)
    check = passing.checks[0]
    assert check.status.value == "warn"
    assert check.message.endswith(
        "PCIe link below its maximum: GPU 3 (00000000:1B:00.0) at PCIe Gen4 x8, capable of Gen4 x16"
    )
    assert "LnkSta" in check.hint
    failing = NCCL.judge_output(_output(8.0) + degraded, DONE, _node(L40S), 8, options).checks[0]
    assert failing.status.value == "fail"
    assert "below expectation: expected 14 GB/s" in failing.message
    assert "GPU 3 (00000000:1B:00.0) at PCIe Gen4 x8, capable of Gen4 x16" in failing.message
    healthy = NCCL.judge_output(TOPOLOGY + _output(15.0) + _samples(4, 16), DONE, _node(L40S), 8, options)
    assert healthy.checks[0].status.value == "pass"
    reason = healthy.nccl.expected_reason if healthy.nccl else ""
    assert reason is not None
    assert reason.startswith("8 x L40S on PCIe only: 14 GB/s busbw derived from PCIe Gen4 x16")
    assert reason.endswith(
        "8 GPUs at PCIe Gen4 x16; `nvidia-smi topo -m`: GPU pairs over SYS (P2P through the CPU)"
    )


# --- the simulated cluster's PCIe fields (docs/scenario.md) ---------------------------------------
def _spec(**fields: object) -> NodeSpec:
    return parse_scenario(
        {"nodes": [{"name": "l40s", "gpus": 8, "gpuProduct": "NVIDIA-L40S", **fields}]}
    ).nodes[0]


def test_the_sim_plays_each_gpus_link() -> None:
    healthy = _spec()
    assert (healthy.pcie_link, healthy.pcie_degraded) == (None, 0)
    assert set(pcie_links(healthy, 8)) == {(4, 4, 16, 16)}  # an L40S: Gen4 x16
    narrow = _spec(pcieDegraded=2)
    assert pcie_links(narrow, 8)[:3] == [(4, 4, 8, 16), (4, 4, 8, 16), (4, 4, 16, 16)]
    gen3 = _spec(pcieLink={"gen": 3, "width": 16}, pcieDegraded=1, pcieDegradedLink={"gen": 2, "width": 16})
    assert pcie_links(gen3, 2) == [(2, 3, 16, 16), (3, 3, 16, 16)]


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"pcieDegraded": 9}, "nodes[0].pcieDegraded: must be <= gpus (8)"),
        ({"pcieLink": {"gen": 7, "width": 16}}, "nodes[0].pcieLink.gen: must be a PCIe generation"),
        ({"pcieLink": {"gen": 4, "width": 12}}, "nodes[0].pcieLink.width: must be a PCIe link width"),
        ({"pcieDegradedLink": {"speed": 4}}, "nodes[0].pcieDegradedLink.speed: unknown field"),
    ],
)
def test_bad_pcie_fields_are_refused_naming_the_field(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _spec(**fields)
    assert problem in str(refused.value)
