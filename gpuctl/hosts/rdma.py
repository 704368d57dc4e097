"""The RDMA prerequisites of multi-node GPU traffic, from the host probe's `rdma` section.

NCCL reaches another node's GPUs over InfiniBand, RoCE or EFA only when the host has RDMA devices
(/sys/class/infiniband, the verbs character devices in /dev/infiniband), a way for the NIC to read
and write GPU memory (GPUDirect RDMA: the `nvidia-peermem` module, or DMA-BUF with the open kernel
modules on Linux 5.12 or later), and a locked-memory limit high enough to register its buffers;
without them it stages through host memory or silently falls back to TCP sockets. The findings
here are made only where the host has an RDMA-capable NIC or the inventory says the fabric is
ib, roce or efa (`gpuctl_fabric`): a node without one is not a failure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuctl.hosts.findings import Finding, Status
from gpuctl.shell import command_line

FABRIC_SETTING = "gpuctl_fabric"  # auto | ib | roce | efa | none
RDMA_FABRICS = ("ib", "roce", "efa")
PEER_MEMORY_MODULES = frozenset({"nvidia_peermem", "nv_peer_mem"})  # the driver's own, MLNX_OFED's older one
# DMA-BUF needs the open kernel modules and Linux 5.12 or later; NVIDIA recommends it over
# nvidia-peermem (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html).
DMABUF_KERNEL = (5, 12)
# NCCL's troubleshooting guide: InfiniBand needs the locked-memory limit raised (unlimited)
# (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#infiniband);
# containers inherit their runtime daemon's limit, 8 MiB under systemd's default
# (https://github.com/NVIDIA/nvidia-container-toolkit/issues/2037).
MEMLOCK_UNLIMITED = "unlimited"
_VENDORS = {"0x15b3": "NVIDIA/Mellanox", "0x1d0f": "AWS EFA"}


@dataclass(frozen=True)
class RdmaPort:
    """One port of an RDMA device, its sysfs attributes as the kernel prints them."""

    device: str
    port: str
    state: str  # "4: ACTIVE", "1: DOWN"
    phys_state: str  # "5: LinkUp", "3: Disabled"
    rate: str  # "400 Gb/sec (4X NDR)"
    link_layer: str  # InfiniBand | Ethernet

    @property
    def active(self) -> bool:
        return _word(self.state) == "ACTIVE"

    def describe(self) -> str:
        physical = f", {_word(self.phys_state) or 'physical state unknown'}" if self.phys_state else ""
        return f"{self.device} port {self.port}: {_word(self.state) or 'state unknown'}{physical}"


@dataclass(frozen=True)
class RdmaState:
    """What the probe read of the host's RDMA stack (empty: not asked, or nothing there)."""

    nics: tuple[Mapping[str, str], ...] = ()  # {slot, vendor, device, class}
    ports: tuple[RdmaPort, ...] = ()
    dev: tuple[str, ...] | None = None  # /dev/infiniband's entries, None when it is absent
    modules: frozenset[str] = frozenset()  # RDMA and peer-memory modules loaded
    ulimit_l: str = ""  # `ulimit -l` of the probe's login: "unlimited" or KiB
    runtime_memlock: Mapping[str, str] = field(default_factory=dict)  # daemon -> limits line
    kernel_config: Mapping[str, str] = field(default_factory=dict)  # CONFIG_X -> y | m | n

    @property
    def devices(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(port.device for port in self.ports))

    @property
    def verbs(self) -> tuple[str, ...]:
        return tuple(name for name in self.dev or () if name.startswith("uverbs"))


def parse_rdma(section: Any) -> RdmaState:
    """The probe's `rdma` section (see host_probe.py's rdma())."""
    if not isinstance(section, Mapping):
        return RdmaState()
    devices = section.get("devices") or {}
    ports = tuple(
        RdmaPort(
            str(device), str(port), str(values.get("state") or ""), str(values.get("phys_state") or ""),
            str(values.get("rate") or ""), str(values.get("link_layer") or ""),
        )
        for device, by_port in devices.items() if isinstance(by_port, Mapping)
        for port, values in by_port.items() if isinstance(values, Mapping)
    )  # fmt: skip
    dev = section.get("dev")
    return RdmaState(
        nics=tuple(
            {str(k): str(v) for k, v in nic.items()}
            for nic in section.get("nics") or ()
            if isinstance(nic, Mapping)
        ),
        ports=ports,
        dev=tuple(str(name) for name in dev) if isinstance(dev, list) else None,
        modules=module_names(section.get("modules") or ()),
        ulimit_l=str(section.get("ulimit_l") or "").strip(),
        runtime_memlock={str(k): str(v) for k, v in (section.get("runtime_memlock") or {}).items()},
        kernel_config=dict(
            str(line).strip().split("=", 1) for line in section.get("kernel_config") or () if "=" in str(line)
        ),
    )


