"""A multi-node all-reduce's NCCL_DEBUG=INFO lines: which network each host's ranks used, and the
NICs NCCL found there; and the same lines written for simulated hosts.

NCCL prefixes every debug line with `host:pid:tid [cudaDev]` (mpirun --tag-output adds `[rank]`);
the lines read here (shapes from public captures):

    h100-4:739792:739876 [6] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB/SHARP [1]mlx5_2:1/IB/SHARP [RO]; OOB ens7:172.27.32.104<0>
    h100-4:739790:739878 [4] NCCL INFO Using network IBext_v6
        https://github.com/NVIDIA/nccl-tests/issues/294
    ai-vtraining-prd-10-193-84-3:93569:93569 [0] NCCL INFO NET/Socket : Using [0]em1:10.193.84.3<0> [1]tunl0:10.227.47.12<0>
    ai-vtraining-prd-10-193-84-3:93569:93569 [0] NCCL INFO Using network Socket
        https://github.com/NVIDIA/nccl/issues/428
    8h200-3:6310:6318 [0] NCCL INFO NET/OFI Selected Provider is efa (found 16 nics)
    8h200-2:6831:6840 [0] NCCL INFO Using network Libfabric
        https://github.com/NVIDIA/nccl/issues/1597 (EFA, the aws-ofi-nccl plugin)
    10-90-43-152:120890:121560 [0] NCCL INFO Channel 01 : 0[87000] -> 2[c7000] [send] via NET/IB/5/GDRDMA
        https://github.com/NVIDIA/nccl/issues/707 (GPUDirect RDMA: the NIC reads the GPU's memory)
    hostname-test:984:1257 [4] NCCL INFO Channel 06/0 : 36[4] -> 20[4] [send] via NET/IBext_v8/3
        https://github.com/NVIDIA/nccl/issues/1814 (no /GDRDMA: staged through host memory)

NCCL's IB transport lists only the ports in the ACTIVE state (src/transport/net_ib.cc), so a node
with NICs down lists fewer. The table of sizes and bandwidths is nccl-tests' own (gpuctl.nccl_tests).
Standard library only.
"""  # noqa: E501 - quoted lines are kept whole

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuctl.defaults import NCCL_TESTS_IMAGE
from gpuctl.nccl_tests import NcclDevice, all_reduce_rows, format_all_reduce


def _nccl_version_line(image: str) -> str:
    """`NCCL version 2.30.4+cuda12.9`, as NCCL prints it, for the image whose tag names both
    (`12.9.1-devel-ubuntu22.04-nccl2.30.4-1-...`)."""
    cuda = re.search(r":(\d+\.\d+)\.", image)
    nccl = re.search(r"nccl(\d+\.\d+\.\d+)", image)
    return f"NCCL version {nccl[1] if nccl else '2'}+cuda{cuda[1] if cuda else '12'}"


# What the pinned nccl-tests image's NCCL prints first (its version comes from the one pin).
NCCL_VERSION_LINE = _nccl_version_line(NCCL_TESTS_IMAGE)

_PREFIX = re.compile(
    r"^(?:\[[^\]]*\](?:<\w+>:)?\s*)?"  # mpirun --tag-output's [rank] (or [job,rank]<stdout>:)
    r"(?P<host>[^\s:]+):(?P<pid>\d+):(?P<tid>\d+) \[(?P<dev>\d+)\] NCCL INFO (?P<msg>.*)$"
)
_NETWORK = re.compile(r"^Using network (?P<net>.+?)\s*$")
_NET_IB = re.compile(r"^NET/IB : Using (?P<devices>.*?)(?:;|$)")
_NET_SOCKET = re.compile(r"^NET/Socket : Using (?P<devices>.*)$")
_NO_DEVICE = "NET/IB : No device found"
_CHANNEL = re.compile(r"^Channel \S+ : .*\[(?:send|receive)\] via NET/[^/]+/\d+(?P<gdr>/GDRDMA)?")
_OFI_NICS = re.compile(r"^NET/OFI .*\(found (?P<nics>\d+) nics\)")
_DEVICE = re.compile(r"\[\d+\][^\s\[]+")


@dataclass
class HostNet:
    """What one host's ranks said of the network."""

    networks: set[str] = field(default_factory=set)  # `Using network X` (IB, IBext_v6, Socket ...)
    rdma_nics: int = 0  # NICs the IB (or OFI) transport listed: the most any rank listed
    socket_interfaces: tuple[str, ...] = ()
    no_rdma_device: bool = False  # `NET/IB : No device found.`: the IB transport saw no HCA
    # GPUDirect RDMA on its network channels: True when one said `/GDRDMA`, False when they all
    # went `via NET/...` without it, None when no channel line came
    gdr: bool | None = None

    @property
    def network(self) -> str:
        """The network its ranks used, its version suffix off (IBext_v6 → IBext), "" unknown."""
        names = sorted({re.sub(r"_v\d+$", "", name) for name in self.networks})
        return "/".join(names)


