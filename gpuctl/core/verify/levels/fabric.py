"""`--level fabric`: all-reduce across nodes over the network, after the node-level levels.

Nodes that should perform alike (same GPU model, fabric, NIC count and link speed, topology
labels: gpuctl.fabric_expectations.group_key) form a group; each group runs one multi-node
all-reduce (fabric_launch.py), judged against NIC count x per-NIC figure and against the network
NCCL chose on each node. A node whose ranks fell back to TCP sockets where the node has an RDMA
fabric, or found fewer NICs than it has, is named by its own evidence; a group that falls short
with nobody named is split until the node that drags it down is found (fabric_bisect.py). Only
the nodes named fail `fabric.all-reduce`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuctl.core.verify.fabric_bisect import Decision, GroupBisection, RunVerdict
from gpuctl.core.verify.fabric_launch import FabricLauncher, RunOutput
from gpuctl.core.verify.fabric_mpijob import MpiJobLauncher
from gpuctl.core.verify.model import Check, CheckStatus, FabricFigures, PodEvaluation, passed
from gpuctl.fabric_expectations import (
    FABRIC_LABEL,
    LINK_GBPS_LABEL,
    NICS_LABEL,
    RDMA_NETWORKS,
    FabricExpectation,
    NodeFabric,
    expected_fabric_busbw,
    group_key,
    node_fabric,
)
from gpuctl.fabric_nccl import HostNet, host_networks
from gpuctl.kube.fabric_objects import mpijobs_served
from gpuctl.nccl_tests import parse_all_reduce
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.verify.model import VerifyOptions
    from gpuctl.core.verify.progress import PodProgress
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.pods import PodBatch

CHECK_ID = "fabric.all-reduce"
FABRIC_NAMES = {"ib": "InfiniBand", "roce": "RoCE", "efa": "EFA", "none": "no RDMA fabric"}
SOCKET_CAUSES = (
    "the pod sees no RDMA device (request the network resource with --fabric-resource, e.g. "
    "rdma/ib=1 or vpc.amazonaws.com/efa=4), GPUDirect RDMA is off (nvidia-peermem not loaded, no "
    "dmabuf), memlock is limited (--fabric-ipc-lock; `ulimit -l` in the pod), or "
    "NCCL_SOCKET_IFNAME/NCCL_IB_HCA select the wrong interface"
)


@dataclass(frozen=True)
class Group:
    """Alike nodes, the figure their runs are held to, and each node's GPUs in a worker."""

    key: str
    nodes: tuple[NodeInfo, ...]
    gpus: dict[str, int]
    expectation: FabricExpectation | None


def describe_key(key: tuple[str, ...], gpus: int) -> str:
    product, fabric, nics, link, *topology = key
    network = f"{fabric} {nics}x{link}G" if fabric and fabric != "none" else fabric or "no fabric labels"
    return ", ".join([f"{gpus} x {product or 'unknown GPU'}", network, *topology])


class FabricRounds:
    """Run the fabric level on `nodes` (those that passed every earlier level)."""

    def __init__(
        self,
        api_client: ApiClient,
        batch: PodBatch,
        options: VerifyOptions,
        run_id: str,
        progress: PodProgress | None = None,
    ) -> None:
        self.options = options
        # MPI Operator's MPIJob where its CRD is served (the field's way), else gpuctl's own launcher
        self.launcher: FabricLauncher | MpiJobLauncher = (
            MpiJobLauncher(api_client, options, run_id)
            if mpijobs_served(api_client)
            else FabricLauncher(api_client, batch, options, run_id, progress)
        )
        self.rounds = 0

    def run(self, nodes: list[NodeInfo], gpus_of: dict[str, int]) -> dict[str, PodEvaluation]:
        results: dict[str, PodEvaluation] = {}
        groups = self._groups(nodes, gpus_of, results)
        bisections = {group.key: GroupBisection(tuple(node.name for node in group.nodes)) for group in groups}
        by_name = {node.name: node for node in nodes}
        try:
            while True:
                planned = [(group, run) for group in groups for run in bisections[group.key].next_runs()]
                if not planned:
                    break
                self.rounds += 1
                runs = [tuple((by_name[name], group.gpus[name]) for name in run) for group, run in planned]
                outputs = self.launcher.run_round(self.rounds, runs)
                for (group, run), output in zip(planned, outputs, strict=True):
                    verdict = judge_run(output, group, self.options)
                    bisections[group.key].record(run, verdict, self.rounds)
        finally:
            self.launcher.clean_up()
        for group in groups:
            bisection = bisections[group.key]
            for name, decision in bisection.decided.items():
                results[name] = _evaluation(decision, by_name[name], group, bisection.rounds)
        return results

    def _groups(
        self, nodes: list[NodeInfo], gpus_of: dict[str, int], results: dict[str, PodEvaluation]
    ) -> list[Group]:
        grouped: dict[tuple[tuple[str, ...], int], list[NodeInfo]] = {}
        for node in nodes:
            if node_fabric(node.labels).fabric == "none":
                results[node.name] = PodEvaluation(
                    (passed(CHECK_ID, "not applicable: the node has no RDMA fabric (gpuctl.io/fabric=none)"),)
                )
                continue
            # the GPUs each worker takes too: an MPIJob's workers share one template
            key = (group_key(node.labels, node.product_label), gpus_of[node.name])
            grouped.setdefault(key, []).append(node)
        return [
            Group(
                describe_key(*key),
                tuple(members),
                {node.name: gpus_of[node.name] for node in members},
                _group_expectation(members),
            )
            for key, members in sorted(grouped.items())
        ]


