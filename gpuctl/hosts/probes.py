"""Turn the host probe's state (gpuctl.hosts.host_state) into preflight's findings: pure functions,
unit-tested with captured probe output."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from gpuctl.hosts.driver_state import REBOOT_REQUIRED, dkms_problem, nvidia_smi_state
from gpuctl.hosts.fabricmanager import fabricmanager_finding, nvl_rack_finding
from gpuctl.hosts.findings import Finding, Status
from gpuctl.hosts.host_state import CommandResult, ContainerdConfig, Dkms, GpuPciLink, HostState, PciDevice
from gpuctl.hosts.host_support import host_support
from gpuctl.hosts.rdma import rdma_findings
from gpuctl.package_data import default_driver_branch, min_free_disk_gib
from gpuctl.shell import command_line

MIN_FREE_MIB_SETTING = "gpuctl_preflight_min_free_mib"

# A few common data-centre GPUs, to make the PCI finding readable (ids from the PCI ID database).
DEVICE_NAMES = {
    "0x2330": "H100 SXM5 80GB", "0x2331": "H100 PCIe", "0x2335": "H200 SXM 141GB", "0x2324": "H800",
    "0x20b0": "A100 SXM4 40GB", "0x20b2": "A100 SXM4 80GB", "0x20b5": "A100 PCIe 80GB",
    "0x20f1": "A100 PCIe 40GB", "0x26b9": "L40S", "0x26b5": "L40", "0x27b8": "L4", "0x1eb8": "T4",
    "0x1db6": "V100 PCIe 32GB", "0x2236": "A10", "0x2941": "GB200",
}  # fmt: skip


def os_finding(os_release: Mapping[str, str]) -> Finding:
    distro, version = os_release.get("ID", "").lower(), os_release.get("VERSION_ID", "")
    pretty = os_release.get("PRETTY_NAME") or f"{distro} {version}".strip() or "unknown OS"
    support = host_support()
    if support.supports(distro, version):
        return Finding("os", "pass", f"{pretty} is supported")
    return Finding(
        "os",
        "fail",
        f"{pretty} is not supported",
        hint=f"gpuctl prepares {support.os_names}; reinstall the host",
    )


def headers_finding(state: HostState) -> Finding:
    """Headers for the running kernel: installed, or a candidate in the package manager."""
    kernel, offered = state.kernel or "unknown", state.headers_offered
    if state.headers_installed:
        return Finding(
            "kernel-headers", "pass", f"kernel {kernel}: headers installed ({state.headers_installed[0]})"
        )
    candidate = re.search(r"^\s*Candidate:\s*(\S+)", offered, re.MULTILINE)
    if candidate and candidate.group(1) != "(none)":
        return Finding(
            "kernel-headers",
            "pass",
            f"kernel {kernel}: linux-headers-{kernel} {candidate.group(1)} available",
        )
    if state.headers_manager == "dnf" and offered.strip():
        return Finding("kernel-headers", "pass", f"kernel {kernel}: kernel-devel-{kernel} available")
    package = f"kernel-devel-{kernel}" if state.headers_manager == "dnf" else f"linux-headers-{kernel}"
    return Finding(
        "kernel-headers",
        "warn",
        f"kernel {kernel}: {package} is not installed nor offered by the repositories configured now",
        hint="bootstrap adds the CUDA repository and installs it from there; if no repository has it, "
        "the driver cannot build: boot a kernel whose headers are available",
    )


def gpus_finding(host: str, gpus: tuple[PciDevice, ...]) -> Finding:
    if not gpus:
        return Finding(
            "gpus",
            "fail",
            "no NVIDIA GPU on the PCI bus",
            hint=f"remove {host} from group gpu_nodes, or check its GPUs are visible (`lspci -d 10de:`)",
        )
    counts = Counter(d.device for d in gpus)
    kinds = ", ".join(
        f"{count}x {d} {DEVICE_NAMES.get(d, '')}".rstrip() for d, count in sorted(counts.items())
    )
    return Finding("gpus", "pass", f"{len(gpus)} NVIDIA GPU(s) on the PCI bus: {kinds}")


def nvswitch_finding(state: HostState, fabricmanager: Any, host: str = "HOST") -> Finding:
    """What Fabric Manager and the driver do on a host with NVSwitches."""
    switches = state.nvswitches
    if state.nvlink_platform == "nvl_rack":
        return nvl_rack_finding(len(state.gpus), state.fabricmanager)
    if not switches:
        return Finding("nvswitch", "pass", "no NVSwitch: fabricmanager not needed")
    if str(fabricmanager).lower() in ("false", "no", "0", "off"):
        return Finding(
            "nvswitch",
            "warn",
            f"{len(switches)} NVSwitch(es) but gpuctl_fabricmanager is off: CUDA will not start on this host",
            hint="set gpuctl_fabricmanager: auto",
        )
    driver_version, _ = installed_driver_version(state)
    return fabricmanager_finding(host, len(switches), state.fabricmanager, driver_version)


def nouveau_finding(modules: frozenset[str]) -> Finding:
    if "nouveau" in modules:
        return Finding(
            "nouveau",
            "warn",
            "nouveau is loaded: bootstrap blacklists it, and the NVIDIA driver loads only after a reboot",
            hint="set gpuctl_reboot_policy: if_needed, or reboot after `gpuctl bootstrap --phase host`",
        )
    return Finding("nouveau", "pass", "nouveau is not loaded")


def secure_boot_finding(state: str) -> Finding:
    """`state` as the probe classified it: enabled | disabled | bios | unknown."""
    if state == "enabled":
        return Finding(
            "secure-boot",
            "warn",
            "Secure Boot is enabled: unsigned NVIDIA kernel modules will not load",
            hint="enroll the module signing key (MOK) or disable Secure Boot before bootstrapping",
        )
    if state == "disabled":
        return Finding("secure-boot", "pass", "Secure Boot is disabled")
    if state == "bios":
        return Finding("secure-boot", "pass", "legacy BIOS boot: no Secure Boot")
    return Finding(
        "secure-boot",
        "warn",
        "Secure Boot state unknown",
        hint="check with `mokutil --sb-state` on the host (package mokutil)",
    )


def installed_driver_version(state: HostState) -> tuple[str | None, str]:
    """(version, where it came from) of an installed NVIDIA driver, (None, why) when none works."""
    loaded = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", state.driver_proc)
    if loaded:
        return loaded.group(1), "kernel module loaded"
    smi = state.nvidia_smi
    if smi.rc is None:
        return None, "none"
    versions = [row.driver_version for row in state.gpu_rows if re.match(r"^\d+\.\d+", row.driver_version)]
    if smi.works and versions:
        return versions[0], "nvidia-smi"
    return None, nvidia_smi_state(smi.rc or 1, smi.output).message


def dkms_finding(kernel: str, dkms: Dkms | None) -> Finding | None:
    """None when DKMS is not installed; warn when it holds a module it cannot build for this kernel."""
    if dkms is None or not dkms.status.strip():
        return None
    problem = dkms_problem(kernel, dkms.status, dkms.headers_present)
    if problem:
        return Finding(
            "dkms",
            "warn",
            problem,
            hint=f"install linux-headers-{kernel} (or boot a kernel with headers), then `dkms autoinstall`",
        )
    return Finding("dkms", "pass", f"DKMS modules built for kernel {kernel}")


def driver_finding(state: HostState, branch: str) -> Finding:
    version, source = installed_driver_version(state)
    if version is None and source == "none":
        return Finding("driver", "pass", f"no NVIDIA driver installed: bootstrap installs branch {branch}")
    if version is None and source.startswith(REBOOT_REQUIRED):
        return Finding(
            "driver",
            "warn",
            source,
            hint="reboot the host (gpuctl bootstrap does it with gpuctl_reboot_policy: if_needed)",
        )
    if version is None:
        return Finding(
            "driver",
            "warn",
            f"an NVIDIA driver is installed but not working: {source}",
            hint="a reboot may be pending; bootstrap reinstalls the pinned branch, then reboot if it says so",
        )
    if version.split(".")[0] != branch:
        return Finding(
            "driver",
            "warn",
            f"driver {version} installed ({source}), not on the wanted branch {branch}",
            hint="bootstrap switches branches and needs a reboot; or set gpuctl_driver_branch to match",
        )
    return Finding("driver", "pass", f"driver {version} installed ({source}), branch {branch}")


def runtime_finding(runtimes: Mapping[str, str], wanted: str) -> Finding:
    found = ", ".join(f"{name} {version}" for name, version in runtimes.items())
    kinds = {"containerd", "docker", "crio"} & set(runtimes) | (
        {"containerd"} if {"k3s", "rke2"} & set(runtimes) else set()
    )
    if wanted and wanted not in kinds:
        return Finding(
            "container-runtime",
            "fail",
            f"gpuctl_container_runtime is {wanted!r} but it is not installed (found: {found or 'none'})",
            hint=f"install {wanted} first, or unset gpuctl_container_runtime to use the detected one",
        )
    if not kinds:
        return Finding(
            "container-runtime",
            "fail",
            "no container runtime found (containerd, docker or CRI-O)",
            hint="join the host to Kubernetes (or install its runtime) before bootstrapping the GPU layer",
        )
    return Finding("container-runtime", "pass", f"found {found}")


def containerd_config_finding(
    configs: tuple[ContainerdConfig, ...], containerd_version: str | None
) -> Finding:
    # As the shell probe before it: the first readable file and the first version line found.
    files = [config.path for config in configs if config.readable]
    versions = [m.group(1) for c in configs if (m := re.match(r"^\s*version\s*=\s*(\d+)", c.version_line))]
    unreadable = [config.path for config in configs if not config.readable]
    expected = "3" if (containerd_version or "").startswith("2.") else "2"
    if unreadable:
        return Finding("containerd-config", "pass", f"{unreadable[0]} exists (readable by root only)")
    if not files:
        return Finding(
            "containerd-config",
            "pass",
            f"no config.toml (containerd's built-in defaults); bootstrap writes one, version = {expected}, "
            "importing its drop-in",
        )
    if not versions or versions[0] == "1":
        return Finding(
            "containerd-config",
            "warn",
            f"{files[0]} uses config version 1: the nvidia drop-in needs version {expected}",
            hint=f"migrate it (`containerd config migrate > {command_line(f'{files[0]}.new')}`, review, "
            "replace)",
        )
    return Finding("containerd-config", "pass", f"{files[0]}: config version {versions[0]}")


def disk_findings(disks: Mapping[str, int | None], needed: float | None = None) -> list[Finding]:
    """One finding per mount point of / and /var; `needed` (GiB): the failing threshold."""
    free = {mount: size / 1024**3 for mount, size in disks.items() if size is not None}
    if not free:
        return [
            Finding("disk", "warn", "free disk space unknown (df failed)", hint="check with `df -h / /var`")
        ]
    findings = []
    needed = min_free_disk_gib() if needed is None else needed
    warn_below = host_support().disk_warn_below_mib / 1024
    for mount, gib in free.items():
        status: Status = "fail" if gib < needed else "warn" if gib < warn_below else "pass"
        hint = (
            ""
            if status == "pass"
            else f"free space on {mount}: the driver and toolkit packages need {needed:g} GiB"
        )
        finding_id = "disk-root" if mount == "/" else "disk-" + mount.strip("/").replace("/", "-")
        findings.append(Finding(finding_id, status, f"{gib:.1f} GiB free on {mount}", hint))
    return findings


def sudo_finding(uid: int | None, sudo: CommandResult | None, user: str) -> Finding:
    if uid == 0:
        return Finding("sudo", "pass", "connected as root")
    sudo = sudo or CommandResult(None)
    if sudo.works:
        return Finding("sudo", "pass", f"passwordless sudo works for {user}")
    text = sudo.output
    if "password" in text.lower():
        return Finding(
            "sudo",
            "warn",
            f"sudo asks {user} for a password",
            hint="pass --ask-become-pass (or set GPUCTL_BECOME_PASSWORD) to `gpuctl bootstrap`",
        )
    first = next((line for line in text.splitlines() if line), f"rc={-1 if sudo.rc is None else sudo.rc}")
    return Finding(
        "sudo",
        "fail",
        f"sudo -n true failed for {user}: {first}",
        hint=f"give {user} sudo rights on the host",
    )


def gpu_link_finding(host: str, links: tuple[GpuPciLink, ...]) -> Finding:
    """Each GPU's PCIe link width against its maximum (an x16 card at x8: a riser, a connector,
    the slot). The speed is not judged here: an idle GPU lowers it (Gen1 on an idle Gen3 or Gen4
    card, as the idle captures in tests/corpus/nvidia-smi show), while the width stays;
    `gpuctl verify --level nccl` reads both under load."""
    narrow = [link for link in links if int(link.width) < int(link.max_width)]
    if narrow:
        named = "; ".join(f"{link.slot} at x{link.width} of x{link.max_width}" for link in narrow[:4])
        return Finding(
            "gpu-pcie-link",
            "warn",
            f"{len(narrow)} of {len(links)} GPU(s) trained a narrower PCIe link than they can run: {named}",
            hint=f"on {host}: `sudo lspci -vv -s {narrow[0].slot} | grep -e LnkCap -e LnkSta`; reseat the "
            "card or its riser, check the slot's PCIe setting in the BIOS",
        )
    widths = ", ".join(sorted({f"x{link.width}" for link in links}))
    return Finding("gpu-pcie-link", "pass", f"{len(links)} GPU(s) at their full PCIe link width ({widths})")


def host_findings(host: str, user: str, state: HostState, settings: Mapping[str, Any]) -> list[Finding]:
    """Every finding for one host, from what the probe read there."""
    branch = str(settings.get("gpuctl_driver_branch") or default_driver_branch())
    wanted_runtime = str(settings.get("gpuctl_container_runtime") or "")
    findings = [
        sudo_finding(state.uid, state.sudo, user),
        os_finding(state.os_release),
        headers_finding(state),
        gpus_finding(host, state.gpus),
        nvswitch_finding(state, settings.get("gpuctl_fabricmanager", "auto"), host),
        nouveau_finding(state.modules),
        secure_boot_finding(state.secure_boot),
        driver_finding(state, branch),
        runtime_finding(state.runtimes, wanted_runtime),
    ]
    dkms = dkms_finding(state.kernel or "unknown", state.dkms)
    if dkms is not None:
        findings.append(dkms)
    if "containerd" in state.runtimes or {"k3s", "rke2"} & set(state.runtimes):
        findings.append(containerd_config_finding(state.containerd_configs, state.runtimes.get("containerd")))
    min_free_mib = settings.get(MIN_FREE_MIB_SETTING)  # the preflight role honours it too
    findings.extend(disk_findings(state.disks, int(min_free_mib) / 1024 if min_free_mib else None))
    known = tuple(link for link in state.gpu_links if link.width.isdigit() and link.max_width.isdigit())
    if known:  # none where sysfs shows no link (a VM's or a test node's emulated bus)
        findings.append(gpu_link_finding(host, known))
    if "rdma" in state.sections:  # only where the host has an RDMA NIC or the inventory names the fabric
        findings.extend(
            rdma_findings(host, state.rdma, settings, kernel=state.kernel, driver_proc=state.driver_proc)
        )
    return findings
