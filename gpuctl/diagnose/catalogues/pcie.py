"""PCIe Advanced Error Reporting (AER): what the Linux kernel logs when a PCIe link or device (a
GPU, its root port, a switch or riser on the way) reports an error (drivers/pci/pcie/aer.c) and
how its recovery went (drivers/pci/pcie/err.c).

A report is a few lines: the root port received an error message (`AER: Uncorrected (Fatal) error
received`, `AER: Multiple Corrected error received`), its severity and layer (`PCIe Bus Error:
severity=Uncorrected (Fatal), type=Transaction Layer, ...`), the status register (`device
[10de:2330] error status/mask=...`) and one line per error bit (`[ 5] SDES`, `[14] CmpltTO
(First)`; kernels before 4.17 spell them out: `Surprise Down Error`, `Completion Timeout`).
Newer kernels say `Uncorrectable`/`Correctable` where older ones say `Uncorrected`/`Corrected`.

Corrected errors (Receiver Error, Bad TLP, Bad DLLP, replay timeouts) were fixed by the link
itself: a signal-integrity problem that costs bandwidth and may foretell worse. Uncorrectable ones
lose data: a fatal one takes the link down (the GPU then falls off the bus: Xid 79, which this
family explains and therefore comes before).
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

SOURCE = "https://docs.kernel.org/PCI/pcieaer-howto.html"
_AER = "https://github.com/torvalds/linux/blob/master/drivers/pci/pcie/aer.c"
_ERR = "https://github.com/torvalds/linux/blob/master/drivers/pci/pcie/err.c"

_LINK = (
    "`sudo lspci -vvv -s BUS | grep -e LnkCap -e LnkSta -e UESta -e CESta` (BUS: the device of "
    "the line and the GPU behind that port, `lspci -tv`) shows the link's speed and width and the "
    "error bits"
)
_HARDWARE = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`); "
    + _LINK
    + "; power the node off, reseat the GPU and its riser or cable, check its power cables and "
    "the PSU's capacity and the cooling; if it repeats, move the GPU to another slot or set the "
    "slot to a lower PCIe generation in the BIOS (Gen4 instead of Gen5), and replace the GPU, "
    "riser or board the fault follows"
)
_SIGNAL = (
    _LINK + "; a link trained below its capability (a lower speed or width in LnkSta than LnkCap) "
    "or a count that keeps rising means a marginal link: reseat the GPU and riser, replace the "
    "riser or cable, or set the slot to a lower PCIe generation in the BIOS; occasional corrected "
    "errors lose no data and can be left alone (`pcie_aspm=off` on the kernel command line if "
    "they follow ASPM power state changes)"
)

_ENTRIES = (
    Entry(
        "fatal",
        "PCIe uncorrectable fatal error",
        "a PCIe link reported an uncorrectable fatal error (the bit lines after it name it: "
        "Surprise Down, the link dropped; Completion Timeout, the device stopped answering): the "
        "link to the GPU is unreliable and is reset, the GPU stops answering (it falls off the "
        "bus, Xid 79) and its jobs hang or fail; a GPU, riser, slot, power or thermal fault",
        _HARDWARE,
        "hardware",
        texts=(
            "severity=Uncorrected (Fatal)",
            "severity=Uncorrectable (Fatal)",
            "Uncorrected (Fatal) error received",
            "Uncorrectable (Fatal) error message received",
        ),
        source=_AER,
    ),
    Entry(
        "non-fatal",
        "PCIe uncorrectable non-fatal error",
        "a PCIe device reported an uncorrectable error that left the link up (a transaction was "
        "lost: the bit lines after it name it, e.g. Completion Timeout or Unsupported Request); "
        "the driver of the device is asked to recover, and the GPU's jobs may fail",
        _HARDWARE,
        "hardware",
        texts=(
            "severity=Uncorrected (Non-Fatal)",
            "severity=Uncorrectable (Non-Fatal)",
            "Uncorrected (Non-Fatal) error received",
            "Uncorrectable (Non-Fatal) error message received",
        ),
        source=_AER,
    ),
    Entry(
        "recovery-failed",
        "PCIe error recovery failed",
        "the kernel could not recover the GPU's PCIe link after an uncorrectable error (the NVIDIA "
        "driver has no AER recovery callbacks): the GPU stays lost until it is reset or the node "
        "is rebooted, and the jobs on it hang; the error itself is a GPU, riser, slot, power or "
        "thermal fault",
        "reboot {node} to get the GPU back; then " + _HARDWARE,
        "hardware",
        texts=(
            "can't recover (no error_detected callback)",
            "AER: device recovery failed",
            "device has no AER-aware driver",
        ),
        source=_ERR,
    ),
    Entry(
        "dpc-containment",
        "PCIe Downstream Port Containment",
        "the PCIe port above the GPU contained an uncorrectable error by taking its link down "
        "(Downstream Port Containment): the GPU behind it disappears from the bus until the link "
        "is recovered, and its jobs fail; a GPU, riser, slot, power or thermal fault",
        "reboot {node} if the GPU does not come back (`nvidia-smi`); then " + _HARDWARE,
        "hardware",
        texts=("DPC: containment event", "DPC: unmasked uncorrectable error detected"),
        source="https://github.com/torvalds/linux/blob/master/drivers/pci/pcie/dpc.c",
    ),
    Entry(
        "corrected",
        "PCIe corrected errors",
        "a PCIe link reported errors it corrected itself (the bit lines name them: Receiver "
        "Error, Bad TLP, Bad DLLP, replay timeouts): no data was lost, but the link's signal is "
        "marginal (a riser, cable, slot or a link trained faster than it holds) and costs "
        "bandwidth; many of them foretell uncorrectable errors",
        _SIGNAL,
        "hardware",
        texts=(
            "severity=Corrected",
            "severity=Correctable",
            "Corrected error received",
            "Correctable error message received",
        ),
        source=_AER,
        transient=True,
    ),
    Entry(
        "surprise-down",
        "PCIe Surprise Down",
        "the PCIe link to the device went down unexpectedly (Surprise Down): the GPU lost power, "
        "crashed or lost contact (riser, cable, slot), so it fell off the bus",
        _HARDWARE,
        "hardware",
        aliases=("SDES", "Surprise Down Error"),
        source=_AER,
    ),
    Entry(
        "completion-timeout",
        "PCIe Completion Timeout",
        "a read from the device got no answer in time (Completion Timeout): the GPU hung, lost "
        "power or its link, so the CPU's accesses to it fail",
        _HARDWARE,
        "hardware",
        aliases=("CmpltTO", "Completion Timeout"),
        source=_AER,
    ),
    Entry(
        "transaction-error",
        "PCIe uncorrectable transaction or link-protocol error",
        "the link carried a transaction it could not use (a malformed or poisoned TLP, an "
        "unsupported request, an aborted or unexpected completion, a receiver overflow, an ECRC "
        "or data-link/flow-control protocol error): a faulty device or link, or a firmware/ACS "
        "setting the device does not expect",
        _HARDWARE + "; update the system BIOS and the GPU's VBIOS",
        "hardware",
        aliases=(
            "MalfTLP", "Malformed TLP", "TLP", "PoisonTLP", "Poisoned TLP", "UnsupReq",
            "Unsupported Request", "CmpltAbrt", "Completer Abort", "UnxCmplt",
            "Unexpected Completion", "RxOF", "Receiver Overflow", "ECRC", "ACSViol",
            "ACS Violation", "DLP", "Data Link Protocol", "FCP", "Flow Control Protocol",
            "UncorrIntErr", "Uncorrectable Internal Error",
        ),
        source=_AER,
    ),
    Entry(
        "link-signal",
        "PCIe corrected link error (signal integrity)",
        "the link corrected transmission errors (Receiver Error, Bad TLP, Bad DLLP, a replay "
        "rollover or timeout): the electrical link to the device is marginal (riser, cable, "
        "slot, or a PCIe generation faster than the link holds); no data was lost",
        _SIGNAL,
        "hardware",
        aliases=(
            "RxErr", "Receiver Error", "BadTLP", "Bad TLP", "BadDLLP", "Bad DLLP", "Rollover",
            "RELAY_NUM Rollover", "REPLAY_NUM Rollover", "Timeout", "Replay Timer Timeout",
        ),
        source=_AER,
        transient=True,
    ),
)  # fmt: skip

_BITS = sorted({alias for entry in _ENTRIES for alias in entry.aliases}, key=lambda name: (-len(name), name))

CATALOGUE = Catalogue(
    id="pcie",
    title="PCIe Advanced Error Reporting (Linux kernel AER)",
    source=SOURCE,
    version="Linux drivers/pci/pcie/aer.c and err.c (4.x to 6.x spellings)",
    entries=_ENTRIES,
    applies_to=("kernel", "host", "node"),
    readers=(
        # One line per error bit: `pcieport 0000:00:03.0:    [14] CmpltTO                (First)`;
        # the bit number in brackets (`[5 ]` in some kernels) tells it from a timestamp
        # (`[  101.287612]`).
        r"(?-i:\[)[ ]?\d{1,2}[ ]?\] (?P<code>(?-i:" + "|".join(_BITS) + r"))(?=\s|$)",
    ),
)
