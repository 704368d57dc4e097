"""The scenario file: what the simulated cluster looks like and which failures it injects.

The contract (field names and meanings) is documented in docs/scenario.md; every error names the
file and the field path, e.g. ``scenario.yaml: nodes[0].gpus: must be >= 0``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from gpuctl.bounds import DAY_S
from gpuctl.errors import ConfigError
from gpuctl.input_files import read_input_file

HINT = "fix the scenario file (its format is in docs/scenario.md), then rerun `gpuctl sim up`"


class Fields:
    """Typed access to one mapping of the scenario file, every error naming `source: path`."""

    hint = HINT  # the next step named in every error

    def __init__(self, data: Any, path: str, source: str, allowed: set[str]) -> None:
        self.source = source
        self.path = path
        if not isinstance(data, dict):
            self.fail(path or "(top level)", f"must be a mapping, got {type_name(data)}")
        unknown = sorted(str(key) for key in data if key not in allowed)
        if unknown:
            self.fail(self.at(unknown[0]), f"unknown field (known: {', '.join(sorted(allowed))})")
        self.data: dict[str, Any] = data

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, where: str, problem: str) -> None:
        raise ConfigError(f"{self.source}: {where}: {problem}", hint=self.hint)

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def integer(self, key: str, default: int, minimum: int = 0) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(self.at(key), f"must be an integer, got {type_name(value)}")
        if value < minimum:
            self.fail(self.at(key), f"must be >= {minimum}")
        return int(value)

    def number(self, key: str, default: float, maximum: float = DAY_S) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(self.at(key), f"must be a number, got {type_name(value)}")
        if value < 0:
            self.fail(self.at(key), "must be >= 0")
        if not value <= maximum:  # also YAML's .nan and .inf, which are floats too
            self.fail(self.at(key), f"must be <= {maximum:g}, got {value}")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.fail(self.at(key), f"must be true or false, got {type_name(value)}")
        return bool(value)

    def string(self, key: str, default: str) -> str:
        value = self.data.get(key, default)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key != "name":
            value = str(value)  # driverVersion: 550.90 unquoted is still meant as text
        if not isinstance(value, str) or not value:
            self.fail(self.at(key), f"must be a non-empty string, got {type_name(value)}")
        return str(value)

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.data.get(key, default)
        if value not in choices:
            self.fail(self.at(key), f"must be one of {', '.join(choices)}, got {value!r}")
        return str(value)

    def string_list(self, key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = self.data.get(key, list(default))
        if not isinstance(value, list):
            self.fail(self.at(key), f"must be a list, got {type_name(value)}")
        for index, item in enumerate(value):
            if not isinstance(item, str) or not item:
                self.fail(f"{self.at(key)}[{index}]", "must be a non-empty string")
        return tuple(value)


def type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "an integer"}
    if value is None:
        return "nothing (null)"
    return names.get(type(value), type(value).__name__)


DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
VERSION = re.compile(r"^v\d+\.\d+\.\d+$")
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
DEFAULT_IMAGE_PULL_FAILURES = ("*does-not-exist*",)
GPU_ALLOCATIONS = ("device-plugin", "dra")
EVENT_TTL_SECONDS = 3600.0  # kube-apiserver's --event-ttl default (1 h)
IDLE_TIMEOUT_SECONDS = 90.0  # kube-apiserver's http.Server IdleTimeout


@dataclass(frozen=True)
class Taint:
    key: str
    effect: str
    value: str = ""

    def to_api(self) -> dict[str, str]:
        taint = {"key": self.key, "effect": self.effect}
        if self.value:
            taint["value"] = self.value
        return taint


@dataclass(frozen=True)
class NvidiaSmiOverride:
    stdout: str
    exit_code: int = 0


@dataclass(frozen=True)
class ContainerFailure:
    """`nodes[].containerFailure`: the kubelet cannot create or start containers of pods on the node
    (the waiting reason and the runtime's message, as `kubectl describe pod` shows them)."""

    reason: str  # one of CONTAINER_FAILURE_REASONS
    message: str


@dataclass(frozen=True)
class WorkloadOverrides:
    """`nodes[].workloads`: what the deeper proof levels' programs print on the node instead."""

    cuda: NvidiaSmiOverride | None = None  # the CUDA check (vectorAdd on every GPU)
    nccl: NvidiaSmiOverride | None = None  # all_reduce_perf


@dataclass(frozen=True)
class NetworkSpec:
    """`network`: the fabric that joins GPU nodes (ib | roce | efa | none; "": not said), its NICs
    per node and each NIC's link speed in Gb/s."""

    fabric: str = ""
    nics_per_node: int = 0
    link_gbps: int = 0
    # Extended resources the node offers for its NICs (`resources`, e.g. {rdma/ib: 1} from a network
    # operator's RDMA device plugin): a pod that requests none of them sees no RDMA device.
    resources: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class GpuHealthEvent:
    """`nodes[].gpuHealth[]`: from `after_seconds` after the sim started, GPU `gpu` has `fault`."""

    after_seconds: float
    gpu: int
    fault: str  # uncorrectableEcc | xid | none
    xid: int = 79  # fault xid: the Xid the DRA driver's health check reports (its device taint)


@dataclass(frozen=True)
class NodeSpec:
    """One simulated node, after `{i}` expansion."""

    name: str
    gpus: int = 0
    gpu_product: str = "NVIDIA-H100-80GB-HBM3"
    gpu_memory_mib: int = 81559
    driver_version: str = "550.90.07"
    driver: str = "installed"  # installed | missing | mismatch
    toolkit: str = "configured"  # configured | missing | unconfigured
    unhealthy_gpus: int = 0
    ready: bool = True
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    nvidia_smi: NvidiaSmiOverride | None = None
    cpu: str = "32"
    memory: str = "263921228Ki"
    # MIG profile → instances per GPU (`nodes[].mig`); empty: MIG disabled on the node's GPUs.
    mig: tuple[tuple[str, int], ...] = ()
    # How the node's GPUs reach pods: the device plugin (nvidia.com/gpu) or DRA (ResourceSlices).
    gpu_allocation: str = "device-plugin"
    # Node Feature Discovery has labelled the node (`nodes[].nfd`); false: no NFD labels.
    nfd: bool = True
    # How the GPUs are joined (`nodes[].interconnect`: nvswitch | nvlink | pcie; "": not said, no
    # gpuctl.io/interconnect label), and the faults the CUDA check and the all-reduce meet.
    interconnect: str = ""
    fabric_manager: str = "running"  # running | stopped (`host.fabricManager`; matters with nvswitch)
    nvlink_down: int = 0  # GPUs with inactive NVLinks: the all-reduce runs at the PCIe figure
    ecc_errors: int = 0  # GPUs with an uncorrectable ECC error: vectorAdd fails on them
    # `nvls: false`: NVLink SHARP unavailable (no multicast), so NCCL runs ring at the ring figure;
    # `nvlinks: N`: active NVLinks per GPU (None: all), the all-reduce lowered in proportion.
    nvls: bool = True
    nvlinks: int | None = None
    # The GPUs' PCIe links: `pcieLink: {gen, width}` the most they and their slots can run (None:
    # the GPU model's own, e.g. Gen4 x16 for an L40S); `pcieDegraded: N`: the first N GPUs' links
    # trained below that, at `pcieDegradedLink: {gen, width}` (default: the same generation at half
    # the width). A ring all-reduce over PCIe runs at its slowest link.
    pcie_link: tuple[int, int] | None = None
    pcie_degraded: int = 0
    pcie_degraded_link: tuple[int, int] | None = None
    workloads: WorkloadOverrides = WorkloadOverrides()
    container_failure: ContainerFailure | None = None
    # `gpuHealth`: device health changes over time (GpuHealthEvent), and the GPUs they leave with
    # an uncorrectable ECC error at the moment the node's spec is read (ClusterState.health_at)
    gpu_health: tuple[GpuHealthEvent, ...] = ()
    ecc_gpus: frozenset[int] = frozenset()
    xid_gpus: tuple[tuple[int, int], ...] = ()  # (GPU, Xid) the DRA driver taints, as of that moment
    # The network between nodes (`network`, top level or per node: fabric, nicsPerNode, linkGbps;
    # fabric "": not said, no gpuctl.io/fabric labels) and its faults in a multi-node all-reduce:
    # NICs down (NCCL lists only the active ones), NICs whose links trained slower (silent), and
    # NCCL falling back to TCP sockets (`ncclTransport: socket`).
    network: NetworkSpec = NetworkSpec()
    nics_down: int = 0
    nics_slow: int = 0
    nccl_transport: str = "auto"  # auto | socket
    gpu_direct_rdma: bool = True  # false: no nvidia-peermem/dmabuf, NCCL stages through host memory
    # `nodes[].draSlices`: published | never (the DRA kubelet plugin runs and is ready but its
    # ResourceSlice never reaches the API server, as when it cannot reach it).
    dra_slices: str = "published"

    @property
    def host_can_advertise(self) -> bool:
        """A device plugin on this host can load NVML and register the GPUs with the kubelet.

        With `driver: mismatch` the plugin started before the driver upgrade, and with `toolkit:
        unconfigured` before containerd lost its nvidia runtime, so it still advertises;
        containers started now fail.
        """
        return self.gpus > 0 and self.driver != "missing" and self.toolkit != "missing"


@dataclass(frozen=True)
class Scenario:
    nodes: tuple[NodeSpec, ...] = ()
    kubernetes_version: str = "v1.31.2"
    pod_start_seconds: float = 0.5
    pod_run_seconds: float = 0.1
    device_plugin: str = "absent"  # absent | installed
    image_pull_failures: tuple[str, ...] = DEFAULT_IMAGE_PULL_FAILURES
    forbidden: tuple[str, ...] = ()  # "verb resource" pairs answered with 403
    # `rbac`: allow-all (every authenticated request is allowed, as before) | enforce (Roles,
    # ClusterRoles and their bindings in the store decide, as the API server's RBAC authorizer).
    rbac: str = "allow-all"
    source: str = "scenario"
    extra_namespaces: tuple[str, ...] = field(default=())
    gpu_allocation: str = "device-plugin"  # the nodes' default (`gpuAllocation`)
    dra_driver: str = "installed"  # installed | absent: the DRA driver, where a node uses DRA
    # `draApi`: the API serves resource.k8s.io though every node starts on the device plugin (a
    # cluster about to move its GPUs to DRA). Default: as kube-apiserver does, from 1.34 on, where
    # resource.k8s.io/v1 (DRA GA) is served by default.
    dra_api: bool = False
    # Seconds a list's continue token lives (`listTokenTTLSeconds`) and a watch stays open, which
    # is also the compaction interval (`watchTTLSeconds`); 0: for ever, as before.
    list_token_ttl_seconds: float = 0.0
    watch_ttl_seconds: float = 0.0
    # Seconds an Event lives after its last write (`eventTTLSeconds`, kube-apiserver's --event-ttl;
    # 0: for ever) and a kept-alive connection may wait for its next request (`idleTimeoutSeconds`,
    # kube-apiserver's 90 s; 0: for ever).
    event_ttl_seconds: float = EVENT_TTL_SECONDS
    idle_timeout_seconds: float = IDLE_TIMEOUT_SECONDS

    @cached_property
    def uses_dra(self) -> bool:
        """Some node gets its GPUs through DRA: the API serves resource.k8s.io (cached: the scenario
        is frozen, and the kubelet and scheduler ask on every pod of a 5,000-node cluster)."""
        return self.dra_api or self.has_dra_nodes

    @cached_property
    def has_dra_nodes(self) -> bool:
        """Some node starts with its GPUs on DRA (where `draDriver: installed` puts the driver)."""
        return any(node.gpu_allocation == "dra" for node in self.nodes)

    @cached_property
    def dra_137(self) -> bool:
        """`kubernetesVersion: v1.37.x` or later on a DRA cluster: DRAExtendedResource and
        DRADeviceTaints are GA (nvidia.com/gpu requests served through claims the scheduler
        creates; DeviceTaintRules served); older versions keep the earlier behaviour."""
        major, minor = (int(part) for part in self.kubernetes_version[1:].split(".")[:2])
        return self.uses_dra and (major, minor) >= (1, 37)

    # `gpuOperator`: the GPU Operator is installed at start, with this ClusterPolicy spec (the
    # chart's values keys: driver.enabled, toolkit.enabled ...); None: not installed.
    gpu_operator: dict[str, Any] | None = field(default=None, hash=False)
    # `mpiOperator`: installed (Kubeflow's MPI Operator runs: MPIJobs are served and played) | absent
    mpi_operator: str = "absent"


_TOP_KEYS = {
    "kubernetesVersion",
    "podStartSeconds",
    "podRunSeconds",
    "devicePlugin",
    "nodes",
    "imagePullFailures",
    "forbidden",
    "rbac",
    "namespaces",
    "gpuAllocation",
    "draDriver",
    "draApi",
    "gpuOperator",
    "listTokenTTLSeconds",
    "watchTTLSeconds",
    "eventTTLSeconds",
    "idleTimeoutSeconds",
    "network",
    "mpiOperator",
}
_NODE_KEYS = {
    "name",
    "count",
    "gpus",
    "gpuProduct",
    "gpuMemoryMiB",
    "driverVersion",
    "host",
    "unhealthyGpus",
    "ready",
    "unschedulable",
    "taints",
    "labels",
    "nvidiaSmi",
    "cpu",
    "memory",
    "mig",
    "gpuAllocation",
    "nfd",
    "interconnect",
    "nvlinkDown",
    "eccErrors",
    "nvls",
    "nvlinks",
    "pcieLink",
    "pcieDegraded",
    "pcieDegradedLink",
    "workloads",
    "containerFailure",
    "gpuHealth",
    "network",
    "nicsDown",
    "nicsSlow",
    "ncclTransport",
    "gpuDirectRdma",
    "draSlices",
}
INTERCONNECTS = ("nvswitch", "nvlink", "pcie")
MAX_NVLINKS = 18  # NVLinks per GPU at most (NVLink4 on H100/H200, NVLink5 on B200): `nvlinks`
RBAC_MODES = ("allow-all", "enforce")


MAX_NODES = 10_000  # in all; a simulated node costs ~50 KiB, and bench/ goes to 5,000
FORBIDDEN_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
_RESOURCE = re.compile(r"^[a-z][a-z0-9.-]*(/[a-z]+)?$")


DRA_GA = (1, 34)  # resource.k8s.io/v1 served by default (Kubernetes 1.34: DRA GA)


def _minor_of(version: str) -> tuple[int, int]:
    major, minor = (int(part) for part in version[1:].split(".")[:2])
    return major, minor


def load_scenario(path: Path | str) -> Scenario:
    """Read and validate a scenario file; ConfigError names the file, field path or YAML line."""
    import yaml

    path = Path(path)
    try:
        text = read_input_file(path, "scenario file").decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: scenario file not found", hint=HINT) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read scenario file: {error}", hint=HINT) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(f"{path}:{line}: invalid YAML: {problem}", hint=HINT) from None
    if data is None:
        raise ConfigError(
            f"{path}: empty scenario file (no nodes)",
            hint="describe at least one node, e.g. `nodes: [{name: gpu-0, gpus: 8}]` (docs/scenario.md)",
        )
    return parse_scenario(data, str(path))


