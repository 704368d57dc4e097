"""NVIDIA Fabric Manager on a host with NVSwitches, from the probe script's `fabricmanager` section.

On an HGX board the GPUs reach each other through NVSwitches, and CUDA does not start until Fabric
Manager has configured them: without it (or with one of another version than the driver's, which
it refuses), nvidia-smi lists the GPUs while every CUDA program fails with error 802, "system not
yet initialized". So the finding looks past "the package should be there" to what is running.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuctl.hosts.findings import Finding
from gpuctl.shell import command_line

SERVICE = "nvidia-fabricmanager"


@dataclass(frozen=True)
class FabricManager:
    """`systemctl show` of the service and the installed package, as the probe printed them."""

    load_state: str = ""  # loaded | not-found | "" (no systemd)
    active_state: str = ""  # active | inactive | failed | activating ...
    unit_file_state: str = ""  # enabled | disabled | ...
    package: str = ""  # nvidia-fabricmanager, nvidia-fabricmanager-550 ...
    version: str = ""  # the package's version, "550.90.07-1"

    @property
    def installed(self) -> bool:
        return bool(self.package) or self.load_state == "loaded"

    @property
    def upstream_version(self) -> str:
        """550.90.07 of 550.90.07-1 (Debian), 550.90.07-1.el9 (RPM) or 550.90.07."""
        return self.version.split("-", 1)[0].split(":")[-1]


def parse_fabricmanager(text: str) -> FabricManager:
    """`LoadState=`, `ActiveState=`, `UnitFileState=` lines and `package NAME VERSION` lines."""
    values: dict[str, str] = {}
    package, version = "", ""
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and key in ("LoadState", "ActiveState", "UnitFileState") and len(value.split()) == 1:
            values[key] = value.strip()  # not systemd's error text ("Failed to get unit file state ...")
        fields = line.split()
        if len(fields) == 3 and fields[0] == "package" and not package:
            package, version = fields[1], fields[2]
    return FabricManager(
        values.get("LoadState", ""), values.get("ActiveState", ""), values.get("UnitFileState", ""),
        package, version,
    )  # fmt: skip


def fabricmanager_finding(
    host: str, switches: int, service: FabricManager, driver_version: str | None
) -> Finding:
    """The `nvswitch` finding on a host with `switches` NVSwitches where Fabric Manager is wanted.

    `driver_version` is the working driver's version; None when no driver answers (not installed,
    or its kernel module not loaded yet: then Fabric Manager cannot run either).
    """
    label = f"{switches} NVSwitch(es)"
    not_ready = "CUDA fails with 'system not yet initialized' (error 802)"
    bootstrap = command_line("gpuctl", "bootstrap", "--phase", "host", "--limit", host)
    run_bootstrap = f"`{bootstrap}` installs it (matching the driver) and starts it"
    if not service.installed:
        if driver_version is None:
            return Finding("nvswitch", "pass", f"{label}: bootstrap installs {SERVICE}")
        return Finding(
            "nvswitch",
            "warn",
            f"{label} but {SERVICE} is not installed: {not_ready}",
            hint=run_bootstrap,
        )
    name = f"{service.package or SERVICE} {service.version}".strip()
    if driver_version is not None and service.version and service.upstream_version != driver_version:
        return Finding(
            "nvswitch",
            "warn",
            f"{label}: {name} does not match driver {driver_version}: Fabric Manager refuses to start",
            hint=run_bootstrap.replace("installs it", "reinstalls it"),
        )
    if service.active_state == "active":
        return Finding("nvswitch", "pass", f"{label}: {name} active")
    if driver_version is None and service.unit_file_state == "enabled":
        return Finding("nvswitch", "pass", f"{label}: {name} enabled, starts once the driver is loaded")
    state = f"{service.active_state or 'not running'}, {service.unit_file_state or 'not enabled'}"
    return Finding(
        "nvswitch",
        "warn",
        f"{label} but {SERVICE} is not running ({state}): {not_ready}",
        hint=f"`systemctl enable --now {SERVICE}` on {host} (`journalctl -u {SERVICE}` says why it stopped); "
        f"or {run_bootstrap}",
    )


def nvl_rack_finding(gpus: int, service: FabricManager) -> Finding:
    """The `nvswitch` finding on a GB200-class compute tray (an NVL rack).

    There the NVLink Switch trays run the fabric (their NVOS carries Fabric Manager and NMX), so no
    NVSwitch is on the host's PCI bus and a host Fabric Manager has nothing to manage; the nodes
    run IMEX instead (the DRA driver's ComputeDomains, or the host nvidia-imex service).
    """
    label = f"{gpus} GB200-class GPU(s) of an NVL rack"
    if service.active_state == "active" or service.unit_file_state == "enabled":
        return Finding(
            "nvswitch",
            "warn",
            f"{label}: {SERVICE} is {service.active_state or service.unit_file_state} on the host, but the "
            "rack's NVLink Switch trays run the fabric: it fails to start and delays boot",
            hint=f"`systemctl disable --now {SERVICE}`; gpuctl's driver role leaves it out on NVL racks",
        )
    fabric = "the NVLink Switch trays run the fabric (no host Fabric Manager); IMEX per node"
    return Finding("nvswitch", "pass", f"{label}: {fabric}")