def module_names(lines: Any) -> frozenset[str]:
    """Module names from /proc/modules lines (or `lsmod`'s, which lead with the name too)."""
    names = (str(line).split()[0] for line in lines if str(line).split())
    return frozenset(name for name in names if name != "Module")  # lsmod's header


def memlock_bytes(text: str) -> int | None:
    """A locked-memory limit in bytes, None when unlimited (or unreadable: see `memlock_known`).
    Reads `ulimit -l` (KiB or "unlimited"), `ulimit -a`'s `max locked memory (kbytes, -l) N` line,
    and /proc/PID/limits' `Max locked memory  SOFT  HARD  bytes` line (the soft limit)."""
    text = text.strip()
    limits = re.match(r"^Max locked memory\s+(\S+)\s+\S+\s+bytes", text)
    if limits:
        return None if limits.group(1) == MEMLOCK_UNLIMITED else int(limits.group(1))
    value = text.rsplit(None, 1)[-1] if text else ""
    if value == MEMLOCK_UNLIMITED or not value.isdigit():
        return None
    return int(value) * 1024


def memlock_known(text: str) -> bool:
    value = text.strip().split()
    return bool(value) and (MEMLOCK_UNLIMITED in value or memlock_bytes(text) is not None)


def _fabric(settings: Mapping[str, Any]) -> str:
    return str(settings.get(FABRIC_SETTING) or "auto").lower()


def wanted(rdma: RdmaState, settings: Mapping[str, Any]) -> str:
    """Why the host's RDMA prerequisites are checked ("" when they are not): the inventory's
    `gpuctl_fabric`, or RDMA NICs on its PCI bus."""
    fabric = _fabric(settings)
    if fabric in RDMA_FABRICS:
        return f"{FABRIC_SETTING} is {fabric}"
    if fabric == "none" or not rdma.nics:
        return ""
    vendors = sorted({_VENDORS.get(nic.get("vendor", ""), nic.get("vendor", "")) for nic in rdma.nics})
    return f"{len(rdma.nics)} RDMA-capable NIC function(s) on the PCI bus ({', '.join(vendors)})"


def rdma_findings(
    host: str, rdma: RdmaState, settings: Mapping[str, Any], *, kernel: str, driver_proc: str
) -> list[Finding]:
    """The `rdma-devices`, `gpudirect-rdma` and `memlock` findings, none where RDMA is not wanted."""
    why = wanted(rdma, settings)
    if not why:
        return []
    declared = _fabric(settings) in RDMA_FABRICS
    return [
        devices_finding(host, rdma, why, declared),
        gpudirect_finding(host, rdma, kernel, driver_proc),
        memlock_finding(host, rdma),
    ]


def devices_finding(host: str, rdma: RdmaState, why: str, declared: bool) -> Finding:
    """RDMA devices with an active port, and the verbs devices containers are given."""
    on = command_line(host)
    missing: Status = "fail" if declared else "warn"
    if not rdma.ports:
        return Finding(
            "rdma-devices",
            missing,
            f"{why} but no RDMA device in /sys/class/infiniband: NCCL falls back to TCP sockets",
            hint=f"on {on}: load the RDMA drivers (`modprobe mlx5_ib ib_uverbs` from rdma-core or DOCA-OFED; "
            "`modprobe efa` on AWS), then `ibv_devinfo`",
        )
    if not rdma.verbs:
        return Finding(
            "rdma-devices",
            missing,
            f"{len(rdma.devices)} RDMA device(s) but no /dev/infiniband/uverbs*: no process can open them",
            hint=f"on {on}: `modprobe ib_uverbs` (rdma-core's rdma-load-modules@infiniband.service loads it "
            "at boot)",
        )
    down = [port for port in rdma.ports if not port.active]
    active = len(rdma.ports) - len(down)
    if down:
        named = "; ".join(port.describe() for port in down[:4]) + (" ..." if len(down) > 4 else "")
        return Finding(
            "rdma-devices",
            "fail" if declared or not active else "warn",
            f"{active} of {len(rdma.ports)} RDMA port(s) active; down: {named}",
            hint=f"on {on}: `ibstat` (or `ibv_devinfo`); check the cable and the switch port, and for "
            "InfiniBand that a subnet manager runs on the fabric (a port stays INIT without one)",
        )
    rates = sorted({port.rate for port in rdma.ports if port.rate})
    return Finding(
        "rdma-devices",
        "pass",
        f"{len(rdma.ports)} RDMA port(s) active ({', '.join(rates) or 'rate unknown'}), "
        f"{len(rdma.verbs)} verbs device(s) in /dev/infiniband",
    )


