"""What a host's NVIDIA driver is doing, from the real output of nvidia-smi and dkms (pure functions).

Preflight reads the outputs with its probe script; bootstrap gets them from the driver role's
`gpuctl_driver_state` statistics. Both say the same thing in the same words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# nvidia-smi on a host whose driver packages are installed but whose kernel module is not loaded
# (exit 9), verbatim from Debian 12's nvidia-smi 535.261.03 on a node without the module:
#   NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that
#   the latest NVIDIA driver is installed and running.
NOT_LOADED_RE = re.compile(r"couldn't communicate with the NVIDIA driver")
# The loaded module is older or newer than the user-space libraries (upgrade without a reboot).
MISMATCH_RE = re.compile(r"Driver/library version mismatch")

REBOOT_REQUIRED = "driver installed, kernel module not loaded: reboot required"
VERSION_MISMATCH = "driver upgraded, the loaded kernel module is another version: reboot required"


@dataclass(frozen=True)
class DriverState:
    """`state`: absent | working | reboot_required | failing; `message` says it in words."""

    state: str
    message: str
    reboot_required: bool = False
    dkms: str = ""  # "DKMS: no headers for the running kernel <ver>" when that is the case
    hint: str = ""  # what to do about a reboot gpuctl held back (a node of a live cluster)
    # The role's converged gate failed on this host: the run changes it (in check mode: would).
    would_change: bool = False

    def notes(self) -> tuple[str, ...]:
        """What a person must act on: a driver that does not answer, a DKMS build that cannot happen,
        a reboot left to them."""
        needs_action = self.state in ("reboot_required", "failing")
        return tuple(line for line in (self.message if needs_action else "", self.dkms, self.hint) if line)


def nvidia_smi_state(returncode: int | None, output: str) -> DriverState:
    """Classify one nvidia-smi run; `returncode` None means nvidia-smi is not installed."""
    first = next((line.strip() for line in output.splitlines() if line.strip()), "")
    if returncode is None:
        return DriverState("absent", "no NVIDIA driver installed")
    if returncode == 0:
        return DriverState("working", "driver working: nvidia-smi answers")
    if NOT_LOADED_RE.search(output):
        return DriverState(
            "reboot_required", f"{REBOOT_REQUIRED} (nvidia-smi, exit {returncode}: {first})", True
        )
    if MISMATCH_RE.search(output):
        return DriverState(
            "reboot_required", f"{VERSION_MISMATCH} (nvidia-smi, exit {returncode}: {first})", True
        )
    return DriverState("failing", f"nvidia-smi fails (exit {returncode}): {first or 'no output'}")


def dkms_problem(kernel: str, dkms_status: str, headers_present: bool) -> str:
    """The DKMS finding for the running kernel, or "" when DKMS built the module (or is not used).

    `dkms status` prints "<module>/<version>: added" until the module is built for some kernel,
    then "<module>/<version>, <kernel>, <arch>: installed".
    """
    modules = [line.strip() for line in dkms_status.splitlines() if re.match(r"^\S+/\S+[,:]", line.strip())]
    if not modules or headers_present:
        return ""
    built = re.compile(rf",\s*{re.escape(kernel)},[^:]*:\s*installed")
    if any(built.search(line) for line in modules):
        return ""
    return f"DKMS: no headers for the running kernel {kernel} ({'; '.join(modules)})"


def from_role_report(report: Mapping[str, Any]) -> DriverState:
    """The state the driver role reported for one host (`gpuctl_driver_state`, see reboot.yml)."""
    rc = _int(report.get("nvidia_smi_rc"))
    output = str(report.get("nvidia_smi") or "")
    state = nvidia_smi_state(rc, output)
    if _true(report.get("reboot_required")) and state.state == "absent":  # check mode, before the install
        state = DriverState("absent", "no NVIDIA driver installed yet: the install will need a reboot", True)
    elif _true(report.get("reboot_required")) and state.state != "reboot_required":
        upgraded = _true(report.get("module_loaded"))  # the old module still runs the GPUs
        state = DriverState("reboot_required", VERSION_MISMATCH if upgraded else REBOOT_REQUIRED, True)
    dkms = dkms_problem(
        str(report.get("kernel") or "?"), str(report.get("dkms") or ""), _true(report.get("headers_present"))
    )
    would_change = _true(report.get("would_change"))
    return DriverState(state.state, state.message, state.reboot_required, dkms, would_change=would_change)


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return None if number < 0 else number


def _true(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "yes", "1")
