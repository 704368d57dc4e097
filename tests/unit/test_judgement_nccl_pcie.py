"""The NCCL level's use of the GPUs' PCIe links (gpuctl.core.verify.levels.nccl): which link the
figure of a PCIe-only node comes from, where the links are ignored (a measured row, another
interconnect, --min-busbw), the links named in expected_reason, and the warning for a link that
stayed below its maximum through a run fast enough to pass. The samples are the lines of the
level's sampler, `nvidia-smi --query-gpu=index,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,
pcie.link.width.current,pcie.link.width.max --format=csv,noheader -lms 500` (nvidia-smi's CSV rows,
`, ` between the fields, no header with noheader)."""

from __future__ import annotations

from gpuctl.core.verify.levels.nccl import NCCL, PCIE_HINT, target_of
from gpuctl.core.verify.model import Check, ProofOptions, VerifyOptions
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pod_states import PodOutcome
from gpuctl.nccl_expectations import low_bandwidth_hint
from gpuctl.pcie_link import parse_pcie_links
from gpuctl.shell import command_line
from tests.nccl_output import all_reduce_output

DONE = PodOutcome(name="gpuctl-verify-nccl-gpu-0", state="succeeded", phase="Succeeded", exit_code=0)
L40S = {"nvidia.com/gpu.product": "NVIDIA-L40S", "gpuctl.io/interconnect": "pcie"}
SHOWN = "`nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.width.current,...`"


def node(labels: dict[str, str], gpus: int = 8) -> NodeInfo:
    return NodeInfo("gpu-0", labels, {}, (), True, "", "", False, gpus, gpus)


def sample(gpu: int, gen: int, max_gen: int, width: int, max_width: int) -> str:
    return f"{gpu}, 00000000:{0x18 + gpu:02X}:00.0, {gen}, {max_gen}, {width}, {max_width}\n"


def healthy(gpus: int = 8, gen: int = 4) -> str:
    return "".join(sample(gpu, gen, gen, 16, 16) for gpu in range(gpus))


def all_reduce(busbw_gbps: float, gpus: int = 8) -> str:
    return all_reduce_output(busbw_gbps, gpus=gpus)


def judge(text: str, labels: dict[str, str] = L40S, gpus: int = 8, **proof: object) -> tuple[str, str, str]:
    """(status, message, expected_reason) of the level's check for `text`."""
    options = VerifyOptions(proof=ProofOptions(**proof))  # type: ignore[arg-type]
    evaluation = NCCL.judge_output(text, DONE, node(labels, gpus), gpus, options)
    reason = evaluation.nccl.expected_reason if evaluation.nccl else None
    return evaluation.checks[0].status.value, evaluation.checks[0].message, reason or ""


def test_the_figure_comes_from_the_link_that_can_carry_least() -> None:
    # one GPU whose slot allows only Gen3 x16: the ring runs at its speed, 7 GB/s instead of 14
    mixed = healthy(7) + sample(7, 3, 3, 16, 16)
    target = target_of(node(L40S), ProofOptions(), 8, "pcie", parse_pcie_links(mixed))
    assert (target.expected_gbps, target.minimum_gbps) == (7.0, 5.6)
    assert target.reason is not None
    assert "derived from PCIe Gen3 x16" in target.reason
    # an x8 slot halves it too, whatever the order of the GPUs
    narrow = sample(0, 4, 4, 8, 8) + healthy(8)[len(sample(0, 4, 4, 16, 16)) :]
    x8 = target_of(node(L40S), ProofOptions(), 8, "pcie", parse_pcie_links(narrow))
    assert x8.expected_gbps == 7.0
    # a link below its maximum is held to its maximum: the figure is what the node should reach
    trained_low = healthy(7) + sample(7, 1, 4, 16, 16)
    low = target_of(node(L40S), ProofOptions(), 8, "pcie", parse_pcie_links(trained_low))
    assert low.expected_gbps == 14.0


def test_the_links_do_not_change_a_measured_row_or_another_interconnect() -> None:
    # 3 x A100 on PCIe has a measured row (20 GB/s): the links do not replace it
    a100 = {"nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB", "gpuctl.io/interconnect": "pcie"}
    measured = target_of(node(a100, 3), ProofOptions(), 3, "pcie", parse_pcie_links(healthy(3, gen=3)))
    assert measured.expected_gbps == 20.0
    h100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "gpuctl.io/interconnect": "nvswitch"}
    nvswitch = target_of(node(h100), ProofOptions(), 8, None, parse_pcie_links(healthy(8, gen=3)))
    assert nvswitch.expected_gbps == 480.0
    given = target_of(node(L40S), ProofOptions(min_busbw_gbps=9.0), 8, "pcie", parse_pcie_links(healthy()))
    assert (given.expected_gbps, given.minimum_gbps) == (9.0, 9.0)


