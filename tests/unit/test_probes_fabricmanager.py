"""Preflight's `nvswitch` finding: Fabric Manager on a host with NVSwitches, from the probe's sections.

The section texts are what the probe script printed on the host tier's HGX test nodes
(tests/hosts/test_fabricmanager_and_unloaded_driver.py runs the same cases live).
"""

from __future__ import annotations

from gpuctl.hosts.fabricmanager import parse_fabricmanager
from gpuctl.hosts.probe_script import PROBE_SCRIPT
from gpuctl.hosts.probes import nvswitch_finding, parse_pci

HGX_PCI = (
    "0000:18:00.0 0x10de 0x2330 0x030200\n0000:05:00.0 0x10de 0x22a3 0x068000\n"
    "0000:06:00.0 0x10de 0x22a3 0x068000"
)
WORKING_DRIVER = {"driver": "", "nvidia-smi": "550.90.07\n550.90.07\nrc=0"}
NOT_LOADED = {
    "driver": "",
    "nvidia-smi": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\nrc=9",
}
ACTIVE = (
    "LoadState=loaded\nActiveState=active\nUnitFileState=enabled\npackage nvidia-fabricmanager 550.90.07-1"
)
# systemd's answer for a unit that does not exist, then no package line.
MISSING = (
    "LoadState=not-found\nActiveState=inactive\n"
    "UnitFileState=Failed to get unit file state for nvidia-fabricmanager.service: No such file or directory"
)


def finding(fabricmanager: str, driver: dict[str, str]) -> tuple[str, str, str]:
    result = nvswitch_finding(parse_pci(HGX_PCI), "auto", {**driver, "fabricmanager": fabricmanager}, "hgx-0")
    return result.status, result.message, result.hint


def test_the_probe_reads_the_service_and_the_package() -> None:
    assert "s fabricmanager" in PROBE_SCRIPT
    assert "systemctl show -p LoadState -p ActiveState -p UnitFileState nvidia-fabricmanager" in PROBE_SCRIPT
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
    assert finding(MISSING, {"driver": "", "nvidia-smi": "absent"})[:2] == (
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
    assert nvswitch_finding(parse_pci(""), "auto", {"fabricmanager": MISSING}).status == "pass"
    assert nvswitch_finding(parse_pci(HGX_PCI), False, {"fabricmanager": ACTIVE}).status == "warn"
