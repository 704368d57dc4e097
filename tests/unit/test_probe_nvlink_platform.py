"""GB200-class systems (NVL racks) versus HGX NVSwitch baseboards, from the host probe's PCI read.

The GB200 compute tray's PCI identity is lspci's on one (NVIDIA/mig-parted#227 and
NVIDIA/kubevirt-gpu-device-plugin#154): "0008:01:00.0 3D controller [0302]: NVIDIA Corporation
Device [10de:2941]", each GPU in a PCI domain of its own; no NVSwitch on the host's bus (the rack's
NVLink Switch trays carry them). The HGX H100 board's are the ones test_probes_fabricmanager.py uses.
"""

from __future__ import annotations

from gpuctl.hosts.driver_state import VERSION_MISMATCH, from_role_report
from gpuctl.hosts.host_state import parse_host_state
from gpuctl.hosts.host_support import host_support
from gpuctl.hosts.probes import nvswitch_finding
from tests.probe_captures import HOST_PROBE, pci_device

GB200_TRAY = [pci_device(f"000{domain}:01:00.0", "0x2941", "0x030200") for domain in (8, 9)]
HGX_H100 = [
    pci_device("0000:18:00.0", "0x2330", "0x030200"),
    pci_device("0000:05:00.0", "0x22a3", "0x068000"),
]
PCIE_L40S = [pci_device("0000:3b:00.0", "0x26b9", "0x030200")]
FM_ENABLED = (
    "LoadState=loaded\nActiveState=failed\nUnitFileState=enabled\npackage nvidia-fabricmanager 580.95.05-1"
)


def test_the_nvl_rack_gpu_ids_come_from_the_file_the_roles_read() -> None:
    assert "0x2941" in host_support().nvl_rack_gpu_device_ids


def test_each_platform_is_told_apart_by_its_pci_bus() -> None:
    platforms = [
        parse_host_state({"pci": pci}).nvlink_platform for pci in (GB200_TRAY, HGX_H100, PCIE_L40S, [])
    ]
    assert platforms == ["nvl_rack", "hgx_nvswitch", "none", "none"]


def test_a_gb200_tray_needs_no_host_fabric_manager() -> None:
    finding = nvswitch_finding(parse_host_state({"pci": GB200_TRAY, "fabricmanager": ""}), "auto", "gb200-0")
    assert (finding.status, finding.message) == (
        "pass",
        "2 GB200-class GPU(s) of an NVL rack: the NVLink Switch trays run the fabric "
        "(no host Fabric Manager); IMEX per node",
    )


def test_a_host_fabric_manager_on_a_gb200_tray_is_a_warning() -> None:
    state = parse_host_state({"pci": GB200_TRAY, "fabricmanager": FM_ENABLED})
    finding = nvswitch_finding(state, "auto", "gb200-0")
    assert finding.status == "warn"
    assert "nvidia-fabricmanager is failed on the host" in finding.message
    assert finding.hint.startswith("`systemctl disable --now nvidia-fabricmanager`")


def test_the_probe_reads_the_loaded_module_version() -> None:
    assert "module_version" in HOST_PROBE.HOST_SECTIONS
    state = parse_host_state({"modules": ["nvidia"], "module_version": "570.86.15"})
    assert (state.module_version, "nvidia" in state.modules) == ("570.86.15", True)
    assert parse_host_state({}).module_version == ""


def test_an_upgrade_with_the_old_module_loaded_reports_the_reboot_it_needs() -> None:
    report = {"nvidia_smi_rc": 0, "nvidia_smi": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)",
              "kernel": "6.8.0-45-generic", "reboot_required": True, "module_loaded": True,
              "would_change": True}  # fmt: skip
    state = from_role_report(report)
    assert (state.state, state.message, state.reboot_required, state.would_change) == (
        "reboot_required", VERSION_MISMATCH, True, True,
    )  # fmt: skip
    converged = from_role_report({"nvidia_smi_rc": 0, "reboot_required": False, "would_change": False})
    assert (converged.state, converged.would_change) == ("working", False)
