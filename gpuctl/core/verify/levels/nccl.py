"""`--level nccl`: nccl-tests' all_reduce_perf across all the pod's GPUs (nodes with 2 or more),
its bus bandwidth at the largest message size held to the figure the node's configuration should
give (gpuctl.nccl_expectations: GPU model, interconnect, GPU count, NVLink SHARP) or to
`--min-busbw`. The pod runs it with NCCL_DEBUG=INFO, so the run says which algorithm and transport
NCCL chose: a node that should run NVLink SHARP (NVLS) and ran ring fails, naming NVLS.

The interconnect comes from the node label `gpuctl.io/interconnect` (nvswitch|nvlink|pcie): GPU
feature discovery publishes no such label (`nvidia.com/gpu.clique` names a multi-node NVLink
domain, not whether a node's GPUs are joined by NVSwitch, NVLink bridges or PCIe only). A node
without it, or a model and interconnect without a cited figure, is measured and warned about
unless `--min-busbw` gives the figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.verify.levels.base import ProofLevel
from gpuctl.core.verify.model import Check, NcclFigures, PodEvaluation, failed, passed, warned
from gpuctl.defaults import NCCL_TESTS_ALL_REDUCE
from gpuctl.gpu_topology import COMMAND as TOPOLOGY
from gpuctl.gpu_topology import faster, joined_by, parse_topology
from gpuctl.nccl_expectations import (
    INTERCONNECT_LABEL,
    INTERCONNECTS,
    PASS_FRACTION,
    Expectation,
    Interconnect,
    NodeHardware,
    expected_for,
    gpu_family,
    low_bandwidth_hint,
    pcie_expectation,
)
from gpuctl.nccl_tests import NcclRun, all_reduce_args, parse_all_reduce
from gpuctl.nvlink_status import COMMAND as NVLINK_STATUS
from gpuctl.nvlink_status import links_down, links_summary, parse_nvlink_status
from gpuctl.pcie_link import COMMAND as PCIE_LINKS
from gpuctl.pcie_link import GpuLink, below_max, parse_pcie_links, slowest
from gpuctl.pcie_link import links_summary as pcie_summary
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.verify.model import ProofOptions, VerifyOptions
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.pods import PodOutcome

CHECK_ID = "nccl.all-reduce"


@dataclass(frozen=True)
class Target:
    """What a node's all-reduce is held to: pass at `minimum_gbps`, `expected_gbps` its figure;
    `why_none` says why there is none."""

    minimum_gbps: float | None
    expected_gbps: float | None
    source: str
    interconnect: Interconnect | None
    why_none: str = ""
    algorithm: str = ""  # the algorithm its figure was measured with ("NVLS" is enforced)
    reason: str | None = None  # the node's configuration and the cited row it is judged by


def interconnect_of(node: NodeInfo) -> Interconnect | None:
    value = node.labels.get(INTERCONNECT_LABEL, "")
    return next((known for known in INTERCONNECTS if known == value), None)


def target_of(
    node: NodeInfo,
    proof: ProofOptions,
    gpus: int = 8,
    seen: Interconnect | None = None,
    links: tuple[GpuLink, ...] = (),
) -> Target:
    """What the node's all-reduce over `gpus` GPUs is held to: --min-busbw, else the cited figure
    of its configuration (model, interconnect, GPU count, NVLS), else none (and why). `seen`: what
    `nvidia-smi topo -m` showed; where it is faster than the label, the node is held to it (a
    node labelled pcie whose GPUs share NVSwitch is not judged by the PCIe figure). `links`: the
    GPUs' PCIe links as sampled during the run; GPUs on PCIe only without a measured figure are
    held to the figure their slowest link gives (gpuctl.nccl_expectations.pcie_expectation)."""
    labelled = interconnect_of(node)
    interconnect = seen if labelled and seen and faster(seen, labelled) else labelled
    relabel = f" (labelled {labelled}; `{TOPOLOGY}` shows {seen})" if interconnect != labelled else ""
    if proof.min_busbw_gbps is not None:
        minimum = proof.min_busbw_gbps
        return Target(minimum, minimum, "--min-busbw", interconnect, reason=f"--min-busbw {minimum:g}")
    if interconnect is None:
        shows = f"; `{TOPOLOGY}` shows {seen}" if seen else ""
        return Target(
            None, None, "", None, f"the node has no {INTERCONNECT_LABEL} label (nvswitch|nvlink|pcie){shows}"
        )
    family = gpu_family(node.product_label)
    if family is None:
        why = f"gpuctl knows no GPU family in the product {node.product_label!r}"
        return Target(None, None, "", interconnect, why)
    hardware = NodeHardware(family, interconnect, gpus)
    expected = expected_for(hardware)
    narrowest = slowest(links)
    measured = isinstance(expected, Expectation) and not expected.derivation
    if interconnect == "pcie" and narrowest is not None and not measured:
        expected = pcie_expectation(family, gpus, narrowest.max_gen, narrowest.max_width)
    if not isinstance(expected, Expectation):
        return Target(None, None, "", interconnect, expected.reason)
    algorithm = f", {expected.algorithm}" if expected.algorithm else ""
    source = f"{gpus} x {family} over {interconnect}{relabel}{algorithm}: {expected.source}"
    return Target(
        expected.minimum_gbps, expected.busbw_gbps, source, interconnect,
        algorithm=expected.algorithm, reason=expected.reason(hardware) + relabel,
    )  # fmt: skip


def _size(size_bytes: int | None) -> str:
    if size_bytes is None:
        return "?"
    return f"{size_bytes / 2**30:g} GiB" if size_bytes >= 2**30 else f"{size_bytes} B"


class NcclLevel(ProofLevel):
    name = "nccl"
    check_id = CHECK_ID
    container = "nccl-all-reduce"
    title = "the NCCL all-reduce"
    diagnosis_source = "nccl-workload"
    memory_shm = True

    def image(self, proof: ProofOptions) -> str:
        return proof.nccl_image

    def command(self, gpus: int) -> tuple[str, ...]:
        # First the GPUs' NVLinks and topology as the node sees them (`nvidia-smi nvlink -s`,
        # `nvidia-smi topo -m`: the NVIDIA runtime mounts nvidia-smi into GPU containers), then the
        # all-reduce with NCCL_DEBUG=INFO, so NCCL prints the algorithm (NVLS buffers, rings) and
        # transports it set up.
        # The GPUs' PCIe links are sampled while the all-reduce runs (an idle GPU lowers its link)
        # into a file, printed after it: interleaved with nccl-tests' buffered output they could
        # cut its lines.
        all_reduce = command_line("env", "NCCL_DEBUG=INFO", *all_reduce_args(gpus, NCCL_TESTS_ALL_REDUCE))
        sampled = (
            f'links=$(mktemp); {PCIE_LINKS} > "$links" 2>/dev/null & sampler=$!; {all_reduce}; status=$?; '
            'kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; cat "$links"; exit "$status"'
        )
        return ("sh", "-c", f"{NVLINK_STATUS}; {TOPOLOGY}; {sampled}")

    def not_applicable(self, gpus: int) -> str:
        return f"not applicable: {gpus} GPU" if gpus < 2 else ""

    def judge_output(
        self, text: str, outcome: PodOutcome, node: NodeInfo, gpus: int, options: VerifyOptions
    ) -> PodEvaluation:
        run = parse_all_reduce(text)
        links = parse_nvlink_status(text)
        pairs = parse_topology(text)
        seen = joined_by(pairs, max((gpu.total for gpu in links), default=0))
        pcie = parse_pcie_links(text)
        target = target_of(node, options.proof, gpus, seen, pcie)
        summary = links_summary(links)
        if target.interconnect == "pcie":  # what the PCIe figure depends on: the links, and P2P
            summary = "; ".join(part for part in (pcie_summary(pcie), p2p_paths(pairs)) if part)
        # The reason names what the node showed: the GPUs' active NVLinks and their speed.
        reason = f"{target.reason}; {summary}" if target.reason and summary else target.reason
        largest = run.largest
        figures = NcclFigures(
            run.busbw_gbps, target.expected_gbps, largest.size_bytes if largest else None, gpus,
            algorithm=run.algorithm, transport=", ".join(run.transports) or None,
            expected_reason=reason,
        )  # fmt: skip
        if not run.completed or outcome.exit_code not in (0, None) or run.busbw_gbps is None:
            return PodEvaluation((self._run_failed(text, run, outcome, node, options),), nccl=figures)
        if run.out_of_bounds:
            check = failed(
                CHECK_ID,
                f"the all-reduce computed wrong results: {run.out_of_bounds} value(s) out of bounds",
                f"run `gpuctl verify --level cuda` on {command_line(node.name)}; "
                + low_bandwidth_hint(target.interconnect or "nvlink").format(node=command_line(node.name)),
            )
            return PodEvaluation((check,), nccl=figures)
        down = "; ".join(part for part in (links_down(links), below_max(pcie)) if part)
        return PodEvaluation((_bandwidth(run, figures, target, node, down),), nccl=figures)

    def _run_failed(
        self, text: str, run: NcclRun, outcome: PodOutcome, node: NodeInfo, options: VerifyOptions
    ) -> Check:
        # NCCL prints the cause as the last `NCCL WARN` before the test's failure line (then only
        # `-> N` returns): diagnosed first, so an earlier warning it survived does not name it.
        nearest = "\n".join((*run.warnings[-1:], *run.failures))
        found = (
            self.diagnose_output(nearest, node, options) if run.failures else None
        ) or self.diagnose_output(text, node, options)
        first = next(iter(run.failures), "") or next(
            (line.strip() for line in text.splitlines() if line.strip()), outcome.reason or outcome.state
        )
        message = f"all_reduce_perf exited {outcome.exit_code} before its summary: {first}"
        if found is None:
            return failed(CHECK_ID, message[:300], self.logs_hint(outcome, options))
        return failed(CHECK_ID, f"{message[:240]} — {found.cause}", found.hint, found.signature_id)


def _bandwidth(run: NcclRun, figures: NcclFigures, target: Target, node: NodeInfo, down: str = "") -> Check:
    """Pass at the target's minimum; below it, or ring where NVLS was due, fail with the figures
    and what `nvidia-smi nvlink -s` says is down (`down`, "" when nothing)."""
    size = _size(figures.size_bytes)
    measured = f"all-reduce bus bandwidth {run.busbw_gbps:.1f} GB/s at {size} on {figures.gpus} GPUs"
    if target.minimum_gbps is None:
        return warned(
            CHECK_ID,
            f"{measured}, not judged: {target.why_none}",
            f"pass --min-busbw GBPS (e.g. {PASS_FRACTION:.0%} of a healthy node's figure), or label the node "
            f"`{command_line('kubectl', 'label', 'node', node.name, INTERCONNECT_LABEL + '=nvswitch')}` "
            "(nvswitch|nvlink|pcie)",
        )
    expected = (
        f"expected {target.expected_gbps:g} GB/s ({target.source}), pass at >= {target.minimum_gbps:g} GB/s"
    )
    hint = low_bandwidth_hint(target.interconnect or "nvlink").format(node=command_line(node.name))
    if target.algorithm == "NVLS" and run.algorithm not in (None, "NVLS"):
        message = f"NCCL ran {run.algorithm} where NVLS (NVLink SHARP) was expected: {measured}; {expected}"
        message += f"; {down}" if down else ""
        return failed(CHECK_ID, message, NVLS_HINT.format(node=command_line(node.name)) + f"; {hint}")
    if (run.busbw_gbps or 0.0) >= target.minimum_gbps and "PCIe link below" in down:
        # fast enough, but a GPU's link trained below what it and its slot can run
        return warned(
            CHECK_ID, f"{measured}; {expected}; {down}", PCIE_HINT.format(node=command_line(node.name))
        )
    if (run.busbw_gbps or 0.0) >= target.minimum_gbps:
        return passed(CHECK_ID, f"{measured}; {expected}")
    message = f"{measured}, below expectation: {expected}" + (f"; {down}" if down else "")
    return failed(CHECK_ID, message, hint)


# Why NCCL set up no NVLS on an NVSwitch node, and how to see it: NCCL_DEBUG=INFO says "NVLS
# multicast support is not available" when the GPUs cannot join a multicast group (Fabric Manager
# or the fabric not ready, an old driver, NVLS turned off by NCCL_NVLS_ENABLE=0).
NVLS_HINT = (
    "NVLink SHARP needs the NVSwitch fabric ready and multicast: on {node} `nvidia-smi -q | grep -A2 "
    "-i fabric` (State: Completed, Status: Success) and `systemctl status nvidia-fabricmanager`; "
    "check that NCCL_NVLS_ENABLE is not 0 in the pod and that the driver is R530 or newer (CUDA 12.1 "
    "multicast); the pod log's `NCCL INFO NVLS multicast support is not available` line confirms it"
)


# A GPU link below its maximum through a run: lspci shows the link the slot trained (LnkSta) against
# what both ends can do (LnkCap).
PCIE_HINT = (
    "on {node}: `sudo lspci -vv -s BUS_ID | grep -e LnkCap -e LnkSta` for the GPU named (LnkSta below "
    "LnkCap: reseat the card or its riser, check the slot's PCIe setting in the BIOS; a width of x8 "
    "in an x16 slot is a connector or riser fault)"
)


def p2p_paths(pairs: dict[tuple[int, int], str]) -> str:
    """How the GPUs reach each other over PCIe, from `nvidia-smi topo -m` ("" without it): through
    PCIe switches (PIX, PXB: P2P stays below the CPU) or through the CPU (PHB, NODE, SYS)."""
    cells = sorted(set(pairs.values()))
    if not cells:
        return ""
    through_cpu = [cell for cell in cells if cell in ("PHB", "NODE", "SYS")]
    path = "through the CPU" if through_cpu else "over PCIe switches"
    return f"`{TOPOLOGY}`: GPU pairs over {', '.join(cells)} (P2P {path})"


NCCL = NcclLevel()
