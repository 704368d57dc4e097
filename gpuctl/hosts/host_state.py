"""The one parser of gpuctl's host probe: its JSON answer turned into a typed `HostState`.

The probe (playbooks/roles/gpuctl_probe/files/host_probe.py, request key `host`) is the one script
that reads a host's GPU-relevant state; the roles read its JSON keys in Jinja, and everything in
gpuctl that looks at a host through SSH (`gpuctl preflight`, the simulated cluster's host links)
reads it through `parse_host_state`. Pure functions, unit-tested with captured probe output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuctl.hosts.fabricmanager import FabricManager, parse_fabricmanager
from gpuctl.hosts.host_support import host_support
from gpuctl.hosts.rdma import RdmaState, parse_rdma
from gpuctl.nvidia_smi import parse_query_csv

QUERY_FIELDS = ("name", "memory.total", "driver_version")  # host_probe.py's NVIDIA_SMI_QUERY


class ProbeOutputError(ValueError):
    """The probe printed no JSON document (no Python on the host, or the script was cut short)."""


@dataclass(frozen=True)
class PciDevice:
    """One NVIDIA PCI function; `kind` (gpu | nvswitch | other) as the probe classified its class."""

    slot: str
    device: str
    class_code: str
    kind: str


@dataclass(frozen=True)
class GpuPciLink:
    """One GPU's PCIe link as sysfs prints it: speed "16.0 GT/s PCIe", width "16"."""

    slot: str
    speed: str
    max_speed: str
    width: str
    max_width: str


@dataclass(frozen=True)
class CommandResult:
    """One command the probe ran: exit code (None: the program is not installed) and its output."""

    rc: int | None
    output: str = ""

    @property
    def works(self) -> bool:
        return self.rc == 0


@dataclass(frozen=True)
class GpuRow:
    """One line of nvidia-smi's --query-gpu (QUERY_FIELDS)."""

    name: str
    memory_mib: int
    driver_version: str


@dataclass(frozen=True)
class Dkms:
    status: str  # `dkms status`, verbatim
    headers_present: bool  # the running kernel's headers are there to build with


@dataclass(frozen=True)
class ContainerdConfig:
    path: str
    readable: bool
    version_line: str  # "version = 2", "" when the file declares none


@dataclass(frozen=True)
class HostState:
    """What the probe read; a section it was not asked for holds its empty value."""

    sections: frozenset[str]
    uid: int | None = None
    user: str = ""
    sudo: CommandResult | None = None  # None: connected as root, sudo not asked
    os_release: Mapping[str, str] = field(default_factory=dict)
    kernel: str = ""
    headers_installed: tuple[str, ...] = ()
    headers_manager: str = ""  # apt | dnf | ""
    headers_offered: str = ""  # `apt-cache policy linux-headers-K`, or dnf's kernel-devel-K lines
    pci: tuple[PciDevice, ...] = ()
    modules: frozenset[str] = frozenset()
    module_version: str = ""  # the loaded nvidia module's version, "" when none is loaded
    secure_boot: str = "unknown"  # enabled | disabled | bios | unknown
    driver_proc: str = ""  # /proc/driver/nvidia/version
    nvidia_smi: CommandResult = CommandResult(None)  # `nvidia-smi -L`
    gpu_rows: tuple[GpuRow, ...] = ()
    dkms: Dkms | None = None  # None: DKMS is not installed
    fabricmanager: FabricManager = field(default_factory=FabricManager)
    runtimes: Mapping[str, str] = field(default_factory=dict)  # name -> version
    containerd_configs: tuple[ContainerdConfig, ...] = ()
    nvidia_runtime: Mapping[str, bool] = field(default_factory=dict)  # runtime -> knows "nvidia"
    disks: Mapping[str, int | None] = field(default_factory=dict)  # mount point -> bytes free
    rdma: RdmaState = field(default_factory=RdmaState)  # RDMA NICs, devices, peer memory, memlock
    gpu_links: tuple[GpuPciLink, ...] = ()  # each GPU's PCIe link (sysfs)

    @property
    def gpus(self) -> tuple[PciDevice, ...]:
        return tuple(device for device in self.pci if device.kind == "gpu")

    @property
    def nvswitches(self) -> tuple[PciDevice, ...]:
        return tuple(device for device in self.pci if device.kind == "nvswitch")

    @property
    def nvlink_platform(self) -> str:
        """How the GPUs' NVLink fabric is run: `nvl_rack` (GB200-class compute tray: the rack's
        NVLink Switch trays run it, the node runs IMEX, no host Fabric Manager), `hgx_nvswitch`
        (NVSwitches on the host's PCI bus: host Fabric Manager), or `none`."""
        nvl_rack_ids = host_support().nvl_rack_gpu_device_ids
        if any(gpu.device.lower() in nvl_rack_ids for gpu in self.gpus):
            return "nvl_rack"
        return "hgx_nvswitch" if self.nvswitches else "none"

    @property
    def listed_gpus(self) -> tuple[str, ...]:
        """The GPUs `nvidia-smi -L` lists ("GPU 0: NVIDIA H100 ... (UUID: ...)"), none when it fails."""
        lines = self.nvidia_smi.output.splitlines() if self.nvidia_smi.works else []
        return tuple(line for line in lines if line.startswith("GPU "))

    @property
    def knows_nvidia_runtime(self) -> bool:
        """Some container runtime on the host has a runtime named nvidia."""
        return any(self.nvidia_runtime.values())


