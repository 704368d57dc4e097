"""What `gpuctl verify` takes and returns: options, checks, per-node results; frozen, renderer-agnostic."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from gpuctl.core.stacks import DEFAULT_STACK, Stack
from gpuctl.defaults import CUDA_SAMPLE_IMAGE, GPUCTL_NAMESPACE, NCCL_TESTS_IMAGE, VERIFY_IMAGE
from gpuctl.errors import ExitCode
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.gate import GateResult
    from gpuctl.kube.gpu_operator import GpuClusterStatus

RUN_LABEL_KEY = "gpuctl.io/verify-run"  # the label every verification pod of one run carries
# The proof levels, shallowest first: each includes the ones before it (`verify --level`).
LEVELS = ("smi", "cuda", "nccl", "fabric")


class CheckStatus(str, Enum):
    """The verdict of one check."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"


@dataclass(frozen=True)
class Check:
    """One check with a stable id (e.g. `nvidia-smi.gpus`), a one-line message and a hint."""

    id: str
    status: CheckStatus
    message: str
    hint: str = ""
    diagnosis: str = ""  # signature id from gpuctl.diagnose, when one matched

    @property
    def failed(self) -> bool:
        return self.status is CheckStatus.FAIL


def passed(id_: str, message: str) -> Check:
    return Check(id_, CheckStatus.PASS, message)


def failed(id_: str, message: str, hint: str = "", diagnosis: str = "") -> Check:
    return Check(id_, CheckStatus.FAIL, message, hint, diagnosis)


def warned(id_: str, message: str, hint: str = "", diagnosis: str = "") -> Check:
    return Check(id_, CheckStatus.WARN, message, hint, diagnosis)


def skipped(id_: str, message: str) -> Check:
    return Check(id_, CheckStatus.SKIP, message)


@dataclass(frozen=True)
class GpuCounts:
    expected: int | None
    capacity: int
    allocatable: int
    seen: int | None
    in_use: int = 0  # held by the node's workloads (pods, or DRA claims): not requested by verify


# The check of what a node's workloads hold of its GPUs, and why a busy node's pod checks are
# skipped (a node whose workloads hold every GPU).
IN_USE_CHECK = "gpu.in-use"
IN_USE_SKIP = f"its workloads hold every GPU (see {IN_USE_CHECK})"


@dataclass(frozen=True)
class Held:
    """What a node's workloads hold of its GPUs, and what a verification pod may still take."""

    devices: int  # held by the node's pods (device plugin) or allocated claims (DRA)
    free: int  # what the verification pod(s) request
    by: tuple[str, ...] = ()  # namespace/name of the pods or claims that hold them

    @property
    def busy(self) -> bool:
        """Every GPU held: no verification pod can run without taking one from a workload."""
        return self.devices > 0 and self.free <= 0


@dataclass(frozen=True)
class SharingSummary:
    """How the node shares its GPUs, and the physical GPUs and MIG devices behind the counts."""

    mode: str = "exclusive"  # exclusive | time-slicing | mps
    replicas: int = 1
    mig_strategy: str = "none"
    physical: int | None = None
    mig_devices: int = 0


@dataclass(frozen=True)
class CudaGpu:
    """One GPU's CUDA check (`nodes[].cuda[]`): its index in the pod, and the error it failed with."""

    index: int
    ok: bool
    error: str | None = None


@dataclass(frozen=True)
class NcclFigures:
    """A node's all-reduce (`nodes[].nccl`): the bus bandwidth at its largest message size, and
    the figure it was held to (None: none known, no --min-busbw)."""

    busbw_gbps: float | None
    expected_gbps: float | None
    size_bytes: int | None
    gpus: int
    algorithm: str | None = None  # what NCCL_DEBUG=INFO says NCCL ran: NVLS | Ring; None: not said
    transport: str | None = None  # its transports, e.g. "P2P/CUMEM", "NET/IB, P2P/CUMEM"
    expected_reason: str | None = None  # why expected_gbps: the node's configuration and its cited row


