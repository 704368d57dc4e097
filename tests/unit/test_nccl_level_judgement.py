"""The NCCL level's verdict on all_reduce_perf output (in the pinned nccl-tests release's layout):
each side of the pass fraction, the NVLS rule, --min-busbw, and what NCCL_DEBUG=INFO lines say NCCL
chose. The INFO lines quoted here are real, each from the thread named beside it."""

from __future__ import annotations

import pytest

from gpuctl.core.verify.levels.nccl import NCCL, target_of
from gpuctl.core.verify.model import Check, NcclFigures, ProofOptions, VerifyOptions
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pod_states import PodOutcome
from gpuctl.nccl_tests import (
    NcclDevice,
    NcclRow,
    format_all_reduce,
    nccl_algorithm,
    nccl_transports,
    parse_all_reduce,
)
from gpuctl.sim.runtime.workloads import nccl_info_lines
from tests.nccl_output import all_reduce_output

H100_LABELS = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "gpuctl.io/interconnect": "nvswitch"}
DONE = PodOutcome(name="gpuctl-verify-nccl-gpu-0", state="succeeded", phase="Succeeded", exit_code=0)

# Real NCCL_DEBUG=INFO lines.
MULTICAST_AVAILABLE = (
    "[0] NCCL INFO NVLS multicast support is available on dev 0 (NVLS_NCHANNELS 16)"  # nccl#2094
)
NVLS_COMM = (  # quoted in vLLM's debugging guide (docs.vllm.ai, getting_started/debugging.html)
    "NCCL INFO NVLS comm 0x765a3b0 headRank 3 nHeads 8 buffSize 4194304 memSize 2097152 "
    "nvlsPerRankSize 301989888 nvlsTotalSize 2415919104"
)
P2P_DIRECT = "[1] NCCL INFO Channel 00/0 : 1[21000] -> 0[1000] via P2P/direct pointer"  # nccl#1161
MULTICAST_LISTED = (
    "lccn09:2520139:2520239 [3] NCCL INFO NVLS multicast support is available on dev 3"  # nccl-tests#319
)


def _node(gpus: int = 8, labels: dict[str, str] | None = None) -> NodeInfo:
    return NodeInfo(
        "gpu-0", dict(H100_LABELS if labels is None else labels), {}, (), True, "", "", False, gpus, gpus
    )


def _output(busbw_gbps: float, info: list[str], gpus: int = 8) -> str:
    return all_reduce_output(busbw_gbps, gpus=gpus, product="NVIDIA H100 80GB HBM3", info=info)


def _judge(
    text: str, gpus: int = 8, node: NodeInfo | None = None, min_busbw: float | None = None
) -> tuple[Check, NcclFigures | None]:
    options = VerifyOptions(proof=ProofOptions(min_busbw_gbps=min_busbw))
    evaluation = NCCL.judge_output(text, DONE, node or _node(gpus), gpus, options)
    return evaluation.checks[0], evaluation.nccl


NVLS_RUN = nccl_info_lines("gpu-0", 8, nvls_support=True, nvls=True)
RING_RUN = nccl_info_lines("gpu-0", 8, nvls_support=False, nvls=False)


@pytest.mark.parametrize(
    ("busbw", "status"), [(384.0, "pass"), (383.99, "fail"), (456.0, "pass"), (288.0, "fail")]
)
def test_the_pass_fraction_on_both_sides(busbw: float, status: str) -> None:
    """8 x H100 with NVLS: 480 GB/s expected, pass at 80 % (384 GB/s), exactly at it included."""
    check, figures = _judge(_output(busbw, NVLS_RUN))
    assert check.status.value == status, check.message
    assert figures is not None
    assert (figures.busbw_gbps, figures.expected_gbps, figures.algorithm) == (busbw, 480.0, "NVLS")
    if status == "fail":
        assert "below expectation: expected 480 GB/s" in check.message


def test_ring_where_nvls_was_expected_fails_even_when_fast_enough() -> None:
    check, figures = _judge(_output(400.0, RING_RUN))
    assert check.status.value == "fail"
    assert check.message.startswith("NCCL ran Ring where NVLS (NVLink SHARP) was expected: all-reduce bus ")
    assert "400.0 GB/s" in check.message
    assert "expected 480 GB/s" in check.message
    assert "nvidia-fabricmanager" in check.hint
    assert figures is not None
    assert figures.algorithm == "Ring"


def test_without_info_lines_only_bandwidth_judges() -> None:
    check, figures = _judge(_output(400.0, []))
    assert check.status.value == "pass"
    assert figures is not None
    assert (figures.algorithm, figures.transport) == (None, None)


def test_two_gpus_run_ring_and_are_held_to_the_ring_figure() -> None:
    check, figures = _judge(_output(300.0, nccl_info_lines("gpu-0", 2, nvls_support=False, nvls=False), 2), 2)
    assert check.status.value == "pass"  # 370 GB/s expected, 296 GB/s to pass
    assert figures is not None
    assert figures.expected_gbps == 370.0
    check, _ = _judge(_output(295.9, [], 2), 2)
    assert check.status.value == "fail"


