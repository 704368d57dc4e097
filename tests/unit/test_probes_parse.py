"""Preflight parsers, fed with output captured from real hosts (a test node, Ubuntu, RHEL, HGX)."""

from __future__ import annotations

import pytest

from gpuctl.hosts.probe_script import PROBE_SCRIPT, split_sections
from gpuctl.hosts.probes import (
    containerd_config_finding,
    disk_findings,
    driver_finding,
    gpus_finding,
    headers_finding,
    host_findings,
    nouveau_finding,
    nvswitch_finding,
    os_finding,
    parse_pci,
    parse_runtimes,
    runtime_finding,
    secure_boot_finding,
    sudo_finding,
)

# Captured from a Debian 12 test node (4 fake H100s, Debian's containerd, no driver yet).
TEST_NODE_OUTPUT = """
@@gpuctl-probe@@ id
1000
gpuadmin

@@gpuctl-probe@@ os-release
PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
ID=debian

@@gpuctl-probe@@ kernel
6.1.0-28-amd64

@@gpuctl-probe@@ headers
manager apt

@@gpuctl-probe@@ pci
0000:18:00.0 0x10de 0x2330 0x030200
0000:2a:00.0 0x10de 0x2330 0x030200
0000:3a:00.0 0x10de 0x2330 0x030200
0000:5d:00.0 0x10de 0x2330 0x030200

@@gpuctl-probe@@ modules

@@gpuctl-probe@@ secure-boot
bios

@@gpuctl-probe@@ driver

@@gpuctl-probe@@ nvidia-smi
absent

@@gpuctl-probe@@ runtimes
containerd containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3

@@gpuctl-probe@@ containerd-config
file /etc/containerd/config.toml
version = 2

@@gpuctl-probe@@ disk
Filesystem     1024-blocks     Used Available Capacity Mounted on
overlay          264212084 23751776  82639136      23% /
overlay          264212084 23751776  82639136      23% /

@@gpuctl-probe@@ sudo
rc=0

@@gpuctl-probe@@ end
"""

APT_POLICY_CANDIDATE = """manager apt
linux-headers-6.8.0-45-generic:
  Installed: (none)
  Candidate: 6.8.0-45.45
  Version table:
     6.8.0-45.45 500
        500 http://archive.ubuntu.com/ubuntu noble-updates/main amd64 Packages"""

PROC_DRIVER_VERSION = """NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024
GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)"""  # noqa: E501 - verbatim /proc output

PROC_DRIVER_VERSION_OPEN = """NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 23:56:23 UTC 2025
GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)"""  # noqa: E501 - verbatim /proc output

HGX_PCI = """0000:07:00.0 0x10de 0x22a3 0x068000
0000:08:00.0 0x10de 0x22a3 0x068000
0000:18:00.0 0x10de 0x2330 0x030200
0000:18:00.1 0x10de 0x22e8 0x040300"""


def test_the_script_and_the_splitter_agree_on_sections() -> None:
    sections = split_sections(TEST_NODE_OUTPUT)
    for name in (
        "id",
        "os-release",
        "kernel",
        "headers",
        "pci",
        "secure-boot",
        "runtimes",
        "disk",
        "sudo",
        "end",
    ):
        assert f"s {name}" in PROBE_SCRIPT or f"s {name};" in PROBE_SCRIPT
        assert name in sections
    assert sections["kernel"] == "6.1.0-28-amd64"
    assert sections["modules"] == ""


def test_a_fresh_test_node_can_be_bootstrapped() -> None:
    findings = host_findings("gpu-node-0", "gpuadmin", split_sections(TEST_NODE_OUTPUT), {})
    by_id = {finding.id: finding for finding in findings}
    assert all(finding.status != "fail" for finding in findings), findings
    assert by_id["gpus"].message == "4 NVIDIA GPU(s) on the PCI bus: 4x 0x2330 H100 SXM5 80GB"
    assert by_id["kernel-headers"].status == "warn"
    assert by_id["container-runtime"].message == "found containerd 1.6.20"
    assert by_id["containerd-config"].message == "/etc/containerd/config.toml: config version 2"
    assert [f.id for f in findings if f.id.startswith("disk")] == ["disk-root"]
    assert "probe" not in by_id


def test_a_truncated_probe_output_is_flagged() -> None:
    cut = TEST_NODE_OUTPUT.split("@@gpuctl-probe@@ disk", 1)[0]
    findings = host_findings("h", "u", split_sections(cut), {})
    assert findings[-1].id == "probe"
    assert findings[-1].status == "warn"


@pytest.mark.parametrize(
    ("os_release", "status"),
    [
        ('ID=ubuntu\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"', "pass"),
        ('ID=ubuntu\nVERSION_ID="22.04"', "pass"),
        ('ID=ubuntu\nVERSION_ID="20.04"', "fail"),
        ('ID="rocky"\nVERSION_ID="9.4"', "pass"),
        ('ID="rhel"\nVERSION_ID="8.10"', "pass"),
        ('ID="rhel"\nVERSION_ID="7.9"', "fail"),
        ("ID=debian\nVERSION_ID=11", "fail"),
        ("", "fail"),
    ],
)
def test_supported_operating_systems(os_release: str, status: str) -> None:
    assert os_finding(os_release).status == status