@dataclass(frozen=True)
class FabricFigures:
    """A node's multi-node all-reduce (`nodes[].fabric`): the group it was judged in, the run that
    decided its verdict (its nodes, bus bandwidth and the figure they were held to), the network
    NCCL used on it and the NICs it found there, and the rounds its group took."""

    group: str  # what its nodes share: GPU model, fabric, NICs x link speed, topology labels
    nodes: tuple[str, ...]  # the nodes of the deciding run
    busbw_gbps: float | None
    expected_gbps: float | None
    transport: str  # as NCCL names it (IB, IBext, Socket, Libfabric), "" when none was seen
    nics_seen: int | None
    nics_expected: int | None
    round: int  # the round whose run decided (1: the whole group's)
    rounds: int  # the rounds its group took


@dataclass(frozen=True)
class GpuDevice:
    """One GPU of a DRA node as the gate saw it (`nodes[].gpu_devices[]`)."""

    index: int | None
    uuid: str
    device: str  # the device's name in its ResourceSlice (gpu-2)
    pool: str
    driver: str
    ok: bool | None  # the CUDA check on it in this run (None: not run on it)
    gated: bool  # a DeviceTaintRule of the gate keeps it from claims (after this run)
    rule: str = ""  # that rule's name


@dataclass(frozen=True)
class NodeResult:
    name: str
    gpus: GpuCounts
    checks: tuple[Check, ...]
    product: str = ""
    driver_version: str = ""
    sharing: SharingSummary = field(default_factory=SharingSummary)
    pod_seconds: float | None = None  # the node's verification pod, create request to end
    gpu_allocation: Stack = DEFAULT_STACK  # how the node gives pods its GPUs (registry.ALLOCATIONS)
    level: str = "smi"  # the proof level it was held to (--level)
    cuda: tuple[CudaGpu, ...] | None = None  # --level cuda and deeper: each GPU's CUDA check, once run
    nccl: NcclFigures | None = None  # --level nccl: its all-reduce, once run
    fabric: FabricFigures | None = None  # --level fabric: its multi-node all-reduce, once run
    # (device, taint and its source) of the GPUs a device taint keeps from claims (DRA nodes)
    device_taints: tuple[tuple[str, str], ...] = ()
    busy: bool = False  # its workloads held every GPU: no verification pod ran (see gpu.in-use)
    # `verify --gate` on a DRA node: each GPU, its CUDA verdict and whether the gate keeps it out
    gpu_devices: tuple[GpuDevice, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(check.failed for check in self.checks)

    # Whether it is proven, busy or failed: gpuctl.core.proof.verdict, the one rule.

    @property
    def first_problem(self) -> Check | None:
        """The first failing check, else the first warning: what a person should read first."""
        for wanted in (CheckStatus.FAIL, CheckStatus.WARN):
            for check in self.checks:
                if check.status is wanted:
                    return check
        return None


@dataclass(frozen=True)
class RunFacts:
    """What one run did, besides checking: its id, the pods it created and kept, its wall time."""

    run_id: str
    pods_created: int
    duration_s: float
    kept_pods: tuple[str, ...] = ()


@dataclass(frozen=True)
class OperatorView:
    """What the GPU Operator says: its namespace, each node's validator state, its policies."""

    namespace: str
    validators: tuple[tuple[str, str], ...]  # node → ready | absent | waiting: <validation> | phase
    cluster_policies: tuple[tuple[str, str], ...]  # ClusterPolicy → status.state
    gpu_clusters: tuple[GpuClusterStatus, ...] = ()  # its GPUCluster (DRA) mode, 26.7+

    def state_of(self, node: str) -> str:
        return dict(self.validators).get(node, "absent")

    @property
    def mode(self) -> str:
        """ClusterPolicy, GPUCluster, or `both` (a conflict both of the Operator's controllers refuse)."""
        if self.gpu_clusters and self.cluster_policies:
            return "both"
        return "GPUCluster" if self.gpu_clusters else "ClusterPolicy"


@dataclass(frozen=True)
class VerifyResult:
    nodes: tuple[NodeResult, ...]
    cluster_checks: tuple[Check, ...]
    run_id: str
    namespace: str
    pods_created: int = 0
    duration_s: float = 0.0
    kept_pods: tuple[str, ...] = ()  # --keep-pods: the verification pods left in `namespace`
    operator: OperatorView | None = None  # the GPU Operator's view, on an Operator-managed cluster
    # what a kept run leaves behind, as kubectl names the kinds (DRA nodes: the claim template too)
    kept_kinds: tuple[str, ...] = ("pods",)
    gate: GateResult | None = None  # --gate: what the gate did after the verdict

    @property
    def cleanup_command(self) -> str:
        """The command that removes the kept pods, and on DRA nodes the run's claim template
        (their claims go with the pods), ("" when none were kept)."""
        if not self.kept_pods:
            return ""
        return command_line(
            "kubectl",
            "-n",
            self.namespace,
            "delete",
            ",".join(self.kept_kinds),
            "-l",
            f"{RUN_LABEL_KEY}={self.run_id}",
        )

    @property
    def ok(self) -> bool:
        checks_ok = not any(check.failed for check in self.cluster_checks)
        return all(node.ok for node in self.nodes) and checks_ok and (self.gate is None or self.gate.ok)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.OK if self.ok else ExitCode.CHECK_FAILED


@dataclass(frozen=True)
class Toleration:
    key: str
    operator: str  # Equal | Exists
    value: str
    effect: str  # "" = all effects

    def as_dict(self) -> dict[str, str]:
        data = {"key": self.key, "operator": self.operator}
        if self.operator == "Equal":
            data["value"] = self.value
        if self.effect:
            data["effect"] = self.effect
        return data


@dataclass(frozen=True)
class Expectations:
    """What the user says the cluster should have (`--expect-nodes`, `--expect-gpus`)."""

    node_patterns: tuple[str, ...] = ()
    gpus_default: int | None = None
    gpus_by_pattern: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PodWorkload:
    """What a deeper level's verification pod runs instead of nvidia-smi (None in VerifyOptions:
    nvidia-smi). `level` tells its pods' names apart from the node's nvidia-smi pod's."""

    level: str
    container: str
    image: str
    command: tuple[str, ...]
    memory_shm: bool = False  # a memory-backed /dev/shm (NCCL moves data between GPUs through it)


@dataclass(frozen=True)
class ProofOptions:
    """How deep verify proves each node (`--level`, `--cuda-image`, `--nccl-image`, `--min-busbw`)."""

    level: str = "smi"
    cuda_image: str = CUDA_SAMPLE_IMAGE
    nccl_image: str = NCCL_TESTS_IMAGE
    min_busbw_gbps: float | None = None  # replaces the expected all-reduce figure
    # --level fabric: extended resources each worker pod requests (`--fabric-resource NAME=COUNT`:
    # rdma/ib=1, vpc.amazonaws.com/efa=4), the host's network namespace (`--fabric-host-network`)
    # and the IPC_LOCK capability RDMA memory registration may need (`--fabric-ipc-lock`).
    fabric_resources: tuple[tuple[str, int], ...] = ()
    fabric_host_network: bool = False
    fabric_ipc_lock: bool = False


@dataclass(frozen=True)
class VerifyOptions:
    expectations: Expectations = field(default_factory=Expectations)
    namespace: str = GPUCTL_NAMESPACE
    image: str = VERIFY_IMAGE
    image_pull_secret: str | None = None
    runtime_class: str | None = None
    timeout_s: float = 300.0
    keep_pods: bool = False
    concurrency: int = 32
    run_pods: bool = True
    allow_empty: bool = False
    tolerations: tuple[Toleration, ...] = ()
    proof: ProofOptions = field(default_factory=ProofOptions)
    workload: PodWorkload | None = None  # set per round of a deeper level (levels/rounds.py)


@dataclass(frozen=True)
class PodEvaluation:
    """What one verification pod proved: its checks, and the GPUs, product and driver it saw."""

    checks: tuple[Check, ...]
    seen: int | None = None
    product: str = ""
    driver_version: str = ""
    uuids: tuple[str, ...] = ()  # the GPUs nvidia-smi listed
    mig_devices: int = 0  # MIG devices `nvidia-smi -L` listed
    # Seconds from the pod's create request to its end (the longest of the node's pods), None
    # when no pod ran: JUnit's testcase time.
    pod_seconds: float | None = None
    cuda: tuple[CudaGpu, ...] | None = None  # a CUDA check pod's GPUs
    nccl: NcclFigures | None = None  # an all-reduce pod's figures
    fabric: FabricFigures | None = None  # a multi-node all-reduce's figures for the node
