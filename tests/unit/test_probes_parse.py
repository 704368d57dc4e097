"""Preflight's findings from the one host probe's state, fed with output captured from real hosts
(a test node, Ubuntu, RHEL, HGX; tests/probe_captures.py lays it into the probe's document)."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from gpuctl.hosts.host_state import (
    CommandResult,
    ContainerdConfig,
    HostState,
    ProbeOutputError,
    parse_host_state,
    parse_key_values,
    parse_probe_output,
)
from gpuctl.hosts.probe_script import probe_script
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
    runtime_finding,
    secure_boot_finding,
    sudo_finding,
)
from tests.probe_captures import HOST_PROBE, preflight_document

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
{pci}

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
TEST_NODE_PCI = """0000:18:00.0 0x10de 0x2330 0x030200
0000:2a:00.0 0x10de 0x2330 0x030200
0000:3a:00.0 0x10de 0x2330 0x030200
0000:5d:00.0 0x10de 0x2330 0x030200"""
TEST_NODE_OUTPUT = TEST_NODE_OUTPUT.replace("{pci}", TEST_NODE_PCI)

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


def state_of(output: str, **changes: Any) -> HostState:
    return parse_host_state({**preflight_document(output), **changes})


def pci(text: str) -> list[dict[str, str]]:
    """`slot vendor device class` lines as the probe's `pci` section."""
    return preflight_document(TEST_NODE_OUTPUT.replace(TEST_NODE_PCI, text))["pci"]


def test_the_probe_runs_here_and_its_answer_parses() -> None:
    """The real script on this machine, through the same shell wrapper preflight sends over SSH."""
    done = subprocess.run(["sh", "-s"], input=probe_script(), capture_output=True, text=True, check=True)
    state = parse_probe_output(done.stdout)
    assert state.sections == set(HOST_PROBE.HOST_SECTIONS)
    assert state.kernel
    assert state.os_release.get("ID")
    assert "/" in state.disks
    only = subprocess.run(
        ["sh", "-s"], input=probe_script(["pci"]), capture_output=True, text=True, check=True
    )
    assert parse_probe_output(only.stdout).sections == {"pci"}


def test_output_without_the_document_is_refused() -> None:
    with pytest.raises(ProbeOutputError, match="no Python interpreter"):
        parse_probe_output("no Python interpreter found (python3)\n")
    with pytest.raises(ProbeOutputError):
        parse_probe_output(json.dumps({"files": {}}))


def test_the_probe_script_parses_as_the_oldest_python_it_claims() -> None:
    """EL 8's platform-python is 3.6: no grammar newer than that in the script."""
    ast.parse(Path(HOST_PROBE.__file__ or "").read_text(encoding="utf-8"), feature_version=(3, 6))


def test_a_fresh_test_node_can_be_bootstrapped() -> None:
    findings = host_findings("gpu-node-0", "gpuadmin", state_of(TEST_NODE_OUTPUT), {})
    by_id = {finding.id: finding for finding in findings}
    assert all(finding.status != "fail" for finding in findings), findings
    assert by_id["gpus"].message == "4 NVIDIA GPU(s) on the PCI bus: 4x 0x2330 H100 SXM5 80GB"
    assert by_id["kernel-headers"].status == "warn"
    assert by_id["container-runtime"].message == "found containerd 1.6.20"
    assert by_id["containerd-config"].message == "/etc/containerd/config.toml: config version 2"
    assert [f.id for f in findings if f.id.startswith("disk")] == ["disk-root"]
    assert "probe" not in by_id


def test_the_disk_threshold_setting_applies_as_in_the_preflight_role() -> None:
    findings = host_findings("h", "u", state_of(TEST_NODE_OUTPUT), {"gpuctl_preflight_min_free_mib": 900000})
    assert [(f.id, f.status) for f in findings if f.id.startswith("disk")] == [("disk-root", "fail")]


@pytest.mark.parametrize(
    ("os_release", "status"),
    [
        ('ID=ubuntu\nVERSION_ID="24.04"\nPRETTY_NAME="Ubuntu 24.04.1 LTS"', "pass"),
        ('ID=ubuntu\nVERSION_ID="22.04"', "pass"),
        ('ID=ubuntu\nVERSION_ID="20.04"', "fail"),
        ('ID=ubuntu\nVERSION_ID="22.10"', "fail"),
        ('ID="rocky"\nVERSION_ID="9.4"', "pass"),
        ('ID="rhel"\nVERSION_ID="8.10"', "pass"),
        ('ID="rhel"\nVERSION_ID="7.9"', "fail"),
        ("ID=debian\nVERSION_ID=11", "fail"),
        ("", "fail"),
    ],
)
def test_supported_operating_systems(os_release: str, status: str) -> None:
    assert os_finding(parse_key_values(os_release)).status == status


def headers_state(kernel: str, text: str) -> HostState:
    return state_of(TEST_NODE_OUTPUT.replace("6.1.0-28-amd64", kernel).replace("manager apt", text))


def test_kernel_headers_installed_candidate_or_missing() -> None:
    assert (
        headers_finding(headers_state("k", "installed /usr/src/linux-headers-k\nmanager apt")).status
        == "pass"
    )
    found = headers_finding(headers_state("6.8.0-45-generic", APT_POLICY_CANDIDATE))
    assert found.status == "pass"
    assert "6.8.0-45.45 available" in found.message
    none = headers_finding(
        headers_state("k", "manager apt\nlinux-headers-k:\n  Installed: (none)\n  Candidate: (none)")
    )
    assert none.status == "warn"
    assert "linux-headers-k" in none.message
    dnf = headers_finding(headers_state("5.14.0-427.el9.x86_64", "manager dnf"))
    assert "kernel-devel-5.14.0-427.el9.x86_64" in dnf.message
    offered = headers_state("k", "manager dnf\navailable kernel-devel-k.x86_64  5.14  baseos")
    assert headers_finding(offered).status == "pass"