def parse_scenario(data: Any, source: str = "scenario") -> Scenario:
    """Validate a scenario mapping (already parsed from YAML/JSON) and expand `{i}` node names."""
    top = Fields(data, "", source, _TOP_KEYS)
    version = top.string("kubernetesVersion", "v1.31.2")
    if not VERSION.match(version):
        top.fail("kubernetesVersion", f"must look like v1.31.2, got {version!r}")
    raw_nodes = data.get("nodes", [])
    if not isinstance(raw_nodes, list):
        top.fail("nodes", f"must be a list, got {type_name(raw_nodes)}")
    nodes: list[NodeSpec] = []
    seen: dict[str, str] = {}
    allocation = top.choice("gpuAllocation", "device-plugin", GPU_ALLOCATIONS)
    network = _parse_network(top, NetworkSpec())
    for index, raw in enumerate(raw_nodes):
        for node in _parse_node_group(raw, f"nodes[{index}]", source, allocation, network=network):
            if node.name in seen:
                top.fail(
                    f"nodes[{index}].name", f"duplicate node name {node.name!r} (also {seen[node.name]})"
                )
            seen[node.name] = f"nodes[{index}]"
            nodes.append(node)
        if len(nodes) > MAX_NODES:
            top.fail(f"nodes[{index}].count", f"more than {MAX_NODES} nodes in all (the limit of the sim)")
    return Scenario(
        nodes=tuple(nodes),
        kubernetes_version=version,
        pod_start_seconds=top.number("podStartSeconds", 0.5),
        pod_run_seconds=top.number("podRunSeconds", 0.1),
        device_plugin=top.choice("devicePlugin", "absent", ("absent", "installed")),
        image_pull_failures=top.string_list("imagePullFailures", DEFAULT_IMAGE_PULL_FAILURES),
        forbidden=_parse_forbidden(top),
        rbac=top.choice("rbac", "allow-all", RBAC_MODES),
        source=source,
        extra_namespaces=top.string_list("namespaces", ()),
        gpu_allocation=allocation,
        dra_driver=top.choice("draDriver", "installed", ("installed", "absent")),
        dra_api=top.boolean("draApi", _minor_of(version) >= DRA_GA),
        gpu_operator=_parse_gpu_operator(top),
        mpi_operator=top.choice("mpiOperator", "absent", ("absent", "installed")),
        list_token_ttl_seconds=top.number("listTokenTTLSeconds", 0.0),
        watch_ttl_seconds=top.number("watchTTLSeconds", 0.0),
        event_ttl_seconds=top.number("eventTTLSeconds", EVENT_TTL_SECONDS),
        idle_timeout_seconds=top.number("idleTimeoutSeconds", IDLE_TIMEOUT_SECONDS),
    )