def parse_probe_output(stdout: str) -> HostState:
    """The probe's stdout (its last line is the JSON document) as a HostState."""
    lines = stdout.strip().splitlines()
    try:
        document = json.loads(lines[-1]) if lines else None
    except ValueError:
        document = None
    if not isinstance(document, dict) or not isinstance(document.get("host"), dict):
        raise ProbeOutputError(lines[-1] if lines else "no output")
    return parse_host_state(document["host"])


def parse_host_state(host: Mapping[str, Any]) -> HostState:
    """The probe's `host` object as a HostState."""
    headers = host.get("headers") or {}
    user = host.get("user") or {}
    return HostState(
        sections=frozenset(host),
        uid=_int(user.get("uid")),
        user=str(user.get("name") or ""),
        sudo=_command(host["sudo"]) if host.get("sudo") else None,
        os_release=parse_key_values(str(host.get("os_release") or "")),
        kernel=str(host.get("kernel") or ""),
        headers_installed=tuple(str(path) for path in headers.get("installed") or ()),
        headers_manager=str(headers.get("manager") or ""),
        headers_offered=str(headers.get("offered") or ""),
        pci=tuple(
            PciDevice(str(d.get("slot")), str(d.get("device")), str(d.get("class")), str(d.get("kind")))
            for d in host.get("pci") or ()
        ),
        modules=frozenset(str(name) for name in host.get("modules") or ()),
        module_version=str(host.get("module_version") or ""),
        secure_boot=str((host.get("secure_boot") or {}).get("state") or "unknown"),
        driver_proc=str(host.get("driver") or ""),
        nvidia_smi=_command(host.get("nvidia_smi")),
        gpu_rows=_gpu_rows(host.get("nvidia_smi_query")),
        dkms=_dkms(host.get("dkms")),
        fabricmanager=parse_fabricmanager(str(host.get("fabricmanager") or "")),
        runtimes={
            str(name): runtime_version(str(line)) for name, line in (host.get("runtimes") or {}).items()
        },
        containerd_configs=tuple(
            ContainerdConfig(str(c.get("path")), bool(c.get("readable")), str(c.get("version") or ""))
            for c in host.get("containerd_configs") or ()
        ),
        nvidia_runtime={str(name): bool(known) for name, known in (host.get("nvidia_runtime") or {}).items()},
        disks={str(mount): _int(free) for mount, free in (host.get("disks") or {}).items()},
        rdma=parse_rdma(host.get("rdma")),
        gpu_links=_gpu_links(host.get("gpu_links")),
    )


def parse_key_values(text: str) -> dict[str, str]:
    """KEY=value lines (os-release), quotes removed."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            values[key.strip()] = value.strip().strip("\"'")
    return values


def runtime_version(version_line: str) -> str:
    """The first x.y[.z] of a runtime's --version line."""
    version = re.search(r"v?(\d+\.\d+(?:\.\d+)?)", version_line.partition(" ")[2] or version_line)
    return version.group(1) if version else "unknown version"


def _command(answer: Any) -> CommandResult:
    """A probe command's {rc, stdout, stderr, msg}; rc -1 (or no answer) means not installed."""
    if not isinstance(answer, Mapping):
        return CommandResult(None)
    rc = _int(answer.get("rc"))
    output = f"{answer.get('stdout') or ''}\n{answer.get('stderr') or ''}".strip()
    return CommandResult(None if rc is None or rc < 0 else rc, output)


def _gpu_rows(answer: Any) -> tuple[GpuRow, ...]:
    """nvidia-smi's --query-gpu rows (its stdout alone: stderr is no CSV)."""
    if not isinstance(answer, Mapping) or answer.get("rc") != 0:
        return ()
    try:
        rows = parse_query_csv(str(answer.get("stdout") or ""), QUERY_FIELDS)
    except ValueError:  # NVML's error text instead of CSV
        return ()
    return tuple(GpuRow(row["name"], _int(row["memory.total"]) or 0, row["driver_version"]) for row in rows)


def _gpu_links(answer: Any) -> tuple[GpuPciLink, ...]:
    """The probe's `gpu_links`: each GPU's sysfs link attributes."""
    links = answer if isinstance(answer, list) else []
    return tuple(
        GpuPciLink(*(str(link.get(key) or "") for key in ("slot", *_LINK_FILES)))
        for link in links
        if isinstance(link, Mapping)
    )


_LINK_FILES = ("current_link_speed", "max_link_speed", "current_link_width", "max_link_width")


def _dkms(answer: Any) -> Dkms | None:
    if not isinstance(answer, Mapping):
        return None
    return Dkms(str(answer.get("status") or ""), answer.get("headers_present") is True)


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