def test_min_busbw_replaces_the_figure_and_the_nvls_rule() -> None:
    check, figures = _judge(_output(300.0, RING_RUN), min_busbw=300.0)
    assert check.status.value == "pass"
    assert figures is not None
    assert (figures.expected_gbps, figures.expected_reason) == (300.0, "--min-busbw 300")
    check, _ = _judge(_output(299.9, RING_RUN), min_busbw=300.0)
    assert check.status.value == "fail"


def test_the_target_names_the_configuration_and_its_source() -> None:
    target = target_of(_node(), ProofOptions(), 8)
    assert (target.expected_gbps, target.minimum_gbps, target.algorithm) == (480.0, 384.0, "NVLS")
    assert target.source == "8 x H100 over nvswitch, NVLS: https://github.com/NVIDIA/nccl-tests/issues/212"
    assert target.reason is not None
    assert target.reason.startswith(
        "8 x H100 on NVSwitch with NVLink SHARP (NVLS): 480 GB/s busbw measured on 8"
    )
    gb200 = {"nvidia.com/gpu.product": "NVIDIA-GB200", "gpuctl.io/interconnect": "nvswitch"}
    tray = target_of(_node(4, gb200), ProofOptions(), 4)
    assert tray.expected_gbps == 680.0  # the 4-GPU host's figure, not the 72-GPU rack's 834
    unlabelled = target_of(_node(8, {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}), ProofOptions(), 8)
    assert (unlabelled.minimum_gbps, unlabelled.reason) == (None, None)
    unknown = target_of(_node(8, {"nvidia.com/gpu.product": "Acme-9000", "gpuctl.io/interconnect": "pcie"}),
                        ProofOptions(), 8)  # fmt: skip
    assert unknown.why_none == "gpuctl knows no GPU family in the product 'Acme-9000'"


def test_the_command_prints_links_and_topology_then_runs_the_all_reduce_with_nccl_debug_info() -> None:
    shell, flag, script = NCCL.command(8)
    assert (shell, flag) == ("sh", "-c")
    assert script == (
        "nvidia-smi nvlink -s; nvidia-smi topo -m; links=$(mktemp); nvidia-smi --query-gpu=index,pci.bus_id,"
        "pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max "
        '--format=csv,noheader -lms 500 > "$links" 2>/dev/null & sampler=$!; env NCCL_DEBUG=INFO '
        "/opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 8; status=$?; "
        'kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; cat "$links"; exit "$status"'
    )


def test_a_slow_node_names_the_gpus_whose_nvlinks_are_down() -> None:
    status = "".join(
        f"GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: GPU-{gpu})\n"
        + "".join(
            f"\t Link {link}: {'26.562 GB/s' if gpu or link < 12 else '<inactive>'}\n" for link in range(18)
        )
        for gpu in range(8)
    )
    check, _ = _judge(status + _output(350.0, NVLS_RUN))
    assert check.status.value == "fail"
    assert check.message.endswith("; `nvidia-smi nvlink -s`: GPU 0: 12 of 18 NVLinks active")
    check, _ = _judge(status + _output(470.0, NVLS_RUN))
    assert check.status.value == "pass"


# --- the INFO lines of real runs -----------------------------------------------------------------
def test_real_nvls_and_transport_lines() -> None:
    assert nccl_algorithm([MULTICAST_AVAILABLE, NVLS_COMM]) == "NVLS"
    assert nccl_algorithm([MULTICAST_AVAILABLE, MULTICAST_LISTED]) is None  # available is not used
    assert nccl_algorithm([P2P_DIRECT]) is None
    assert nccl_transports([P2P_DIRECT, MULTICAST_AVAILABLE]) == ("P2P/direct",)


@pytest.mark.parametrize(
    ("lines", "algorithm"),
    [
        (["h:1:2 [0] NCCL INFO NVLS multicast support is not available on dev 0"], "Ring"),
        (
            ["h:1:2 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels"],
            "Ring",
        ),
        (
            ["h:1:2 [0] NCCL INFO 24 coll channels, 24 collnet channels, 16 nvls channels, 32 p2p channels"],
            "NVLS",
        ),
        ([NVLS_COMM, "h:1:2 [5] NCCL INFO NCCL_ALGO set by environment to ring,tree"], "Ring"),
        ([NVLS_COMM, "h:1:2 [5] NCCL INFO NCCL_ALGO set by environment to Tree."], "Tree"),
        ([NVLS_COMM, "h:1:2 [5] NCCL INFO NCCL_ALGO set by environment to NVLS,ring"], "NVLS"),
        (["h:1:2 [0] NCCL INFO Connected all rings"], None),
    ],
)
def test_what_each_line_says_about_the_algorithm(lines: list[str], algorithm: str | None) -> None:
    assert nccl_algorithm(lines) == algorithm