def test_pci_gpus_and_nvswitches_on_an_hgx_board() -> None:
    hgx = state_of(TEST_NODE_OUTPUT, pci=pci(HGX_PCI))
    gpus = gpus_finding("h", hgx.gpus)
    assert (
        gpus.message == "1 NVIDIA GPU(s) on the PCI bus: 1x 0x2330 H100 SXM5 80GB"
    )  # audio function ignored
    assert nvswitch_finding(hgx, "auto").message == "2 NVSwitch(es): bootstrap installs nvidia-fabricmanager"
    assert nvswitch_finding(hgx, False).status == "warn"
    assert nvswitch_finding(state_of(TEST_NODE_OUTPUT, pci=[]), "auto").status == "pass"
    no_gpu = gpus_finding(
        "cpu-1", state_of(TEST_NODE_OUTPUT, pci=pci("0000:00:02.0 0x10de 0x1aeb 0x0c0330")).gpus
    )
    assert no_gpu.status == "fail"
    assert "remove cpu-1 from group gpu_nodes" in no_gpu.hint


@pytest.mark.parametrize(
    ("said", "state", "status"),
    [
        ("SecureBoot enabled", "enabled", "warn"),
        ("SecureBoot disabled\nPlatform is in Setup Mode", "disabled", "pass"),
        ("EFI variables are not supported on this system", "bios", "pass"),
        ("efivar 6 0 0 0 1", "enabled", "warn"),
        ("efivar 6 0 0 0 0", "disabled", "pass"),
        ("efi unknown", "unknown", "warn"),
        ("bios", "bios", "pass"),
    ],
)
def test_secure_boot_as_the_probe_classifies_it(said: str, state: str, status: str) -> None:
    assert HOST_PROBE.secure_boot_state(said) == state
    assert secure_boot_finding(state).status == status


def test_nouveau() -> None:
    assert nouveau_finding(frozenset({"nouveau", "nvidia_drm"})).status == "warn"
    assert nouveau_finding(frozenset({"nvidia", "nvidia_uvm"})).status == "pass"


def driver_state(proc: str = "", smi: dict[str, Any] | None = None, query: str = "") -> HostState:
    smi = smi or {"rc": -1, "stdout": "", "stderr": ""}
    query_rc = 0 if query else smi["rc"]
    return state_of(
        TEST_NODE_OUTPUT,
        driver=proc,
        nvidia_smi=smi,
        nvidia_smi_query={"rc": query_rc, "stdout": query, "stderr": ""},
    )


def test_installed_driver_from_proc_or_nvidia_smi() -> None:
    assert driver_finding(driver_state(PROC_DRIVER_VERSION), "550").message.startswith(
        "driver 550.90.07 installed"
    )
    other = driver_finding(driver_state(PROC_DRIVER_VERSION_OPEN), "550")
    assert other.status == "warn"
    assert "570.86.15" in other.message
    working = {"rc": 0, "stdout": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)", "stderr": ""}
    assert (
        driver_finding(
            driver_state(smi=working, query="NVIDIA H100 80GB HBM3, 81559, 550.90.07"), "550"
        ).status
        == "pass"
    )
    not_loaded = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    broken = driver_finding(driver_state(smi={"rc": 9, "stdout": not_loaded, "stderr": ""}), "550")
    assert broken.status == "warn"
    assert "kernel module not loaded: reboot required" in broken.message
    assert (
        driver_finding(driver_state(), "550").message
        == "no NVIDIA driver installed: bootstrap installs branch 550"
    )


def test_container_runtimes_and_containerd_config() -> None:
    lines = {
        "containerd": "containerd containerd.io 1.7.22 7f7fdf5fed64",
        "docker": "Docker version 27.3.1, build ce12230",
    }
    runtimes = state_of(TEST_NODE_OUTPUT, runtimes=lines).runtimes
    assert runtimes == {"containerd": "1.7.22", "docker": "27.3.1"}
    assert runtime_finding(runtimes, "").status == "pass"
    assert runtime_finding(runtimes, "crio").status == "fail"
    assert runtime_finding({}, "").status == "fail"
    k3s = state_of(TEST_NODE_OUTPUT, runtimes={"k3s": "k3s version v1.30.4+k3s1 (98262b5d)"}).runtimes
    assert runtime_finding(k3s, "containerd").status == "pass"
    assert containerd_config_finding((), "1.7.22").status == "pass"
    assert "version = 3" in containerd_config_finding((), "2.0.0").message
    old = containerd_config_finding((ContainerdConfig("/etc/containerd/config.toml", True, ""),), "1.6.20")
    assert old.status == "warn"
    assert "containerd config migrate" in old.hint


def test_disk_space_thresholds() -> None:
    root, var = disk_findings({"/": 524288 * 1024, "/var": 41000000 * 1024})
    assert (root.id, root.status, var.id, var.status) == ("disk-root", "fail", "disk-var", "pass")
    assert disk_findings({})[0].status == "warn"


def test_sudo_states() -> None:
    assert sudo_finding(0, None, "root").message == "connected as root"
    assert sudo_finding(1000, CommandResult(0), "ops").status == "pass"
    asks = sudo_finding(1000, CommandResult(1, "sudo: a password is required"), "ops")
    assert asks.status == "warn"
    assert "--ask-become-pass" in asks.hint
    denied = sudo_finding(1000, CommandResult(1, "ops is not in the sudoers file."), "ops")
    assert denied.status == "fail"
    assert "not in the sudoers file" in denied.message