def _group_expectation(members: list[NodeInfo]) -> FabricExpectation | None:
    """The smallest figure of the group's nodes (None: one of them has none)."""
    found = [expected_fabric_busbw(node_fabric(node.labels)) for node in members]
    known = [expectation for expectation in found if expectation is not None]
    if len(known) < len(found):
        return None
    return min(known, key=lambda expectation: expectation.busbw_gbps)


def _evaluation(decision: Decision, node: NodeInfo, group: Group, rounds: int) -> PodEvaluation:
    status = CheckStatus(decision.status)
    check = Check(CHECK_ID, status, decision.message, decision.hint)
    verdict = decision.verdict
    fabric = node_fabric(node.labels)
    host = verdict_host(decision, node)
    figures = FabricFigures(
        group=group.key,
        nodes=decision.run,
        busbw_gbps=verdict.busbw_gbps if isinstance(verdict, JudgedRun) else None,
        expected_gbps=group.expectation.busbw_gbps if group.expectation is not None else None,
        transport=host.network if host is not None else "",
        nics_seen=host.rdma_nics if host is not None and host.networks else None,
        nics_expected=fabric.nics or None,
        round=decision.round,
        rounds=rounds,
    )
    return PodEvaluation((check,), fabric=figures)


@dataclass(frozen=True)
class JudgedRun(RunVerdict):
    """A run's verdict with what gpuctl read of it: its bus bandwidth, each node's network."""

    busbw_gbps: float | None = None
    hosts: tuple[tuple[str, HostNet], ...] = ()  # node name → what NCCL said there


def verdict_host(decision: Decision, node: NodeInfo) -> HostNet | None:
    verdict = decision.verdict
    if not isinstance(verdict, JudgedRun):
        return None
    return dict(verdict.hosts).get(node.name)


def judge_run(output: RunOutput, group: Group, options: VerifyOptions) -> JudgedRun:
    """Name the nodes the output blames, and say whether the run fell short of its figure."""
    named = {
        node: _worker_failed(outcome.state, outcome.message or outcome.reason, node, options)
        for node, outcome in output.worker_failures.items()
    }
    launcher = output.launcher
    nodes = len(output.nodes)
    if launcher is None:
        return JudgedRun(named, True, f"the {nodes}-node all-reduce could not start")
    if launcher.state == "timeout":  # every node of the run is unproven; a rerun would wait as long
        late = f"the {nodes}-node all-reduce did not finish before --timeout ran out"
        hint = "rerun with a larger --timeout, and --keep-pods to read the launcher's log"
        for node in output.nodes:
            named.setdefault(node.name, (late, hint))
        return JudgedRun(named, True, late)
    log = launcher.log or launcher.message
    networks = host_networks(log)
    seen = [(node, networks[host]) for host, node in output.hostnames.items() if host in networks]
    hosts = tuple((node.name, host) for node, host in seen)
    for node, host in seen:
        blame = _own_evidence(host, node_fabric(node.labels), node.name)
        if blame is not None:
            named.setdefault(node.name, blame)
    run = parse_all_reduce(log)
    busbw = run.busbw_gbps
    if not run.completed or launcher.exit_code not in (0, None) or busbw is None:
        first = next(iter(run.failures), "") or _first_line(log) or launcher.reason or launcher.state
        measured = f"the {nodes}-node all-reduce failed (launcher {launcher.state}): {first[:200]}"
        return JudgedRun(named, True, measured, _logs_hint(launcher.name, options), hosts=hosts)
    size = run.largest.size_bytes if run.largest is not None else 0
    measured = f"{nodes}-node all-reduce bus bandwidth {busbw:.1f} GB/s at {size / 2**30:g} GiB"
    expectation = group.expectation
    if expectation is None:
        why = f"not judged: the nodes lack the labels {FABRIC_LABEL}, {NICS_LABEL} and {LINK_GBPS_LABEL}"
        return JudgedRun(
            named, False, f"{measured}, {why}", pass_status="warn", busbw_gbps=busbw, hosts=hosts
        )
    expected, minimum = expectation.busbw_gbps, expectation.minimum_gbps
    measured += f"; expected {expected:g} GB/s ({expectation.source}), pass at >= {minimum:g} GB/s"
    slow = busbw < expectation.minimum_gbps
    for node, host in seen if slow else ():
        if host.gdr is False and node.name not in named and host.network != "Socket":
            named[node.name] = _no_gdr(node.name, measured)
    return JudgedRun(named, slow, measured, _slow_hint(), busbw_gbps=busbw, hosts=hosts)