def test_transports_are_named_once_in_order_of_first_use() -> None:
    lines = [
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        "h:1:2 [0] NCCL INFO Channel 00/0 : 7[1] -> 0[0] [receive] via NET/IBext_v8/1/GDRDMA",
        "h:1:2 [1] NCCL INFO Channel 01/0 : 1[1] -> 2[2] via P2P/CUMEM/read",
        "h:1:2 [3] NCCL INFO Channel 02 : 3[3] -> 0[0] via SHM/direct/direct",
        "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0",
    ]
    assert nccl_transports(lines) == ("P2P/CUMEM", "NET/IB", "SHM/direct", "NET/Socket")


def test_the_parser_reads_the_version_and_keeps_info_lines_out_of_the_table() -> None:
    run = parse_all_reduce(_output(470.0, NVLS_RUN))
    assert (run.version, run.algorithm, run.transports) == ("2.18.3", "NVLS", ("P2P/CUMEM",))
    assert len(run.rows) == 1
    assert (run.warnings, run.failures) == ((), ())


def _topology(cell: str, gpus: int = 8) -> str:
    """An `nvidia-smi topo -m` matrix whose GPU pairs are all joined by `cell`."""
    header = "\t" + "\t".join(f"GPU{gpu}" for gpu in range(gpus)) + "\tCPU Affinity\tNUMA Affinity\n"
    rows = "".join(
        f"GPU{gpu}\t" + "\t".join(" X " if other == gpu else cell for other in range(gpus)) + "\t0-31\t0\n"
        for gpu in range(gpus)
    )
    return header + rows


def _links(active: int, total: int = 18, gpus: int = 8) -> str:
    return "".join(
        f"GPU {gpu}: NVIDIA H100 80GB HBM3 (UUID: GPU-{gpu})\n"
        + "".join(
            f"\t Link {link}: {'26.562 GB/s' if link < active else '<inactive>'}\n" for link in range(total)
        )
        for gpu in range(gpus)
    )


def test_a_node_labelled_slower_than_its_topology_is_held_to_what_its_gpus_have() -> None:
    """Labelled pcie, but every GPU pair over all 18 NVLinks: NVSwitch, so the NVLS figure, not 28 GB/s."""
    pcie = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "gpuctl.io/interconnect": "pcie"}
    output = _links(18) + _topology("NV18") + _output(300.0, NVLS_RUN)
    check, figures = _judge(output, node=_node(8, pcie))
    assert check.status.value == "fail"
    assert figures is not None
    assert figures.expected_gbps == 480.0
    assert "(labelled pcie; `nvidia-smi topo -m` shows nvswitch)" in check.message
    assert figures.expected_reason is not None
    assert "(labelled pcie; `nvidia-smi topo -m` shows nvswitch)" in figures.expected_reason
    # the label is kept where the topology shows less (NVLinks down): the node is held to more
    check, figures = _judge(_links(18) + _topology("SYS") + _output(300.0, NVLS_RUN))
    assert figures is not None
    assert figures.expected_gbps == 480.0
    assert "labelled" not in check.message
    # without the link list NV18 everywhere proves NVLink but no switch: held to NVLink, which has
    # no cited 8-GPU figure, so warned rather than passed by the PCIe figure
    check, figures = _judge(_topology("NV18") + _output(30.0, RING_RUN), node=_node(8, pcie))
    assert figures is not None
    assert (check.status.value, figures.expected_gbps) == ("warn", None)
    assert "no cited all-reduce figure for 8 x H100 over nvlink" in check.message
    # and a PCIe matrix on a PCIe-labelled node changes nothing
    check, figures = _judge(_topology("SYS") + _output(30.0, RING_RUN), node=_node(8, pcie))
    assert figures is not None
    assert (check.status.value, figures.expected_gbps) == ("pass", 28.0)


def test_the_messages_name_the_size_the_gpus_and_wrong_results() -> None:
    check, _ = _judge(_output(470.0, NVLS_RUN))
    assert check.message.startswith(
        "all-reduce bus bandwidth 470.0 GB/s at 8 GiB on 8 GPUs; expected 480 GB/s"
    )
    devices = [
        NcclDevice(r, "gpu-0", r, f"0000:{0x18 + r:02x}:00", "NVIDIA H100 80GB HBM3", pid=9) for r in range(8)
    ]
    row = NcclRow(8, 2, "float", "sum", 20.0, 0.0, 0.0, 20.0, 0.0, 0.0)
    wrong = format_all_reduce(devices, [row], out_of_bounds=5)
    check, figures = _judge(wrong)
    assert check.status.value == "fail"
    assert check.message == "the all-reduce computed wrong results: 5 value(s) out of bounds"
    assert "gpuctl verify --level cuda" in check.hint
    assert figures is not None
    assert figures.size_bytes == 8
