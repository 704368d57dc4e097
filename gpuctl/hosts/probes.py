"""Turn the probe script's sections into findings: pure functions, unit-tested with captured output."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuctl.hosts.driver_state import REBOOT_REQUIRED, dkms_problem, nvidia_smi_state
from gpuctl.hosts.fabricmanager import fabricmanager_finding, parse_fabricmanager
from gpuctl.hosts.findings import Finding, Status
from gpuctl.package_data import default_driver_branch, min_free_disk_gib
from gpuctl.shell import command_line

NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")  # VGA controller, 3D controller
NVSWITCH_CLASS = "0x0680"  # bridge ("other"): NVSwitch on HGX baseboards
SUPPORTED_OS = {"ubuntu": ("22.04", "24.04"), "debian": ("12",), "rhel": ("8", "9"), "rocky": ("8", "9")}
DISK_WARN_GIB = 5.0

# A few common data-centre GPUs, to make the PCI finding readable (ids from the PCI ID database).
DEVICE_NAMES = {
    "0x2330": "H100 SXM5 80GB", "0x2331": "H100 PCIe", "0x2335": "H200 SXM 141GB", "0x2324": "H800",
    "0x20b0": "A100 SXM4 40GB", "0x20b2": "A100 SXM4 80GB", "0x20b5": "A100 PCIe 80GB",
    "0x20f1": "A100 PCIe 40GB", "0x26b9": "L40S", "0x26b5": "L40", "0x27b8": "L4", "0x1eb8": "T4",
    "0x1db6": "V100 PCIe 32GB", "0x2236": "A10",
}  # fmt: skip


@dataclass(frozen=True)
class PciDevice:
    slot: str
    vendor: str
    device: str
    class_code: str


def parse_key_values(text: str) -> dict[str, str]:
    """KEY=value lines (os-release), quotes removed."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip():
            values[key.strip()] = value.strip().strip("\"'")
    return values


def os_finding(os_release: str) -> Finding:
    info = parse_key_values(os_release)
    distro, version = info.get("ID", "").lower(), info.get("VERSION_ID", "")
    pretty = info.get("PRETTY_NAME") or f"{distro} {version}".strip() or "unknown OS"
    major = version.split(".")[0]
    supported = SUPPORTED_OS.get(distro, ())
    if version in supported or (distro in ("rhel", "rocky") and major in supported):
        return Finding("os", "pass", f"{pretty} is supported")
    names = "Ubuntu 22.04/24.04, Debian 12, RHEL/Rocky 8/9"
    return Finding(
        "os", "fail", f"{pretty} is not supported", hint=f"gpuctl prepares {names}; reinstall the host"
    )


def headers_finding(kernel: str, text: str) -> Finding:
    """Headers for the running kernel: installed, or a candidate in the package manager."""
    installed = [line.split(" ", 1)[1] for line in text.splitlines() if line.startswith("installed ")]
    if installed:
        return Finding("kernel-headers", "pass", f"kernel {kernel}: headers installed ({installed[0]})")
    candidate = re.search(r"^\s*Candidate:\s*(\S+)", text, re.MULTILINE)
    if candidate and candidate.group(1) != "(none)":
        return Finding(
            "kernel-headers",
            "pass",
            f"kernel {kernel}: linux-headers-{kernel} {candidate.group(1)} available",
        )
    available = [line for line in text.splitlines() if line.startswith("available ")]
    if available:
        return Finding("kernel-headers", "pass", f"kernel {kernel}: kernel-devel-{kernel} available")
    package = f"kernel-devel-{kernel}" if "manager dnf" in text else f"linux-headers-{kernel}"
    return Finding(
        "kernel-headers",
        "warn",
        f"kernel {kernel}: {package} is not installed nor offered by the repositories configured now",
        hint="bootstrap adds the CUDA repository and installs it from there; if no repository has it, "
        "the driver cannot build: boot a kernel whose headers are available",
    )


def parse_pci(text: str) -> list[PciDevice]:
    devices = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4:
            devices.append(PciDevice(parts[0], parts[1].lower(), parts[2].lower(), parts[3].lower()))
    return devices


def nvidia_gpus(devices: list[PciDevice]) -> list[PciDevice]:
    return [d for d in devices if d.vendor == NVIDIA_VENDOR and d.class_code.startswith(GPU_CLASSES)]


