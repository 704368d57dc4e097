"""Preflight's `nvswitch` finding: Fabric Manager on a host with NVSwitches, from the host probe's state.

The `fabricmanager` texts are what systemd and dpkg print on the host tier's HGX test nodes
(tests/hosts/test_fabricmanager_and_unloaded_driver.py runs the same cases live).
"""

from __future__ import annotations

from typing import Any

from gpuctl.hosts.fabricmanager import parse_fabricmanager
from gpuctl.hosts.host_state import parse_host_state
from gpuctl.hosts.probes import nvswitch_finding
from tests.probe_captures import HOST_PROBE, pci_device

HGX_PCI = [
    pci_device("0000:18:00.0", "0x2330", "0x030200"),
    pci_device("0000:05:00.0", "0x22a3", "0x068000"),
    pci_device("0000:06:00.0", "0x22a3", "0x068000"),
]
WORKING_DRIVER = {
    "nvidia_smi": {"rc": 0, "stdout": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)", "stderr": ""},
    "nvidia_smi_query": {"rc": 0, "stdout": "NVIDIA H100 80GB HBM3, 81559, 550.90.07", "stderr": ""},
}
NOT_LOADED_TEXT = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)
NOT_LOADED = {
    "nvidia_smi": {"rc": 9, "stdout": NOT_LOADED_TEXT, "stderr": ""},
    "nvidia_smi_query": {"rc": 9, "stdout": NOT_LOADED_TEXT, "stderr": ""},
}
NO_DRIVER = {
    "nvidia_smi": {"rc": -1, "stdout": "", "stderr": "", "msg": "nvidia-smi: No such file or directory"}
}
ACTIVE = (
    "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\npackage nvidia-fabricmanager 550.90.07-1"
)
# systemd's answer for a unit that does not exist, then no package line.
MISSING = (
    "LoadState=not-found\nActiveState=inactive\n"
    "UnitFileState=Failed to get unit file state for nvidia-fabricmanager.service: No such file or directory"
)


def finding(
    fabricmanager: str, driver: dict[str, Any], pci: list[dict[str, str]] = HGX_PCI, wanted: object = "auto"
) -> tuple[str, str, str]:
    state = parse_host_state({"pci": pci, "fabricmanager": fabricmanager, **driver})
    result = nvswitch_finding(state, wanted, "hgx-0")
    return result.status, result.message, result.hint


def test_the_probe_reads_the_service_and_the_package() -> None:
    assert "fabricmanager" in HOST_PROBE.HOST_SECTIONS
    service = parse_fabricmanager(MISSING)
    assert (service.load_state, service.unit_file_state, service.installed) == ("not-found", "", False)
    held = parse_fabricmanager(
        ACTIVE.replace("package ", "package ") + "\npackage nvidia-fabricmanager-dev 1"
    )
    assert (held.package, held.version, held.upstream_version) == (
        "nvidia-fabricmanager",
        "550.90.07-1",
        "550.90.07",
    )


def test_running_fabric_manager_of_the_driver_version_passes() -> None:
    assert finding(ACTIVE, WORKING_DRIVER)[:2] == (
        "pass",
        "2 NVSwitch(es): nvidia-fabricmanager 550.90.07-1 active",
    )


def test_no_driver_yet_means_bootstrap_installs_both() -> None:
    assert finding(MISSING, NO_DRIVER)[:2] == (
        "pass",
        "2 NVSwitch(es): bootstrap installs nvidia-fabricmanager",
    )


def test_missing_fabric_manager_beside_a_working_driver_warns() -> None:
    status, message, hint = finding(MISSING, WORKING_DRIVER)
    assert status == "warn"
    assert message == (
        "2 NVSwitch(es) but nvidia-fabricmanager is not installed: "
        "CUDA fails with 'system not yet initialized' (error 802)"
    )
    assert hint.startswith("`gpuctl bootstrap --phase host --limit hgx-0` installs it")


def test_stopped_fabric_manager_warns_with_the_commands_to_start_it() -> None:
    stopped = ACTIVE.replace("ActiveState=active", "ActiveState=failed").replace("=enabled", "=disabled")
    status, message, hint = finding(stopped, WORKING_DRIVER)
    assert status == "warn"
    assert "nvidia-fabricmanager is not running (failed, disabled)" in message
    assert "`systemctl enable --now nvidia-fabricmanager` on hgx-0" in hint
    assert "journalctl -u nvidia-fabricmanager" in hint


def test_fabric_manager_of_another_version_than_the_driver_warns() -> None:
    other = ACTIVE.replace("550.90.07-1", "570.86.15-1")
    status, message, _ = finding(other, WORKING_DRIVER)
    assert status == "warn"
    assert message == (
        "2 NVSwitch(es): nvidia-fabricmanager 570.86.15-1 does not match driver 550.90.07: "
        "Fabric Manager refuses to start"
    )


def test_enabled_fabric_manager_waits_for_the_driver_module() -> None:
    waiting = ACTIVE.replace("ActiveState=active", "ActiveState=inactive")
    assert finding(waiting, NOT_LOADED)[:2] == (
        "pass",
        "2 NVSwitch(es): nvidia-fabricmanager 550.90.07-1 enabled, starts once the driver is loaded",
    )


def test_hosts_without_nvswitches_or_with_fabric_manager_off_are_unchanged() -> None:
    assert finding(MISSING, WORKING_DRIVER, pci=[])[0] == "pass"
    assert finding(ACTIVE, WORKING_DRIVER, wanted=False)[0] == "warn"
