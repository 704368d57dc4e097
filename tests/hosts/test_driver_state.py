"""The driver state from real nvidia-smi and dkms output (pure functions; no node needed).

The outputs are captures from Debian 12's nvidia-smi 535.261.03 and dkms 3.0.10 on a test node
after `gpuctl_driver_source: distribution` (tests/hosts/test_distribution_driver.py produces them
live too).
"""

from __future__ import annotations

from gpuctl.hosts.driver_state import REBOOT_REQUIRED, dkms_problem, from_role_report, nvidia_smi_state
from gpuctl.hosts.host_state import Dkms, parse_host_state
from gpuctl.hosts.probes import dkms_finding, driver_finding

NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n"
)
MISMATCH = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: 535.261\n"
KERNEL = "6.1.0-26-amd64"


def test_not_loaded_means_reboot_required() -> None:
    state = nvidia_smi_state(9, NOT_LOADED)
    assert state.state == "reboot_required"
    assert state.reboot_required is True
    assert state.message == f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {NOT_LOADED.strip()})"


def test_other_outcomes() -> None:
    assert nvidia_smi_state(None, "").state == "absent"
    assert nvidia_smi_state(0, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)\n").state == "working"
    assert nvidia_smi_state(18, MISMATCH).reboot_required is True
    failing = nvidia_smi_state(
        12, "Unable to determine the device handle for GPU0000:19:00.0: Unknown Error\n"
    )
    assert (failing.state, failing.reboot_required) == ("failing", False)
    assert failing.message == (
        "nvidia-smi fails (exit 12): Unable to determine the device handle for GPU0000:19:00.0: Unknown Error"
    )


def test_dkms_added_but_not_built_without_headers() -> None:
    problem = dkms_problem(KERNEL, "nvidia-current/535.261.03: added\n", headers_present=False)
    assert problem == f"DKMS: no headers for the running kernel {KERNEL} (nvidia-current/535.261.03: added)"


def test_dkms_built_for_the_running_kernel_or_absent() -> None:
    built = f"nvidia-current/535.261.03, {KERNEL}, x86_64: installed\n"
    assert dkms_problem(KERNEL, built, headers_present=False) == ""
    assert dkms_problem(KERNEL, "nvidia-current/535.261.03: added\n", headers_present=True) == ""
    assert dkms_problem(KERNEL, "", headers_present=False) == ""
    other_kernel = "nvidia-current/535.261.03, 6.1.0-18-amd64, x86_64: installed\n"
    assert dkms_problem(KERNEL, other_kernel, headers_present=False).startswith("DKMS: no headers for")


def test_role_report_as_ansible_sends_it() -> None:
    report = {
        "kernel": KERNEL, "module_loaded": False, "newly_installed": True, "reboot_required": True,
        "reboot_policy": "never", "nvidia_smi_rc": 9, "nvidia_smi": NOT_LOADED.strip(),
        "dkms": "nvidia-current/535.261.03: added", "headers_present": False, "version": "535.261.03",
    }  # fmt: skip
    state = from_role_report(report)
    assert state.notes() == (
        f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {NOT_LOADED.strip()})",
        f"DKMS: no headers for the running kernel {KERNEL} (nvidia-current/535.261.03: added)",
    )
    absent = from_role_report({"nvidia_smi_rc": -1, "reboot_required": False, "dkms": "", "kernel": KERNEL})
    assert (absent.state, absent.notes()) == ("absent", ())
    checked = from_role_report({"nvidia_smi_rc": -1, "reboot_required": True, "kernel": KERNEL})  # check mode
    assert (checked.state, checked.reboot_required) == ("absent", True)
    assert checked.message == "no NVIDIA driver installed yet: the install will need a reboot"


def test_preflight_findings_from_the_host_probe() -> None:
    state = parse_host_state({"driver": "", "nvidia_smi": {"rc": 9, "stdout": NOT_LOADED, "stderr": ""}})
    driver = driver_finding(state, "535")
    assert (driver.status, driver.message) == (
        "warn",
        f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {NOT_LOADED.strip()})",
    )
    dkms = dkms_finding(KERNEL, Dkms("nvidia-current/535.261.03: added", headers_present=False))
    assert dkms is not None
    assert dkms.status == "warn"
    assert dkms.message.startswith(f"DKMS: no headers for the running kernel {KERNEL}")
    assert dkms_finding(KERNEL, None) is None