def nvswitches(devices: list[PciDevice]) -> list[PciDevice]:
    return [d for d in devices if d.vendor == NVIDIA_VENDOR and d.class_code.startswith(NVSWITCH_CLASS)]


def gpus_finding(host: str, devices: list[PciDevice]) -> Finding:
    gpus = nvidia_gpus(devices)
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


def nvswitch_finding(
    devices: list[PciDevice],
    fabricmanager: Any,
    sections: Mapping[str, str] | None = None,
    host: str = "HOST",
) -> Finding:
    """`sections` (the probe's): what Fabric Manager and the driver do on a host that has a driver."""
    switches = nvswitches(devices)
    if not switches:
        return Finding("nvswitch", "pass", "no NVSwitch: fabricmanager not needed")
    if str(fabricmanager).lower() in ("false", "no", "0", "off"):
        return Finding(
            "nvswitch",
            "warn",
            f"{len(switches)} NVSwitch(es) but gpuctl_fabricmanager is off: CUDA will not start on this host",
            hint="set gpuctl_fabricmanager: auto",
        )
    sections = sections or {}
    driver_version, _ = installed_driver_version(sections.get("driver", ""), sections.get("nvidia-smi", ""))
    service = parse_fabricmanager(sections.get("fabricmanager", ""))
    return fabricmanager_finding(host, len(switches), service, driver_version)


def nouveau_finding(modules: str) -> Finding:
    loaded = set(modules.split())
    if "nouveau" in loaded:
        return Finding(
            "nouveau",
            "warn",
            "nouveau is loaded: bootstrap blacklists it, and the NVIDIA driver loads only after a reboot",
            hint="set gpuctl_reboot_policy: if_needed, or reboot after `gpuctl bootstrap --phase host`",
        )
    return Finding("nouveau", "pass", "nouveau is not loaded")


def secure_boot_finding(text: str) -> Finding:
    lowered = text.lower()
    if "secureboot enabled" in lowered or _efivar_state(text) == 1:
        return Finding(
            "secure-boot",
            "warn",
            "Secure Boot is enabled: unsigned NVIDIA kernel modules will not load",
            hint="enroll the module signing key (MOK) or disable Secure Boot before bootstrapping",
        )
    if "secureboot disabled" in lowered or _efivar_state(text) == 0:
        return Finding("secure-boot", "pass", "Secure Boot is disabled")
    if lowered.strip() == "bios" or "efi variables are not supported" in lowered:
        return Finding("secure-boot", "pass", "legacy BIOS boot: no Secure Boot")
    return Finding(
        "secure-boot",
        "warn",
        "Secure Boot state unknown",
        hint="check with `mokutil --sb-state` on the host (package mokutil)",
    )


def _efivar_state(text: str) -> int | None:
    match = re.match(r"^efivar\s+([\d\s]+)$", text.strip())
    if not match:
        return None
    numbers = match.group(1).split()
    return int(numbers[-1]) if len(numbers) >= 5 else None


def installed_driver_version(proc_version: str, smi: str) -> tuple[str | None, str]:
    """(version, where it came from) of an installed NVIDIA driver, (None, why) when none works."""
    loaded = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", proc_version)
    if loaded:
        return loaded.group(1), "kernel module loaded"
    if not smi or smi.strip() == "absent":
        return None, "none"
    lines = smi.strip().splitlines()
    code = lines[-1].removeprefix("rc=") if lines[-1].startswith("rc=") else "?"
    output = [line for line in lines if not line.startswith("rc=")]
    if code == "0" and output and re.match(r"^\d+\.\d+", output[0].strip()):
        return output[0].strip(), "nvidia-smi"
    return None, nvidia_smi_state(int(code) if code.isdigit() else 1, "\n".join(output)).message


def dkms_finding(kernel: str, text: str) -> Finding | None:
    """None when DKMS is not installed; warn when it holds a module it cannot build for this kernel."""
    if not text.strip():
        return None
    problem = dkms_problem(kernel, text, "headers present" in text.splitlines())
    if problem:
        return Finding(
            "dkms",
            "warn",
            problem,
            hint=f"install linux-headers-{kernel} (or boot a kernel with headers), then `dkms autoinstall`",
        )
    return Finding("dkms", "pass", f"DKMS modules built for kernel {kernel}")


def driver_finding(proc_version: str, smi: str, branch: str) -> Finding:
    version, source = installed_driver_version(proc_version, smi)
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