def _parse_gpu_operator(top: Fields) -> dict[str, Any] | None:
    if "gpuOperator" not in top.data:
        return None
    spec = {} if top.data["gpuOperator"] is None else top.data["gpuOperator"]
    if not isinstance(spec, dict) or not all(isinstance(value, dict) for value in spec.values()):
        top.fail(
            "gpuOperator", "must be a mapping of ClusterPolicy spec sections, like {driver: {enabled: false}}"
        )
    return dict(spec)


def _parse_forbidden(top: Fields) -> tuple[str, ...]:
    entries = top.string_list("forbidden", ())
    for index, entry in enumerate(entries):
        words = entry.split()
        if len(words) != 2:
            top.fail(f"forbidden[{index}]", f"must be 'VERB RESOURCE' like 'list nodes', got {entry!r}")
        if words[0] not in FORBIDDEN_VERBS:
            top.fail(f"forbidden[{index}]", f"verb {words[0]!r} must be one of {', '.join(FORBIDDEN_VERBS)}")
        if not _RESOURCE.match(words[1]):
            top.fail(f"forbidden[{index}]", f"resource {words[1]!r} must be a lower-case plural like 'nodes'")
    return tuple(" ".join(entry.split()) for entry in entries)


def _parse_node_group(
    raw: Any, path: str, source: str, allocation: str, *, network: NetworkSpec | None = None
) -> list[NodeSpec]:
    node = Fields(raw, path, source, _NODE_KEYS)
    if not node.has("name"):
        node.fail(node.at("name"), "required")
    pattern = node.string("name", "")
    count = node.integer("count", 1)
    if count > MAX_NODES:
        node.fail(node.at("count"), f"must be <= {MAX_NODES} (the simulated cluster's limit)")
    if count > 1 and "{i}" not in pattern:
        node.fail(node.at("name"), "must contain {i} when count > 1")
    gpus = node.integer("gpus", 0)
    unhealthy = node.integer("unhealthyGpus", 0)
    if unhealthy > gpus:
        node.fail(node.at("unhealthyGpus"), f"must be <= gpus ({gpus})")
    host = Fields(raw.get("host") or {}, node.at("host"), source, {"driver", "toolkit", "fabricManager"})
    faulty = {key: node.integer(key, 0) for key in ("nvlinkDown", "eccErrors", "pcieDegraded")}
    if node.integer("nvlinks", 0) > MAX_NVLINKS:
        node.fail(node.at("nvlinks"), f"must be <= {MAX_NVLINKS} (the NVLinks of an H100 or B200 GPU)")
    for key, faulty_gpus in faulty.items():
        if faulty_gpus > gpus:
            node.fail(node.at(key), f"must be <= gpus ({gpus})")
    template = NodeSpec(
        name=pattern,
        gpus=gpus,
        gpu_product=node.string("gpuProduct", NodeSpec.gpu_product),
        gpu_memory_mib=node.integer("gpuMemoryMiB", NodeSpec.gpu_memory_mib, minimum=1),
        driver_version=node.string("driverVersion", NodeSpec.driver_version),
        driver=host.choice("driver", "installed", ("installed", "missing", "mismatch")),
        toolkit=host.choice("toolkit", "configured", ("configured", "missing", "unconfigured")),
        unhealthy_gpus=unhealthy,
        ready=node.boolean("ready", True),
        unschedulable=node.boolean("unschedulable", False),
        taints=_parse_taints(node),
        labels=_parse_labels(node),
        nvidia_smi=_parse_nvidia_smi(node, source),
        cpu=node.string("cpu", NodeSpec.cpu),
        memory=node.string("memory", NodeSpec.memory),
        mig=_parse_mig(node),
        gpu_allocation=node.choice("gpuAllocation", allocation, GPU_ALLOCATIONS),
        nfd=node.boolean("nfd", True),
        interconnect=node.choice("interconnect", "", INTERCONNECTS) if node.has("interconnect") else "",
        fabric_manager=host.choice("fabricManager", "running", ("running", "stopped")),
        nvlink_down=faulty["nvlinkDown"],
        ecc_errors=faulty["eccErrors"],
        nvls=node.boolean("nvls", True),
        nvlinks=node.integer("nvlinks", 0) if node.has("nvlinks") else None,
        pcie_link=_pcie_link(node, "pcieLink", source),
        pcie_degraded=faulty["pcieDegraded"],
        pcie_degraded_link=_pcie_link(node, "pcieDegradedLink", source),
        workloads=_parse_workloads(node, source),
        container_failure=_parse_container_failure(node, source),
        gpu_health=_parse_gpu_health(node, source, gpus),
        **_node_network(node, network or NetworkSpec()),
        dra_slices=node.choice("draSlices", "published", ("published", "never")),
    )
    names = [pattern.replace("{i}", str(i)) for i in range(count)]
    for name in names[:1]:
        if not DNS_SUBDOMAIN.match(name):
            node.fail(node.at("name"), f"{name!r} is not a valid node name (lower-case DNS subdomain)")
    return [_with_name(template, name) for name in names]


