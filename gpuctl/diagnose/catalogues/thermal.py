"""GPU thermal and power slowdowns: the clocks event (formerly "throttle") reasons `nvidia-smi -q`
reports as Active in its Performance section.

nvidia-smi prints one line per reason under `Clocks Event Reasons` (`Clocks Throttle Reasons`
before driver 535), each `Active` or `Not Active`; NVML's `nvmlClocksEventReason*` documentation
says what each means. Only the hardware's and the driver's protective slowdowns are failures here:
`Idle`, `Applications Clocks Setting`, `SW Power Cap` (the board's power limit reached under load)
and `Sync Boost` are normal operation, and the healthy fields `GPU Shutdown Temp` and `GPU
Slowdown Temp` are thresholds, not events. The kernel's `GPU has fallen off the bus` after a
thermal shutdown is the table's gpu.fallen-off-bus; the thermal Xids are the Xid catalogue's.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_NVML = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html"
_SMI = "https://docs.nvidia.com/deploy/nvidia-smi/index.html"

_CHECK = (
    "on {node}: `nvidia-smi -q -d TEMPERATURE,PERFORMANCE,POWER -i GPU` (the current temperature "
    "against `GPU Slowdown Temp` and `GPU Shutdown Temp`, which reasons are Active)"
)
_COOLING = (
    "improve the cooling: clear the airflow path and check the chassis fans; a passively cooled "
    "data-center card (Tesla P4/T4/A2/L4/A10, ...) needs the forced front-to-back airflow of a "
    "server chassis (a duct or fan on a workstation or NAS)"
)
_POWER = (
    "check the GPU's power cables and the power supplies (`ipmitool sdr type 'Power Supply'`, the "
    "BMC's event log): a failed or undersized PSU, or a BMC that does not know the GPU model "
    "(it asserts the power brake for unknown cards: update the BMC firmware or use a supported "
    "configuration)"
)

CATALOGUE = Catalogue(
    id="thermal",
    title="GPU thermal and power slowdowns (nvidia-smi clocks event reasons)",
    source=_NVML,
    version="NVML clocks event reasons (driver 535+; Clocks Throttle Reasons before)",
    entries=(
        Entry(
            "hw-slowdown",
            "hardware slowdown",
            "the GPU's hardware cut its clocks by half or more (HW Slowdown is Active): the GPU is "
            "too hot, or an external power brake is asserted by the system (its power supply or "
            "its BMC); the `HW Thermal Slowdown` and `HW Power Brake Slowdown` lines under it say "
            "which. Left alone, a GPU that keeps overheating shuts down and falls off the bus",
            _CHECK + "; thermal: " + _COOLING + "; power brake: " + _POWER,
            "hardware",
            aliases=("HW Slowdown",),
            source=_NVML,
        ),
        Entry(
            "hw-thermal-slowdown",
            "hardware thermal slowdown",
            "the GPU reached its hardware slowdown temperature and its clocks were cut (HW Thermal "
            "Slowdown is Active): the card is not cooled enough (blocked airflow, failed fans, a "
            "passively cooled card without forced airflow); at `GPU Shutdown Temp` it turns itself "
            "off and NVML loses it (`Unable to determine the device handle ... Unknown Error`)",
            _CHECK + "; " + _COOLING,
            "hardware",
            aliases=("HW Thermal Slowdown",),
            source=_NVML,
        ),
        Entry(
            "hw-power-brake",
            "hardware power brake",
            "an external power brake signal slows the GPU (HW Power Brake Slowdown is Active): the "
            "system asserted it because a power supply failed or cannot deliver the load, or the "
            "server's BMC does not know the GPU model and brakes it (e.g. a V100 32GB in a Dell "
            "C4130)",
            _CHECK + "; " + _POWER,
            "hardware",
            aliases=("HW Power Brake Slowdown",),
            source=_NVML,
        ),
        Entry(
            "sw-thermal-slowdown",
            "driver thermal slowdown",
            "the driver lowered the clocks to keep the GPU (or its memory) under its maximum "
            "operating temperature (SW Thermal Slowdown is Active): the card runs too hot for "
            "its cooling",
            _CHECK + " (`GPU Max Operating Temp`, `Memory Current Temp`); " + _COOLING,
            "hardware",
            aliases=("SW Thermal Slowdown",),
            source=_NVML,
        ),
    ),
    applies_to=("nvidia-smi",),
    readers=(
        # `    HW Slowdown                       : Active` (only Active: `Not Active` is healthy).
        r"(?P<code>(?-i:HW Slowdown|HW Thermal Slowdown|HW Power Brake Slowdown|"
        r"SW Thermal Slowdown))\s*: Active\b",
    ),
)