def _no_gdr(node: str, measured: str) -> tuple[str, str]:
    """A node whose channels went over the network without GPUDirect RDMA, in a run that fell short."""
    message = (
        "GPUDirect RDMA is off on this node: NCCL's channels go via NET without /GDRDMA, so every "
        f"transfer is staged through host memory ({measured})"
    )
    hint = (
        f"on {command_line(node)}: `lsmod | grep nvidia_peermem` (load it: `modprobe nvidia-peermem`, "
        "or the GPU Operator's driver.rdma.enabled), or dmabuf (kernel 5.12+ with NVIDIA's open kernel "
        "modules; `gpuctl preflight`'s gpudirect-rdma finding says which); NCCL_NET_GDR_LEVEL must not be 0"
    )
    return message, hint


def _own_evidence(host: HostNet, fabric: NodeFabric, node: str) -> tuple[str, str] | None:
    """What NCCL's lines from a node say is wrong there: TCP sockets where it has an RDMA
    fabric, or fewer NICs than it has."""
    rdma = RDMA_NETWORKS.get(fabric.fabric or "none", ())
    name = FABRIC_NAMES.get(fabric.fabric or "", "an RDMA fabric")
    used = host.network
    if rdma and used and not any(network in rdma for network in map(str.strip, used.split("/"))):
        cause = "the pod sees no RDMA device (`NET/IB : No device found`)" if host.no_rdma_device else ""
        message = f"NCCL fell back to TCP sockets (NET/{used}) on a node with {name}: " + (
            cause or f"one of: {SOCKET_CAUSES}"
        )
        hint = (
            f"on {command_line(node)}: `ibv_devinfo` (RDMA devices), `lsmod | grep nvidia_peermem`, "
            f"`ulimit -l`; `{command_line('kubectl', 'describe', 'node', node)}` for the network resource "
            "(e.g. rdma/ib), then rerun with --fabric-resource NAME=COUNT; `gpuctl preflight` checks the "
            "host's side (findings rdma-devices, gpudirect-rdma, memlock)"
        )
        return message, hint
    if rdma and fabric.nics and host.networks and host.rdma_nics < fabric.nics:
        message = (
            f"NCCL found {host.rdma_nics} of the node's {fabric.nics} {name} NICs active "
            f"(NCCL listed {host.rdma_nics}): {fabric.nics - host.rdma_nics} NIC(s) down"
        )
        hint = (
            f"on {command_line(node)}: `ibstat` or `ibv_devinfo` (ports not PORT_ACTIVE: reseat or replace "
            "the cable or transceiver, check the switch port), `ibdev2netdev`; then rerun `gpuctl verify "
            "--level fabric`"
        )
        return message, hint
    return None


def _worker_failed(state: str, message: str, node: str, options: VerifyOptions) -> tuple[str, str]:
    if state == "timeout":
        late = "its all-reduce worker pod did not run before --timeout ran out"
        hint = (
            "rerun with a larger --timeout and --keep-pods to read the pods' events; where MPIJobs "
            "are served, check that the MPI Operator runs (it makes the pods)"
        )
        return late, hint
    describe = command_line("kubectl", "describe", "node", node)
    hint = (
        f"`{describe}`: a network resource of --fabric-resource the node does not offer leaves the "
        f"worker unschedulable; the worker's events: rerun with --keep-pods in namespace {options.namespace}"
    )
    return f"its all-reduce worker pod did not run ({state}): {message or 'no message'}"[:300], hint


def _slow_hint() -> str:
    return (
        "check the node's links: `ibstatus` (rate: a 400G port that trained at 100G), `mlxlink -d DEV` "
        "(errors, FEC), `ibstat`; the switch port and cable; then rerun `gpuctl verify --level fabric`"
    )


def _logs_hint(pod: str, options: VerifyOptions) -> str:
    return f"`{command_line('kubectl', '-n', options.namespace, 'logs', pod)}` (rerun with --keep-pods)"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