def _with_name(template: NodeSpec, name: str) -> NodeSpec:
    from dataclasses import replace

    return replace(template, name=name)


def _parse_taints(node: Fields) -> tuple[Taint, ...]:
    raw = node.data.get("taints") or []
    if not isinstance(raw, list):
        node.fail(node.at("taints"), f"must be a list, got {type_name(raw)}")
    taints = []
    for index, item in enumerate(raw):
        taint = Fields(item, f"{node.at('taints')}[{index}]", node.source, {"key", "value", "effect"})
        value = taint.data.get("value", "")
        if not isinstance(value, str):
            taint.fail(taint.at("value"), f"must be a string, got {type_name(value)}")
        taints.append(
            Taint(
                key=taint.string("key", ""),
                effect=taint.choice("effect", "NoSchedule", TAINT_EFFECTS),
                value=value,
            )
        )
    return tuple(taints)


def _parse_labels(node: Fields) -> tuple[tuple[str, str], ...]:
    raw = node.data.get("labels") or {}
    if not isinstance(raw, dict):
        node.fail(node.at("labels"), f"must be a mapping, got {type_name(raw)}")
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            node.fail(f"{node.at('labels')}.{key}", 'keys and values must be strings (quote "true")')
    return tuple(sorted(raw.items()))


MIG_PROFILE = re.compile(r"^[1-7]g\.\d+gb(\+me)?$")
MAX_MIG_INSTANCES = 7  # a GPU has seven compute slices