def test_kernel_headers_installed_candidate_or_missing() -> None:
    assert headers_finding("k", "installed /usr/src/linux-headers-k\nmanager apt").status == "pass"
    found = headers_finding("6.8.0-45-generic", APT_POLICY_CANDIDATE)
    assert found.status == "pass"
    assert "6.8.0-45.45 available" in found.message
    none = headers_finding("k", "manager apt\nlinux-headers-k:\n  Installed: (none)\n  Candidate: (none)")
    assert none.status == "warn"
    assert "linux-headers-k" in none.message
    dnf = headers_finding("5.14.0-427.el9.x86_64", "manager dnf")
    assert "kernel-devel-5.14.0-427.el9.x86_64" in dnf.message
    assert headers_finding("k", "manager dnf\navailable kernel-devel-k.x86_64  5.14  baseos").status == "pass"


def test_pci_gpus_and_nvswitches_on_an_hgx_board() -> None:
    devices = parse_pci(HGX_PCI)
    gpus = gpus_finding("h", devices)
    assert (
        gpus.message == "1 NVIDIA GPU(s) on the PCI bus: 1x 0x2330 H100 SXM5 80GB"
    )  # audio function ignored
    assert (
        nvswitch_finding(devices, "auto").message == "2 NVSwitch(es): bootstrap installs nvidia-fabricmanager"
    )
    assert nvswitch_finding(devices, False).status == "warn"
    assert nvswitch_finding(parse_pci(""), "auto").status == "pass"
    no_gpu = gpus_finding("cpu-1", parse_pci("0000:00:02.0 0x10de 0x1aeb 0x0c0330"))
    assert no_gpu.status == "fail"
    assert "remove cpu-1 from group gpu_nodes" in no_gpu.hint


def test_nouveau_and_secure_boot() -> None:
    assert nouveau_finding("nouveau\nnvidia_drm").status == "warn"
    assert nouveau_finding("nvidia\nnvidia_uvm").status == "pass"
    assert secure_boot_finding("SecureBoot enabled").status == "warn"
    assert secure_boot_finding("SecureBoot disabled\nPlatform is in Setup Mode").status == "pass"
    assert secure_boot_finding("EFI variables are not supported on this system").status == "pass"
    assert secure_boot_finding("efivar  6 0 0 0 1").status == "warn"
    assert secure_boot_finding("efivar  6 0 0 0 0").status == "pass"
    assert secure_boot_finding("efi unknown").status == "warn"


def test_installed_driver_from_proc_or_nvidia_smi() -> None:
    assert driver_finding(PROC_DRIVER_VERSION, "", "550").message.startswith("driver 550.90.07 installed")
    other = driver_finding(PROC_DRIVER_VERSION_OPEN, "", "550")
    assert other.status == "warn"
    assert "570.86.15" in other.message
    assert driver_finding("", "550.90.07\nrc=0", "550").status == "pass"
    broken = driver_finding(
        "", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\nrc=9", "550"
    )
    assert broken.status == "warn"
    assert "kernel module not loaded: reboot required" in broken.message
    assert (
        driver_finding("", "absent", "550").message
        == "no NVIDIA driver installed: bootstrap installs branch 550"
    )


def test_container_runtimes_and_containerd_config() -> None:
    text = (
        "containerd containerd containerd.io 1.7.22 7f7fdf5fed64\ndocker Docker version 27.3.1, build ce12230"
    )
    assert parse_runtimes(text) == {"containerd": "1.7.22", "docker": "27.3.1"}
    assert runtime_finding(text, "").status == "pass"
    assert runtime_finding(text, "crio").status == "fail"
    assert runtime_finding("", "").status == "fail"
    assert runtime_finding("k3s k3s version v1.30.4+k3s1 (98262b5d)", "containerd").status == "pass"
    assert containerd_config_finding("", "1.7.22").status == "pass"
    assert "version = 3" in containerd_config_finding("", "2.0.0").message
    old = containerd_config_finding("file /etc/containerd/config.toml", "1.6.20")
    assert old.status == "warn"
    assert "containerd config migrate" in old.hint


def test_disk_space_thresholds() -> None:
    df = """Filesystem 1024-blocks Used Available Capacity Mounted on
/dev/sda1 41152736 40000000 524288 98% /
/dev/sdb1 41152736 100 41000000 1% /var"""
    root, var = disk_findings(df)
    assert (root.id, root.status, var.id, var.status) == ("disk-root", "fail", "disk-var", "pass")
    assert disk_findings("")[0].status == "warn"


def test_sudo_states() -> None:
    assert sudo_finding("0\nroot", "", "root").message == "connected as root"
    assert sudo_finding("1000\nops", "rc=0", "ops").status == "pass"
    asks = sudo_finding("1000\nops", "sudo: a password is required\nrc=1", "ops")
    assert asks.status == "warn"
    assert "--ask-become-pass" in asks.hint
    denied = sudo_finding("1000\nops", "ops is not in the sudoers file.\nrc=1", "ops")
    assert denied.status == "fail"
    assert "not in the sudoers file" in denied.message