def parse_runtimes(text: str) -> dict[str, str]:
    """Runtime name → version (first x.y.z on its --version line)."""
    runtimes: dict[str, str] = {}
    for line in text.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name:
            version = re.search(r"v?(\d+\.\d+(?:\.\d+)?)", rest)
            runtimes[name] = version.group(1) if version else "unknown version"
    return runtimes


def runtime_finding(text: str, wanted: str) -> Finding:
    runtimes = parse_runtimes(text)
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


def containerd_config_finding(text: str, containerd_version: str | None) -> Finding:
    files = re.findall(r"^file (\S+)", text, re.MULTILINE)
    versions = re.findall(r"^\s*version\s*=\s*(\d+)", text, re.MULTILINE)
    unreadable = re.findall(r"^unreadable (\S+)", text, re.MULTILINE)
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


def parse_df(text: str) -> dict[str, float]:
    """Mount point → free GiB, from `df -Pk`."""
    free: dict[str, float] = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 6 and parts[3].isdigit():
            free[parts[5]] = int(parts[3]) / (1024 * 1024)
    return free


def disk_findings(text: str) -> list[Finding]:
    free = parse_df(text)
    if not free:
        return [
            Finding("disk", "warn", "free disk space unknown (df failed)", hint="check with `df -h / /var`")
        ]
    findings = []
    needed = min_free_disk_gib()
    for mount, gib in free.items():
        status: Status = "fail" if gib < needed else "warn" if gib < DISK_WARN_GIB else "pass"
        hint = (
            ""
            if status == "pass"
            else f"free space on {mount}: the driver and toolkit packages need {needed:g} GiB"
        )
        finding_id = "disk-root" if mount == "/" else "disk-" + mount.strip("/").replace("/", "-")
        findings.append(Finding(finding_id, status, f"{gib:.1f} GiB free on {mount}", hint))
    return findings


def sudo_finding(id_text: str, text: str, user: str) -> Finding:
    if id_text.split()[:1] == ["0"]:
        return Finding("sudo", "pass", "connected as root")
    code = text.strip().splitlines()[-1] if text.strip() else ""
    if code == "rc=0":
        return Finding("sudo", "pass", f"passwordless sudo works for {user}")
    if "password" in text.lower():
        return Finding(
            "sudo",
            "warn",
            f"sudo asks {user} for a password",
            hint="pass --ask-become-pass (or set GPUCTL_BECOME_PASSWORD) to `gpuctl bootstrap`",
        )
    first = next((line for line in text.splitlines() if line and not line.startswith("rc=")), code)
    return Finding(
        "sudo",
        "fail",
        f"sudo -n true failed for {user}: {first}",
        hint=f"give {user} sudo rights on the host",
    )


def host_findings(
    host: str, user: str, sections: Mapping[str, str], settings: Mapping[str, Any]
) -> list[Finding]:
    """Every finding for one host, from the probe script's sections."""
    devices = parse_pci(sections.get("pci", ""))
    runtimes = parse_runtimes(sections.get("runtimes", ""))
    branch = str(settings.get("gpuctl_driver_branch") or default_driver_branch())
    findings = [
        sudo_finding(sections.get("id", ""), sections.get("sudo", ""), user),
        os_finding(sections.get("os-release", "")),
        headers_finding(sections.get("kernel", "unknown"), sections.get("headers", "")),
        gpus_finding(host, devices),
        nvswitch_finding(devices, settings.get("gpuctl_fabricmanager", "auto"), sections, host),
        nouveau_finding(sections.get("modules", "")),
        secure_boot_finding(sections.get("secure-boot", "")),
        driver_finding(sections.get("driver", ""), sections.get("nvidia-smi", ""), branch),
        runtime_finding(sections.get("runtimes", ""), str(settings.get("gpuctl_container_runtime") or "")),
    ]
    dkms = dkms_finding(sections.get("kernel", "unknown"), sections.get("dkms", ""))
    if dkms is not None:
        findings.append(dkms)
    if "containerd" in runtimes or {"k3s", "rke2"} & set(runtimes):
        findings.append(
            containerd_config_finding(sections.get("containerd-config", ""), runtimes.get("containerd"))
        )
    findings.extend(disk_findings(sections.get("disk", "")))
    if "end" not in sections:
        findings.append(
            Finding("probe", "warn", "the probe script stopped early: some findings may be missing")
        )
    return findings