def _parse_mig(node: Fields) -> tuple[tuple[str, int], ...]:
    raw = node.data.get("mig") or {}
    if not isinstance(raw, dict):
        node.fail(node.at("mig"), f"must be a mapping of MIG profile to instances, got {type_name(raw)}")
    for profile, instances in raw.items():
        where = f"{node.at('mig')}.{profile}"
        if not isinstance(profile, str) or not MIG_PROFILE.match(profile):
            node.fail(where, "not a MIG profile name like 1g.10gb or 3g.40gb")
        if isinstance(instances, bool) or not isinstance(instances, int) or not 0 <= instances <= 7:
            node.fail(where, f"instances per GPU must be an integer from 0 to {MAX_MIG_INSTANCES}")
    return tuple(sorted(raw.items()))


def _parse_workloads(node: Fields, source: str) -> WorkloadOverrides:
    if not node.has("workloads"):
        return WorkloadOverrides()
    workloads = Fields(node.data["workloads"] or {}, node.at("workloads"), source, {"cuda", "nccl"})
    return WorkloadOverrides(
        _parse_nvidia_smi(workloads, source, "cuda"), _parse_nvidia_smi(workloads, source, "nccl")
    )


def _parse_nvidia_smi(node: Fields, source: str, key: str = "nvidiaSmi") -> NvidiaSmiOverride | None:
    """An output override (`nvidiaSmi`, `workloads.cuda`, `workloads.nccl`): stdout and exitCode."""
    if not node.has(key):
        return None
    override = Fields(node.data[key], node.at(key), source, {"stdout", "exitCode"})
    stdout = override.data.get("stdout", "")
    if not isinstance(stdout, str):
        override.fail(override.at("stdout"), f"must be a string, got {type_name(stdout)}")
    return NvidiaSmiOverride(stdout=stdout, exit_code=override.integer("exitCode", 0))