def host_networks(text: str) -> dict[str, HostNet]:
    """host → what its NCCL INFO lines said, for every host that printed one."""
    hosts: dict[str, HostNet] = {}
    for line in text.splitlines():
        match = _PREFIX.match(line.strip())
        if match is None:
            continue
        host = hosts.setdefault(match["host"], HostNet())
        message = match["msg"]
        if network := _NETWORK.match(message):
            host.networks.add(network["net"])
        elif ib := _NET_IB.match(message):
            host.rdma_nics = max(host.rdma_nics, len(_DEVICE.findall(ib["devices"])))
        elif channel := _CHANNEL.match(message):
            host.gdr = bool(host.gdr) or bool(channel["gdr"])
        elif message.startswith(_NO_DEVICE):
            host.no_rdma_device = True
        elif socket := _NET_SOCKET.match(message):
            host.socket_interfaces = tuple(_DEVICE.findall(socket["devices"]))
        elif ofi := _OFI_NICS.match(message):
            host.rdma_nics = max(host.rdma_nics, int(ofi["nics"]))
    return hosts


# --- the formatter: what a launcher prints for simulated hosts ---------------------------------


@dataclass(frozen=True)
class SimHost:
    """One host of a simulated multi-node run: its name (as the pod's hostname), address, GPUs,
    the network its ranks use ("IB", "Libfabric" or "Socket"), the RDMA NICs NCCL lists, their
    link layer."""

    name: str
    address: str
    gpus: int
    gpu_name: str
    network: str
    nics: int
    link_layer: str = "IB"  # IB | RoCE
    gdr: bool = True  # GPUDirect RDMA: its channels say /GDRDMA


def _info(host: SimHost, pid: int, device: int, message: str) -> str:
    return f"{host.name}:{pid}:{pid + 40} [{device}] NCCL INFO {message}"


def _host_lines(host: SimHost, pid: int) -> list[str]:
    lines = []
    for device in range(host.gpus):
        rank_pid = pid + device
        lines.append(_info(host, rank_pid, device, f"Bootstrap : Using eth0:{host.address}<0>"))
        if host.network == "Libfabric":  # aws-ofi-nccl's lines on EFA
            found = f"NET/OFI Selected Provider is efa (found {host.nics} nics)"
            lines.append(_info(host, rank_pid, device, found))
        elif host.network == "Socket":
            lines.append(_info(host, rank_pid, device, _NO_DEVICE + "."))
            lines.append(_info(host, rank_pid, device, f"NET/Socket : Using [0]eth0:{host.address}<0>"))
        else:
            nics = " ".join(f"[{index}]mlx5_{index}:1/{host.link_layer}" for index in range(host.nics))
            oob = f"OOB eth0:{host.address}<0>"
            lines.append(_info(host, rank_pid, device, f"NET/IB : Using {nics} [RO]; {oob}"))
        lines.append(_info(host, rank_pid, device, f"Using network {host.network}"))
    return lines


def _channel_lines(hosts: Sequence[SimHost], pid: int) -> list[str]:
    """One ring channel per rank: each rank sends to the same GPU of the next host over the net."""
    first_rank = [sum(host.gpus for host in hosts[:index]) for index in range(len(hosts))]
    lines = []
    for index, host in enumerate(hosts):
        after = (index + 1) % len(hosts)
        for device in range(host.gpus):
            peer = first_rank[after] + min(device, hosts[after].gpus - 1)
            net = "Socket" if host.network == "Socket" else host.network
            via = f"NET/{net}/{device % max(host.nics, 1)}" + (
                "/GDRDMA" if host.gdr and net != "Socket" else ""
            )
            route = (
                f"Channel 00/0 : {first_rank[index] + device}[{device}] -> {peer}[{device}] [send] via {via}"
            )
            lines.append(_info(host, pid + device, device, route))
    return lines


def format_multi_node(hosts: Sequence[SimHost], busbw_gbps: float) -> str:
    """`mpirun ... all_reduce_perf -b 8 -e 8G -f 2 -g 1` over `hosts` (one rank per GPU) with
    NCCL_DEBUG=INFO, its links sustaining `busbw_gbps`."""
    devices = [
        NcclDevice(rank, host.name, device, f"0x{0x1B + 0x10 * device:x}", host.gpu_name, pid=1000 + device)
        for rank, (host, device) in enumerate((h, d) for h in hosts for d in range(h.gpus))
    ]
    rows = all_reduce_rows(len(devices), busbw_gbps) if len(devices) > 1 else ()
    info = [NCCL_VERSION_LINE] + [line for host in hosts for line in _host_lines(host, 1000)]
    info += _channel_lines(hosts, 1000) if len(hosts) > 1 else []
    text = format_all_reduce(devices, rows, info_lines=info)
    return re.sub(r"nGpus \d+", "nGpus 1", text, count=1)  # -g 1: each rank drives one GPU