def test_the_reason_names_each_gpus_link_when_they_differ() -> None:
    text = all_reduce(15.0) + healthy(7) + sample(7, 4, 4, 8, 16)
    status, message, reason = judge(text)
    assert status == "warn"
    assert reason.endswith(
        f"; {SHOWN}: GPU 0 Gen4 x16, GPU 1 Gen4 x16, GPU 2 Gen4 x16, GPU 3 Gen4 x16, GPU 4 Gen4 x16, "
        "GPU 5 Gen4 x16, GPU 6 Gen4 x16, GPU 7 Gen4 x8"
    )
    assert message.startswith("all-reduce bus bandwidth 15.0 GB/s at 8 GiB on 8 GPUs; expected 14 GB/s (8 x ")
    assert message.endswith(
        f", pass at >= 11.2 GB/s; {SHOWN}: PCIe link below its maximum: "
        "GPU 7 (00000000:1F:00.0) at PCIe Gen4 x8, capable of Gen4 x16"
    )
    _, _, same = judge(all_reduce(15.0) + healthy())
    assert same.endswith(f"; {SHOWN}: 8 GPUs at PCIe Gen4 x16")


def test_a_run_just_at_its_minimum_with_a_short_link_warns_and_without_one_passes() -> None:
    short = healthy(7) + sample(7, 3, 4, 16, 16)
    assert judge(all_reduce(11.2) + short)[0] == "warn"
    assert judge(all_reduce(11.2) + healthy())[0] == "pass"
    status, message, _ = judge(all_reduce(11.1) + short)
    assert status == "fail"
    assert message.endswith("GPU 7 (00000000:1F:00.0) at PCIe Gen3 x16, capable of Gen4 x16")


def test_more_than_three_short_links_are_counted_not_named() -> None:
    short = "".join(sample(gpu, 4, 4, 8, 16) for gpu in range(5)) + healthy(8)[len(healthy(5)) :]
    status, message, _ = judge(all_reduce(15.0) + short)
    assert status == "warn"
    assert message.endswith(
        "GPU 0 (00000000:18:00.0) at PCIe Gen4 x8, capable of Gen4 x16; "
        "GPU 1 (00000000:19:00.0) at PCIe Gen4 x8, capable of Gen4 x16; "
        "GPU 2 (00000000:1A:00.0) at PCIe Gen4 x8, capable of Gen4 x16 (and 2 more GPUs)"
    )


def test_an_nvswitch_node_does_not_show_pcie_links_in_its_reason() -> None:
    h100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "gpuctl.io/interconnect": "nvswitch"}
    _, _, reason = judge(all_reduce(15.0) + healthy(), labels=h100)
    assert "PCIe Gen4" not in reason
    assert reason.startswith("8 x H100")


def check_of(text: str, labels: dict[str, str] = L40S) -> Check:
    options = VerifyOptions(proof=ProofOptions())
    return NCCL.judge_output(text, DONE, node(labels), 8, options).checks[0]


def test_each_verdict_is_the_levels_check_with_the_hint_for_what_it_found() -> None:
    short = healthy(7) + sample(7, 4, 4, 8, 16)
    warn = check_of(all_reduce(15.0) + short)
    assert (warn.id, warn.status.value) == ("nccl.all-reduce", "warn")
    assert warn.hint == PCIE_HINT.format(node=command_line("gpu-0"))
    slow = check_of(all_reduce(8.0) + healthy())
    assert (slow.id, slow.status.value) == ("nccl.all-reduce", "fail")
    assert slow.hint == low_bandwidth_hint("pcie").format(node=command_line("gpu-0"))
    unlabelled = check_of(all_reduce(15.0) + healthy(), {"nvidia.com/gpu.product": "NVIDIA-L40S"})
    assert (unlabelled.id, unlabelled.status.value) == ("nccl.all-reduce", "warn")
    assert "not judged: the node has no gpuctl.io/interconnect label" in unlabelled.message
    h100 = {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "gpuctl.io/interconnect": "nvswitch"}
    ring = check_of(all_reduce(300.0) + short, h100)
    assert (ring.id, ring.status.value) == ("nccl.all-reduce", "fail")
    assert ring.message.startswith("NCCL ran Ring where NVLS (NVLink SHARP) was expected")
    assert ring.message.endswith("GPU 7 (00000000:1F:00.0) at PCIe Gen4 x8, capable of Gen4 x16")