# The waiting reasons the kubelet gives a container it could not create or start (kuberuntime).
CONTAINER_FAILURE_REASONS = ("CreateContainerConfigError", "CreateContainerError", "RunContainerError")


def _parse_container_failure(node: Fields, source: str) -> ContainerFailure | None:
    if not node.has("containerFailure"):
        return None
    where = node.at("containerFailure")
    failure = Fields(node.data["containerFailure"], where, source, {"reason", "message"})
    reason = failure.choice("reason", "", CONTAINER_FAILURE_REASONS)
    return ContainerFailure(reason=reason, message=failure.string("message", ""))


GPU_FAULTS = ("uncorrectableEcc", "xid", "none")


def _parse_gpu_health(node: Fields, source: str, gpus: int) -> tuple[GpuHealthEvent, ...]:
    """`gpuHealth: [{afterSeconds, gpu, fault, xid}]`: from `afterSeconds` after the sim started,
    GPU `gpu` has `fault` (uncorrectableEcc: vectorAdd fails on it; xid: the DRA driver's health
    check reports Xid `xid` (default 79) and taints the device; none: healthy again)."""
    raw = node.data.get("gpuHealth") or []
    if not isinstance(raw, list):
        node.fail(node.at("gpuHealth"), "must be a list of {afterSeconds, gpu, fault}")
    events = []
    for position, item in enumerate(raw):
        where = f"{node.at('gpuHealth')}[{position}]"
        event = Fields(item, where, source, {"afterSeconds", "gpu", "fault", "xid"})
        gpu = event.integer("gpu", 0)
        if gpu >= gpus:
            event.fail(event.at("gpu"), f"must be < gpus ({gpus})")
        if not event.has("fault"):
            event.fail(event.at("fault"), f"required: one of {', '.join(GPU_FAULTS)}")
        fault = event.choice("fault", "none", GPU_FAULTS)
        events.append(GpuHealthEvent(event.number("afterSeconds", 0.0), gpu, fault, event.integer("xid", 79)))
    return tuple(sorted(events, key=lambda e: e.after_seconds))