def _kernel_at_least(kernel: str, wanted_version: tuple[int, int]) -> bool:
    found = re.match(r"^(\d+)\.(\d+)", kernel)
    return found is not None and (int(found.group(1)), int(found.group(2))) >= wanted_version


def gpudirect_finding(host: str, rdma: RdmaState, kernel: str, driver_proc: str) -> Finding:
    """GPUDirect RDMA: a peer-memory module loaded, or DMA-BUF possible."""
    loaded = sorted(PEER_MEMORY_MODULES & rdma.modules)
    if loaded:
        return Finding("gpudirect-rdma", "pass", f"{loaded[0]} loaded: GPUDirect RDMA through peer memory")
    open_modules = "Open Kernel Module" in driver_proc
    recent = _kernel_at_least(kernel, DMABUF_KERNEL)
    config = rdma.kernel_config.get("CONFIG_DMA_SHARED_BUFFER", "")
    if open_modules and recent and config != "n":
        return Finding(
            "gpudirect-rdma",
            "pass",
            f"DMA-BUF: kernel {kernel}, open kernel modules (no nvidia-peermem needed)",
        )
    missing = []
    if not driver_proc:
        missing.append("no NVIDIA kernel module loaded yet")
    elif not open_modules:
        missing.append("the proprietary kernel modules (DMA-BUF needs the open ones)")
    if not recent:
        missing.append(f"kernel {kernel or 'unknown'} (DMA-BUF needs 5.12 or later)")
    if config == "n":
        missing.append("CONFIG_DMA_SHARED_BUFFER is not set")
    return Finding(
        "gpudirect-rdma",
        "warn",
        f"nvidia-peermem is not loaded and DMA-BUF is not possible ({'; '.join(missing)}): NCCL stages "
        "network traffic through host memory (no GDRDMA)",
        hint=f"on {command_line(host)}: `modprobe nvidia-peermem` (the driver ships it; it needs the RDMA "
        "stack's ib_core loaded first) and list it in /etc/modules-load.d/; or run the open kernel modules "
        "(gpuctl_driver_open_kernel_modules: true) on kernel 5.12 or later for DMA-BUF",
    )


def memlock_finding(host: str, rdma: RdmaState) -> Finding:
    """The locked-memory limit pods inherit (their runtime daemon's), else the login's."""
    limits = [
        (f"{name} (its containers inherit it)", line) for name, line in sorted(rdma.runtime_memlock.items())
    ]
    if rdma.ulimit_l:
        limits.append(("`ulimit -l` of the login", rdma.ulimit_l))
    known = [(who, line) for who, line in limits if memlock_known(line)]
    if not known:
        return Finding(
            "memlock",
            "warn",
            "the locked-memory limit is unknown",
            hint=f"check `ulimit -l` on {command_line(host)}",
        )
    low = [(who, memlock_bytes(line)) for who, line in known if memlock_bytes(line) is not None]
    if not low:
        return Finding("memlock", "pass", f"locked memory unlimited: {', '.join(who for who, _ in known)}")
    named = "; ".join(f"{who}: {_size(size or 0)}" for who, size in low)
    runtime = next(
        (name for name in sorted(rdma.runtime_memlock) if memlock_bytes(rdma.runtime_memlock[name])), ""
    )
    fix = (
        f"a drop-in /etc/systemd/system/{runtime}.service.d/memlock.conf with `[Service]` "
        f"`LimitMEMLOCK=infinity`, then `systemctl daemon-reload && systemctl restart {runtime}`"
        if runtime
        else "`* - memlock unlimited` in /etc/security/limits.conf, then log in again"
    )
    return Finding(
        "memlock",
        "warn",
        f"locked memory is limited ({named}): NCCL's ibv_reg_mr fails with 'Cannot allocate memory' and "
        "NCCL falls back to sockets",
        hint=f"on {command_line(host)}: {fix}",
    )


def _size(size: int) -> str:
    return f"{size / 2**20:g} MiB" if size >= 2**20 else f"{size / 1024:g} KiB"


def _word(value: str) -> str:
    """'4: ACTIVE' -> 'ACTIVE'; 'LinkUp' stays."""
    return value.split(":", 1)[-1].strip()
