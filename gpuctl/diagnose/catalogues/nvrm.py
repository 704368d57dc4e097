"""The NVIDIA kernel module's own messages (`NVRM:` lines of dmesg and the journal) when it cannot
bring a GPU up: the adapter initialisation (`RmInitAdapter failed! (0x62:0x40:2168)`, then
`rm_init_adapter failed, device minor number 7`), the GSP firmware's boot, the PCI probe, and the
GPUs a driver flavour or release does not support.

`RmInitAdapter failed! (A:B:L)` prints the stage that failed (A, the `rm_init_status` of
src/nvidia/arch/nvalloc/unix/src/osinit.c: 0x2x the GPU's own initialisation, 0x3x its VBIOS,
0x42 the BAR1 mapping, 0x6x the GSP firmware), the driver's NV_STATUS code (B, e.g. 0x40
NV_ERR_INVALID_STATE, 0x65 NV_ERR_TIMEOUT, 0x72 NV_ERR_MEMORY_ERROR; src/common/sdk/nvidia/inc/
nvstatuscodes.h) and the source line (L); the reader reads the stage, and first a stage:status
pair that has a meaning of its own (0x22:0x56, attach failed as not supported: the BARs).

Messages left to other families: `GPU has fallen off the bus` (the table's gpu.fallen-off-bus),
`NVRM: API mismatch` (kernel.api-mismatch), Xids (catalogue `xid`, including the GSP timeouts of
Xid 119/120), nouveau holding the GPU during an install (host.nouveau-bound). The kernel's
`module verification failed: signature and/or required key missing - tainting kernel` is only a
notice that an out-of-tree module was loaded: healthy, and no entry here.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

SOURCE = (
    "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/nvidia/arch/nvalloc/unix/src/osinit.c"
)
_NV = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv.c"
_NV_PCI = "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-pci.c"
_OSAPI = (
    "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/nvidia/arch/nvalloc/unix/src/osapi.c"
)
_KGSP = (
    "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/src/nvidia/src/kernel/gpu/gsp/kernel_gsp.c"
)
_README_OPEN = "https://download.nvidia.com/XFree86/Linux-x86_64/580.95.05/README/kernel_open.html"

_DRAIN = "drain {node} (`kubectl drain {node} --ignore-daemonsets`)"
_RESET = (
    _DRAIN + ", reset the GPU (`sudo nvidia-smi -r -i GPU` with nothing using it; on a GPU the "
    "driver never initialised, `echo 1 | sudo tee /sys/bus/pci/devices/0000:BUS/reset`) or "
    "power-cycle {node} (a cold boot, not a warm reboot, clears a GPU left half-booted)"
)
_RMA = "if it fails again after a cold boot, collect `sudo nvidia-bug-report.sh` and replace the GPU"
_EARLIER = (
    "read the NVRM lines just before it (`sudo dmesg | grep -i -e NVRM -e AER -e Xid`): "
    "they name the stage that failed"
)
_OPEN_OR_PROPRIETARY = (
    "`cat /proc/driver/nvidia/version` says which flavour is loaded (`Open Kernel Module` or not)"
)

_ENTRIES = (
    Entry(
        "gsp-wpr2-up",
        "GSP cannot boot: WPR2 already up",
        "the GPU was left in a bad state by its previous use (a driver unload, a crash or a "
        "failed reset left the GSP firmware's protected memory region WPR2 set up), so the driver "
        "cannot boot the GSP firmware again and the GPU does not initialise",
        _RESET + "; " + _RMA,
        "driver",
        texts=(
            "unexpected WPR2 already up, cannot proceed with booting GSP",
            "(the GPU is likely in a bad state and may need to be reset)",
        ),
        source=_KGSP,
    ),
    Entry(
        "gsp-init-failed",
        "GSP firmware RM did not start",
        "the driver could not boot the GPU's GSP firmware (RmInitAdapter stage 0x6x: firmware "
        "init), so the GPU does not initialise: a GPU in a bad state from its "
        "previous use (WPR2 up, a hung GSP), GSP firmware files of another driver version than "
        "the kernel module, or a GPU fault",
        _EARLIER + "; " + _RESET + "; check /lib/firmware/nvidia/$(modinfo -F version nvidia)/ "
        "holds the gsp_*.bin of the loaded module (reinstall the driver package otherwise, and "
        "`sudo update-initramfs -u`); on a GPU that works with it, disable GSP "
        "(`options nvidia NVreg_EnableGpuFirmware=0`, proprietary modules only); " + _RMA,
        "driver",
        aliases=("0x60", "0x62"),
        texts=(
            "Cannot initialize GSP firmware RM",
            "Max GSP-RM boot attempts exceeded",
            "Error preparing GSP-RM image",
            "GSP-RM entered into ICD",
        ),
        source=SOURCE,
    ),
    Entry(
        "gsp-firmware-missing",
        "GSP firmware file not loaded",
        "the kernel module could not load its GSP firmware file (RmInitAdapter stage 0x61: "
        "firmware fetch): /lib/firmware/nvidia/VERSION/gsp_*.bin of the module's version is "
        "missing (the firmware package of that version is not installed, or the module is of "
        "another version than the installed driver and firmware), or not in the initramfs the "
        "module was loaded from",
        "on {node}: `ls /lib/firmware/nvidia/$(modinfo -F version nvidia)/`; reinstall the "
        "driver's firmware package of the module's version (Ubuntu `nvidia-firmware-BRANCH-VERSION`, "
        "RHEL `nvidia-kmod-common`), `sudo update-initramfs -u` (dracut: `sudo dracut -f`), reboot",
        "driver",
        aliases=("0x61", "gsp"),
        texts=("No firmware image found", "need firmware to initialize GSP"),
        # The kernel's firmware loader names the file: `Direct firmware load for
        # nvidia/570.144/gsp_ga10x.bin failed with error -2`.
        source=SOURCE,
    ),
    Entry(
        "gpu-init-failed",
        "the GPU's initialisation failed",
        "the driver found the GPU but could not initialise it (RmInitAdapter stage 0x2x: attach, "
        "pre-init, state init or load of the GPU; RM status {status}: 0x72 a memory error, 0x65 a "
        "timeout, 0x56 not supported): a faulty or overheated GPU, its memory, power or PCIe link, "
        "a GPU left in a bad state, or a GPU this module does not drive",
        _EARLIER
        + " (an Xid 48/63/64/79/95, an AER error, a GPU not supported by this driver); "
        + _RESET
        + "; check the power cables and seating; "
        + _RMA,
        "driver",
        aliases=("0x20", "0x21", "0x22", "0x23", "0x24", "0x25", "0x26", "0x27"),
        source=SOURCE,
    ),
    Entry(
        "vbios-failed",
        "the GPU's VBIOS could not be read or run",
        "the driver could not read or run the GPU's VBIOS (RmInitAdapter stage 0x3x): a GPU whose "
        "VBIOS is corrupt or was modified, a GPU passed through to a VM without its ROM, or a "
        "failing GPU",
        _RESET + "; in a VM, pass the GPU's ROM through (or use the vendor's VBIOS); update the "
        "VBIOS from the board vendor; " + _RMA,
        "hardware",
        aliases=("0x30", "0x31", "0x32"),
        texts=(
            "failed to wait for GFW boot complete",
            "failed to extract VBIOS image from ROM",
            "failed to parse FWSEC ucode from VBIOS image",
        ),
        source=SOURCE,
    ),
    Entry(
        "bar-invalid",
        "the GPU's PCI BARs are not assigned",
        "the firmware (BIOS/UEFI) did not give the GPU usable PCI memory windows (BARs): a large "
        "GPU BAR needs 64-bit addressing above 4 GB, which the system firmware has off, or BAR1 "
        "was resized (resizable BAR) into space that does not fit, so the driver cannot map the "
        "GPU",
        "in the system firmware of {node} enable `Above 4G Decoding` (and `Resizable BAR`/"
        "`Re-Size BAR Support`, or turn it off if it was the change), update the BIOS; `sudo "
        "lspci -vv -d 10de: | grep -i -e region -e 'BAR 1'` shows the windows the GPU got; in a "
        "VM give the guest a 64-bit MMIO window large enough for the GPU",
        "hardware",
        aliases=("0x42",),
        texts=(
            "This PCI I/O region assigned to your NVIDIA device is invalid",
            "The system BIOS may have misconfigured your GPU",
            "No address space to allocate resized BAR1",
            "FATAL: Failed to re-allocate BAR1",
        ),
        source=_NV_PCI,
    ),
    Entry(
        "attach-not-supported",
        "the GPU could not be attached: BAR not mapped",
        "the driver could not attach the GPU (RmInitAdapter stage 0x22, "
        "RM_INIT_GPU_GPUMGR_ATTACH_GPU_FAILED, with status 0x56 NV_ERR_NOT_SUPPORTED): attaching "
        "maps the GPU's PCI BARs, and the system firmware gave the GPU no window above 4 GB for "
        "its large BAR1 (Above 4G Decoding or Resizable BAR off, common with RTX 50/Blackwell and "
        "data-center GPUs), or the board is not one this driver drives",
        "in the system firmware of {node} enable `Above 4G Decoding` and `Resizable BAR`/`Re-Size "
        "BAR Support` (and CSM off, UEFI boot), update the BIOS; `sudo lspci -vv -d 10de: | grep "
        "-i -e region -e 'BAR 1'` shows the windows the GPU got; in a VM give the guest a 64-bit "
        "MMIO window large enough for the GPU; if the BARs are assigned, check the GPU is listed "
        "in the driver's supported products",
        "hardware",
        # Read by the stage:status reader; the stage alone is gpu-init-failed.
        aliases=("0x22:0x56",),
        source=SOURCE,
    ),
    Entry(
        "power-cables",
        "GPU power cables not connected",
        "the GPU reports that its auxiliary power connectors (8-pin PCIe, 12V-2x6/12VHPWR or EPS) "
        "are not connected or give no power, so the driver does not initialise it",
        "power {node} off and connect every power connector of the GPU to the power supply (no "
        "daisy-chained or adapter cables the PSU vendor does not rate for it), check the PSU "
        "delivers its rated power and, on servers, that the riser's power cable is in; then "
        "power it on and check `nvidia-smi`",
        "hardware",
        texts=("GPU does not have the necessary power cables connected",),
        source=SOURCE,
    ),
    Entry(
        "adapter-init-failed",
        "the driver could not initialise a GPU",
        "the NVIDIA kernel module could not initialise a GPU (RmInitAdapter failed), so the GPU "
        "has no device node and nvidia-smi, the device plugin and CUDA cannot use it",
        _EARLIER + " (RmInitAdapter failed! (STAGE:STATUS:LINE): 0x2x GPU init, 0x3x VBIOS, "
        "0x6x GSP firmware); then " + _RESET + "; " + _RMA,
        "driver",
        texts=("rm_init_adapter failed, device minor number",),
        source=_NV,
    ),
    Entry(
        "probe-failed",
        "the driver initialised no GPU",
        "the NVIDIA kernel module found GPUs but initialised none or not all of them, so the "
        "module did not load or GPUs are missing from nvidia-smi",
        _EARLIER + " (RmInitAdapter, a BAR that is invalid, a GPU the driver release or flavour "
        "does not support); `lspci -nn -d 10de:` lists the GPUs and their PCI IDs",
        "driver",
        texts=(
            "The NVIDIA probe routine failed for",
            "None of the NVIDIA devices were initialized",
            "No NVIDIA devices probed",
            "None of the NVIDIA graphics adapters were initialized",
        ),
        source=_NV,
    ),
    Entry(
        "probe-not-called",
        "another driver owns the GPU",
        "another kernel driver (nouveau, or vfio-pci for passthrough) bound the GPU before the "
        "NVIDIA module, so the NVIDIA driver never probed it",
        "on {node}: `lspci -k -d 10de:` names the driver in use; blacklist nouveau and, on "
        "kernels that have it, nova_core (`printf 'blacklist nouveau\\noptions nouveau "
        "modeset=0\\nblacklist nova_core\\nblacklist nova_drm\\n' | sudo tee "
        "/etc/modprobe.d/blacklist-nvidia-conflicts.conf && sudo update-initramfs -u`) or unbind "
        "vfio-pci from the GPU, then reboot",
        "driver-conflict",
        texts=(
            "The NVIDIA probe routine was not called for",
            "This can occur when another driver was loaded and",
        ),
        source=_NV,
    ),
    Entry(
        "already-bound",
        "another kernel driver holds the GPU",
        "another kernel driver ({code}) bound the GPU before the NVIDIA module, so the NVIDIA "
        "driver probes no device and does not load (the installer then says `Unable to load the "
        "kernel module`): nouveau, or on kernels built with CONFIG_NOVA_CORE (Linux 6.15 and "
        "newer, e.g. Ubuntu 26.04's 7.0 kernel) the in-tree Rust driver nova_core (`NovaCore`), "
        "which claims every Turing, Ampere and Ada GPU at boot; or vfio-pci for passthrough",
        "on {node}: `lspci -k -d 10de:` names the driver in use; blacklist both in-tree drivers "
        "(`printf 'blacklist nouveau\\noptions nouveau modeset=0\\nblacklist nova_core\\n"
        "blacklist nova_drm\\n' | sudo tee /etc/modprobe.d/blacklist-nvidia-conflicts.conf && "
        "sudo update-initramfs -u`; RHEL: `sudo dracut -f`; or `modprobe.blacklist=nouveau,"
        "nova_core` on the kernel command line), or unbind vfio-pci from the GPU, then reboot "
        "and load the NVIDIA driver (`sudo modprobe nvidia`)",
        "driver-conflict",
        aliases=("NovaCore", "nova_core", "nova-core", "nova", "nouveau", "vfio-pci"),
        source="https://rust-for-linux.com/nova-gpu-driver",
    ),
    Entry(
        "gpu-unsupported",
        "GPU not supported by this driver release",
        "the GPU is not supported by the loaded driver release: a GPU newer than the branch (it "
        "needs a later driver), or an older GPU the branch dropped (it needs a legacy branch)",
        "look the PCI ID up in the supported-products appendix of the driver's README (`lspci -nn "
        "-d 10de:`); install a driver branch that lists it (new GPUs: the current production "
        "branch; Kepler/Maxwell/Pascal/Volta: the last branch that supports them), `gpuctl "
        "bootstrap --phase host -i INVENTORY --limit {node}` with that branch, then reboot",
        "driver",
        # Older releases break the line after "installed": the rest is the same.
        texts=("in this system is not supported by the",),
        source=_OSAPI,
    ),
    Entry(
        "open-modules-unsupported",
        "GPU not supported by the open kernel modules",
        "the open kernel modules (nvidia-open) drive only GPUs with a GSP (Turing and newer; "
        "older releases only data-center GPUs unless told otherwise), and this GPU is older or "
        "the release does not enable it",
        _OPEN_OR_PROPRIETARY + "; install the proprietary modules for this GPU (Ubuntu "
        "`nvidia-driver-BRANCH` instead of `-open`, `nvidia-dkms-BRANCH`; RHEL the `nvidia-driver` "
        "module stream without `-open`), or on a Turing/Ampere GeForce with an older release set "
        "`options nvidia NVreg_OpenRmEnableUnsupportedGpus=1`; reboot",
        "driver",
        texts=(
            "installed in this system is not supported by open",
            "Open nvidia.ko is only ready for use on Data Center GPUs",
        ),
        source=_README_OPEN,
    ),
    Entry(
        "open-modules-required",
        "GPU requires the open kernel modules",
        "the GPU (Blackwell and newer, GH100/GB200 systems) is driven only by the open kernel "
        "modules, and the proprietary ones are loaded",
        _OPEN_OR_PROPRIETARY + "; install the open flavour of the same branch (Ubuntu "
        "`nvidia-driver-BRANCH-open` / `nvidia-dkms-BRANCH-open`, RHEL `dnf module install "
        "nvidia-driver:open-dkms`, the .run with `-m=kernel-open`; under the GPU Operator "
        "`driver.kernelModuleType=open`), then reboot",
        "driver",
        texts=("requires use of the NVIDIA open kernel modules",),
        source=_README_OPEN,
    ),
    Entry(
        "gsp-rpc-timeout",
        "the GSP firmware stopped answering",
        "the GPU's GSP firmware did not answer the driver in time (an RPC timeout, Xid 119): the "
        "GPU is hung or in a bad state, and its programs stop",
        _DRAIN + ", then " + _RESET + "; keep the driver current (GSP timeouts are fixed in "
        "later releases of a branch); " + _RMA,
        "driver",
        aliases=("waiting for RPC",),
        texts=("GSP-RM unresponsive",),
        source=_KGSP,
    ),
)

CATALOGUE = Catalogue(
    id="nvrm",
    title="NVIDIA kernel module (NVRM): GPU initialisation, GSP boot and probe failures",
    source=SOURCE,
    version="open-gpu-kernel-modules 595.45.04 (the texts are those of the proprietary modules too)",
    entries=_ENTRIES,
    applies_to=("kernel", "host", "operator-driver", "nvidia-smi"),
    readers=(
        # `NVRM: GPU 0000:01:00.0 is already bound to NovaCore.`: the driver that holds the GPU.
        r"(?-i:NVRM: GPU )[0-9a-fA-F:.]+ is already bound to (?P<code>NovaCore|nova[_-]core|nova|"
        r"nouveau|vfio-pci)\b",
        # Where a stage and a status together have one meaning (entries' `STAGE:STATUS` aliases),
        # the pair is read first.
        r"(?-i:RmInitAdapter failed! )\((?P<code>0x22:0x56):\d+\)",
        r"(?-i:Direct firmware load for nvidia/)(?P<version>[\d.]+)/(?P<code>gsp)(?:_\w+)?\.bin failed",
        # `NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)`: stage, status, line.
        r"(?-i:RmInitAdapter failed! )\((?P<code>0x[0-9a-fA-F]{1,2}):(?P<status>0x[0-9a-fA-F]+):\d+\)",
        # `Timeout after 45s of waiting for RPC response from GPU1 GSP!` (older releases:
        # `Timeout waiting for RPC from GSP1!`).
        r"(?-i:Timeout )(?:after \d+s of )?(?P<code>waiting for RPC)(?: response)? from",
    ),
    unknown=Entry(
        "?",
        "RmInitAdapter failed at another stage",
        "the NVIDIA kernel module could not initialise a GPU (RmInitAdapter failed at stage "
        "{code}, RM status {status}: 0x40 invalid state, 0x51 no memory, 0x56 not supported, "
        "0x62 operating-system call failed, 0x65 timeout, 0x72 memory error), so the GPU has no "
        "device node and nothing can use it",
        _EARLIER + "; then " + _RESET + "; " + _RMA,
        "driver",
    ),
)