def faults_at(spec: NodeSpec, elapsed: float) -> dict[int, GpuHealthEvent]:
    """Each GPU's fault `elapsed` seconds in (its last event by then; `none` clears it)."""
    faulty: dict[int, GpuHealthEvent] = {}
    for event in spec.gpu_health:
        if event.after_seconds > elapsed:
            break
        if event.fault == "none":
            faulty.pop(event.gpu, None)
        else:
            faulty[event.gpu] = event
    return faulty


def ecc_gpus_at(spec: NodeSpec, elapsed: float) -> frozenset[int]:
    """The GPUs `gpuHealth` leaves with an uncorrectable ECC error `elapsed` seconds in."""
    return frozenset(
        gpu for gpu, event in faults_at(spec, elapsed).items() if event.fault == "uncorrectableEcc"
    )


def health_at(spec: NodeSpec, elapsed: float) -> NodeSpec:
    """The node's spec with `gpuHealth`'s faults as of `elapsed` seconds in."""
    from dataclasses import replace

    if not spec.gpu_health:
        return spec
    faults = faults_at(spec, elapsed)
    xids = tuple(sorted((gpu, event.xid) for gpu, event in faults.items() if event.fault == "xid"))
    return replace(spec, ecc_gpus=ecc_gpus_at(spec, elapsed), xid_gpus=xids)


def default_scenario_path() -> Path:
    return Path(__file__).parent / "scenarios" / "default.yaml"


NETWORK_FABRICS = ("ib", "roce", "efa", "none")
NCCL_TRANSPORTS = ("auto", "socket")


def _parse_network(fields: Fields, default: NetworkSpec) -> NetworkSpec:
    """`network` (top level: every node's; per node: overrides it), each key defaulting to `default`."""
    if not fields.has("network"):
        return default
    keys = {"fabric", "nicsPerNode", "linkGbps", "resources"}
    network = Fields(fields.data["network"], fields.at("network"), fields.source, keys)
    fabric = network.choice("fabric", default.fabric or "ib", NETWORK_FABRICS)
    nics = network.integer("nicsPerNode", default.nics_per_node or (0 if fabric == "none" else 8))
    link = network.integer("linkGbps", default.link_gbps or (0 if fabric == "none" else 400))
    return NetworkSpec(fabric, nics, link, _parse_network_resources(network, default.resources))


_EXTENDED_RESOURCE = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")


def _parse_network_resources(
    network: Fields, default: tuple[tuple[str, int], ...]
) -> tuple[tuple[str, int], ...]:
    if not network.has("resources"):
        return default
    raw = network.data["resources"]
    if not isinstance(raw, dict):
        network.fail(
            network.at("resources"), f"must be a mapping of resource name to count, got {type_name(raw)}"
        )
    for name, count in raw.items():
        where = f"{network.at('resources')}.{name}"
        if not isinstance(name, str) or not _EXTENDED_RESOURCE.match(name) or name.startswith("nvidia.com/"):
            network.fail(where, "not a network resource name like rdma/ib or vpc.amazonaws.com/efa")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            network.fail(where, "must be a whole number >= 1")
    return tuple(sorted(raw.items()))


PCIE_GENS = (1, 2, 3, 4, 5, 6)
PCIE_WIDTHS = (1, 2, 4, 8, 16)


def _pcie_link(node: Fields, key: str, source: str) -> tuple[int, int] | None:
    """`{gen: G, width: W}` (`pcieLink`, `pcieDegradedLink`), None when absent."""
    if not node.has(key):
        return None
    link = Fields(node.data[key], node.at(key), source, {"gen", "width"})
    gen, width = link.integer("gen", 4, minimum=1), link.integer("width", 16, minimum=1)
    if gen not in PCIE_GENS:
        link.fail(link.at("gen"), f"must be a PCIe generation, one of {', '.join(map(str, PCIE_GENS))}")
    if width not in PCIE_WIDTHS:
        link.fail(link.at("width"), f"must be a PCIe link width, one of {', '.join(map(str, PCIE_WIDTHS))}")
    return gen, width


def _node_network(node: Fields, default: NetworkSpec) -> dict[str, Any]:
    """A node's network and its faults (`network`, `nicsDown`, `nicsSlow`, `ncclTransport`)."""
    network = _parse_network(node, default)
    faults = {key: node.integer(key, 0) for key in ("nicsDown", "nicsSlow")}
    for key, nics in faults.items():
        if nics > network.nics_per_node:
            node.fail(node.at(key), f"must be <= network.nicsPerNode ({network.nics_per_node})")
    return {
        "network": network,
        "nics_down": faults["nicsDown"],
        "nics_slow": faults["nicsSlow"],
        "nccl_transport": node.choice("ncclTransport", "auto", NCCL_TRANSPORTS),
        "gpu_direct_rdma": node.boolean("gpuDirectRdma", True),
    }
