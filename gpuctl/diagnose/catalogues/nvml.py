"""NVML return codes: every `nvmlReturn_t` of nvml.h (R580 and later; NVML_SUCCESS left out), one
entry per number.

NVML is the library under nvidia-smi, the device plugin, DCGM and the GPU Operator's validators, so
its codes reach gpuctl in several spellings: `nvmlErrorString`'s text (`Failed to initialize NVML:
Driver/library version mismatch`, `NVML: GPU requires reset`), go-nvml's names (`failed to
initialize NVML: ERROR_LIBRARY_NOT_FOUND`), the C names (`NVML_ERROR_GPU_IS_LOST`) and pynvml's
exception classes (`pynvml.NVMLError_GpuIsLost`). A text as short as "Not Supported" or "Timeout" is
read only right after an NVML prefix: nvidia-smi prints `[Not Supported]` and `N/A` in healthy
tables, and other tools use those words too.

Sources: https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (nvmlReturn_t),
https://github.com/NVIDIA/go-nvml/blob/main/pkg/nvml/const.go (the go-nvml names),
https://github.com/NVIDIA/nvidia-ml-py (pynvml's texts and exception classes).
"""

from __future__ import annotations

import re

from gpuctl.diagnose.catalogue import Catalogue, Entry

NVML_DOC = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html"

_APP = (
    "the calling program's own bug (it called NVML wrongly), not the node's: update or fix the "
    "program (device plugin, exporter, script) that printed it"
)
_HARDWARE = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), read `dmesg | grep -i -e xid -e NVRM` "
    "on it, reset the GPU (`nvidia-smi -r -i GPU`) or power-cycle the node; replace the GPU if it repeats"
)
_DRIVER = (
    "on {node}: check `nvidia-smi` and `lsmod | grep nvidia`; install or load the driver "
    "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), then reboot the node"
)
_REBOOT = (
    "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first) so the new kernel module loads; "
    "`cat /proc/driver/nvidia/version` (module) and the libnvidia-ml.so version must agree"
)

# (number, name without NVML_, nvmlErrorString texts, layer, cause, fix). The first text is what
# NVIDIA's pynvml prints; later ones are the spellings other driver branches and tools print.
# fmt: off
_ROWS: tuple[tuple[int, str, tuple[str, ...], str, str, str], ...] = (
    (1, "ERROR_UNINITIALIZED", ("Uninitialized",), "application",
     "an NVML call ran before nvmlInit (NVML error 1)", _APP),
    (2, "ERROR_INVALID_ARGUMENT", ("Invalid Argument",), "application",
     "an NVML call got an invalid argument (NVML error 2): often a GPU index or handle that no longer "
     "exists", _APP),
    (3, "ERROR_NOT_SUPPORTED", ("Not Supported",), "config",
     "the GPU or its mode does not support the requested NVML feature (NVML error 3): e.g. MIG on a "
     "GPU without MIG, ECC or clocks on a GeForce card, a query inside a MIG instance or vGPU",
     "on {node}: `nvidia-smi -q` shows which features the GPU has; configure only those (e.g. no "
     "MIG strategy on non-MIG GPUs), or update the tool that asks for the feature"),
    (4, "ERROR_NO_PERMISSION", ("Insufficient Permissions",), "config",
     "the caller may not do this through NVML (NVML error 4): changing GPU settings needs root, "
     "reading MIG devices from a container needs the MIG monitor capability, and a container "
     "whose /dev/nvidia* nodes it may not open (SELinux labels, a rootless engine, device "
     "permissions) cannot even initialise NVML",
     "in a container: check SELinux (`getenforce`; `sudo setsebool -P container_use_devices 1`) "
     "and the device nodes' permissions on {node}; "
     "run the command as root on {node} (`sudo nvidia-smi ...`); for the device plugin set "
     "NVIDIA_MIG_MONITOR_DEVICES=all on its container (the Helm chart and the GPU Operator do); "
     "profiling counters (NVLink, DCGM profiling) are root-only while the driver's "
     "RmProfilingAdminOnly is 1 (`grep RmProfilingAdminOnly /proc/driver/nvidia/params`; module "
     "option NVreg_RestrictProfilingToAdminUsers=0)"),
    (5, "ERROR_ALREADY_INITIALIZED", ("Already Initialized",), "application",
     "NVML was initialised twice (NVML error 5; deprecated, no longer returned)", _APP),
    (6, "ERROR_NOT_FOUND", ("Not Found",), "config",
     "NVML found no object for the query (NVML error 6): a GPU UUID, PCI id or MIG instance named "
     "that does not exist on the node (any more)",
     "on {node}: `nvidia-smi -L` lists the GPUs and MIG devices by UUID; fix the configuration that "
     "names a missing one (NVIDIA_VISIBLE_DEVICES, MIG config), or find why a GPU disappeared "
     "(`dmesg | grep -i xid`)"),
    (7, "ERROR_INSUFFICIENT_SIZE", ("Insufficient Size",), "application",
     "a buffer passed to NVML is too small (NVML error 7)", _APP),
    # nvidia-smi words it `Unable to communicate with GPU because it is insufficiently powered.`
    (8, "ERROR_INSUFFICIENT_POWER",
     ("Insufficient External Power", "Unable to communicate with GPU because it is insufficiently powered"),
     "hardware",
     "the GPU's external power cables are not connected or not supplying power (NVML error 8)",
     "power the node off, reseat the GPU's auxiliary power cables (and check the PSU), then "
     "`nvidia-smi -q -d POWER` on {node}"),
    (9, "ERROR_DRIVER_NOT_LOADED", ("Driver Not Loaded",), "driver",
     "the NVIDIA kernel driver is not loaded on the node (NVML error 9)", _DRIVER),
    (10, "ERROR_TIMEOUT", ("Timeout",), "driver",
     "an NVML request timed out (NVML error 10): the GPU or driver did not answer in time",
     "on {node}: `nvidia-smi` and `dmesg | grep -i -e xid -e nvrm`; if the GPU hangs, " + _HARDWARE),
    (11, "ERROR_IRQ_ISSUE", ("Interrupt Request Issue",), "hardware",
     "the driver found a problem with the GPU's interrupt line (NVML error 11)",
     "on {node}: `dmesg | grep -i -e nvrm -e irq` and `cat /proc/interrupts | grep -i nvidia`; check "
     "the BIOS (MSI/MSI-X, above 4G decoding), update the BIOS/driver, then " + _HARDWARE),
    (12, "ERROR_LIBRARY_NOT_FOUND", ("NVML Shared Library Not Found",), "toolkit",
     "libnvidia-ml.so cannot be loaded (NVML error 12): the container does not run under the NVIDIA "
     "runtime (toolkit missing or not the default runtime) or the driver is not installed",
     "on {node}: `sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default && sudo "
     "systemctl restart containerd` (or `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), "
     "then restart the pod that printed it"),
    (13, "ERROR_FUNCTION_NOT_FOUND", ("Function Not Found",), "driver",
     "the node's libnvidia-ml.so lacks a function the program needs (NVML error 13): the driver is "
     "older than the program (device plugin, DCGM, exporter) expects",
     "upgrade the driver on {node} (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), or "
     "use a program release that supports the installed driver"),
    (14, "ERROR_CORRUPTED_INFOROM", ("Corrupted infoROM", "infoROM is corrupted"), "hardware",
     "the GPU's infoROM (its on-board configuration store) is corrupted (NVML error 14): the GPU may "
     "misreport ECC and other state",
     "on {node}: `nvidia-smi -q | grep -i -A3 inforom`; ask the vendor for an infoROM update or "
     "replace the GPU; drain the node meanwhile (`kubectl drain {node} --ignore-daemonsets`)"),
    (15, "ERROR_GPU_IS_LOST", ("GPU is lost",), "hardware",
     "a GPU crashed and the driver lost it (NVML error 15); every allocation on the node can fail "
     "until a reboot", _HARDWARE),
    (16, "ERROR_RESET_REQUIRED", ("GPU requires reset", "GPU requires restart"), "hardware",
     "the GPU hit a fault the driver cannot clear in place and needs a reset (NVML error 16)",
     "drain {node} (`kubectl drain {node} --ignore-daemonsets`), stop every process on the GPU, reset "
     "it (`sudo nvidia-smi -r -i GPU`) or reboot; read `dmesg | grep -i xid` for the fault, replace "
     "the GPU if it repeats"),
    (17, "ERROR_OPERATING_SYSTEM",
     ("GPU access blocked by the operating system", "The operating system has blocked the request"),
     "runtime",
     "the operating system refused NVML's access to the GPU (NVML error 17): under WSL2 or a Hyper-V "
     "GPU partition the host does not pass the GPU through (host driver files missing in the guest, "
     "TCC mode, a kernel without dxgkrnl); in a container the device cgroup does not allow the GPU "
     "(nvidia-container-runtime `no-cgroups = true` without CDI, SELinux/AppArmor denials)",
     "on {node}: `dmesg | grep -i -e avc -e apparmor -e dxg`; in /etc/nvidia-container-runtime/"
     "config.toml keep `no-cgroups = false` unless devices come through CDI (`nvidia-ctk runtime "
     "configure --cdi.enabled`); under WSL2 update the Windows driver and WSL (`wsl --update`) and "
     "keep the GPU in WDDM mode"),
    (18, "ERROR_LIB_RM_VERSION_MISMATCH",
     ("RM has detected an NVML/RM version mismatch", "Driver/library version mismatch"), "driver",
     "the loaded kernel module and the NVIDIA user-space libraries differ (NVML error 18): driver "
     "upgraded, node not rebooted", _REBOOT),
    (19, "ERROR_IN_USE", ("In use by another client", "GPU is currently in use"), "config",
     "the operation needs the GPU idle but another process uses it (NVML error 19): e.g. a GPU reset or "
     "a MIG mode change while pods, nvidia-persistenced, DCGM or the device plugin hold it",
     "on {node}: `nvidia-smi` (processes) and `sudo lsof /dev/nvidia*`; drain the node (`kubectl drain "
     "{node} --ignore-daemonsets`), stop the GPU's users (dcgm-exporter, device plugin, "
     "nvidia-persistenced), then retry"),
    (20, "ERROR_MEMORY", ("Insufficient Memory",), "config",
     "NVML could not allocate memory for the request (NVML error 20): the node or container is out of "
     "host memory",
     "on {node}: `free -m`; raise the pod's memory limit or free memory on the node"),
    (21, "ERROR_NO_DATA", ("No data",), "application",
     "NVML has no data for the query yet (NVML error 21): e.g. no samples since the last query",
     "retry later; if the caller treats it as fatal, " + _APP),
    (22, "ERROR_VGPU_ECC_NOT_SUPPORTED",
     ("The requested vgpu operation is not available on target device, because ECC is enabled",),
     "config",
     "the vGPU operation is not available while ECC is enabled on the GPU (NVML error 22)",
     "on {node}: disable ECC for vGPU (`sudo nvidia-smi -e 0`, then reboot) or use a vGPU type that "
     "supports ECC"),
    (23, "ERROR_INSUFFICIENT_RESOURCES", ("Insufficient Resources",), "config",
     "the GPU lacks the resources for the request (NVML error 23): e.g. a MIG profile that does not "
     "fit beside the instances already created",
     "on {node}: `nvidia-smi mig -lgi` and `nvidia-smi mig -lgip`; choose a MIG configuration that "
     "fits the GPU (the MIG manager's `nvidia.com/mig.config` label), or destroy the old instances "
     "first"),
    (24, "ERROR_FREQ_NOT_SUPPORTED", ("Frequency not supported",), "config",
     "the requested clock frequency is not supported by the GPU (NVML error 24)",
     "on {node}: `nvidia-smi -q -d SUPPORTED_CLOCKS`; pick a listed clock (`nvidia-smi -ac` / `-lgc`)"),
    (25, "ERROR_ARGUMENT_VERSION_MISMATCH", ("Argument version mismatch",), "driver",
     "the program passed an NVML structure of a version the installed driver does not know (NVML "
     "error 25): the program is newer than the driver",
     "upgrade the driver on {node} (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), or "
     "use a program release built for the installed driver"),
    (26, "ERROR_DEPRECATED", ("Deprecated",), "application",
     "the program used a deprecated NVML function (NVML error 26)", _APP),
    (27, "ERROR_NOT_READY", ("Not Ready",), "driver",
     "the system is not ready for the request yet (NVML error 27): e.g. the GPU fabric (Fabric "
     "Manager on NVSwitch systems) or the driver is still initialising",
     "retry in a minute; if it persists, on {node}: `systemctl status nvidia-fabricmanager` and "
     "`nvidia-smi -q | grep -i -A2 fabric` (State: Completed, Status: Success)"),
    # `Failed to initialize NVML: No supported GPUs were found`: nvmlInit on a node whose driver
    # has no GPU bound (all on vfio-pci for passthrough, a laptop GPU powered off by Optimus)
    (28, "ERROR_GPU_NOT_FOUND", ("GPU not found", "No supported GPUs were found"), "runtime",
     "NVML found no GPU (NVML error 28): the container got no GPU device, or the node's GPUs are gone "
     "or not bound to the nvidia driver (bound to vfio-pci for passthrough, powered off)",
     "in a pod on {node}: `nvidia-smi -L`; on the node `lspci -nnk -d 10de:` (the 'Kernel driver in "
     "use' must be nvidia) and `dmesg | grep -i nvrm`; check the pod requests `nvidia.com/gpu` and "
     "runs under the NVIDIA runtime"),
    (29, "ERROR_INVALID_STATE", ("Invalid state",), "config",
     "a GPU resource is not in the state the operation needs (NVML error 29): e.g. MIG mode pending a "
     "reset, or an instance still in use",
     "on {node}: `nvidia-smi -q` (pending modes); reset the GPU or reboot so pending changes apply "
     "(`kubectl drain {node} --ignore-daemonsets` first), then retry"),
    (30, "ERROR_RESET_TYPE_NOT_SUPPORTED", ("Reset type not supported",), "config",
     "the requested GPU reset type is not supported by this GPU or setup (NVML error 30)",
     "reset the whole GPU or reboot {node} instead (`sudo nvidia-smi -r -i GPU`)"),
    (999, "ERROR_UNKNOWN", ("Unknown Error",), "runtime",
     "NVML failed for an unknown internal reason (NVML error 999): in a container mostly lost GPU "
     "device access (systemd rewrote the container's device cgroup), else a driver fault",
     "recreate the pod; to stop it recurring, give GPUs to containers through CDI (`nvidia-ctk "
     "runtime configure --cdi.enabled`, GPU operator `cdi.enabled=true`); if `nvidia-smi` fails on "
     "{node} itself too: `dmesg | grep -i -e xid -e nvrm`"),
)
# fmt: on

# go-nvml's bare names (`ERROR_GPU_IS_LOST`) are read anywhere only where no other library uses
# the same name: ERROR_TIMEOUT or ERROR_NOT_FOUND are Windows' and others' too, so those are read
# after an NVML prefix only.
_DISTINCTIVE = frozenset(
    {
        "ERROR_UNINITIALIZED",
        "ERROR_NO_PERMISSION",
        "ERROR_INSUFFICIENT_POWER",
        "ERROR_DRIVER_NOT_LOADED",
        "ERROR_IRQ_ISSUE",
        "ERROR_LIBRARY_NOT_FOUND",
        "ERROR_FUNCTION_NOT_FOUND",
        "ERROR_CORRUPTED_INFOROM",
        "ERROR_GPU_IS_LOST",
        "ERROR_RESET_REQUIRED",
        "ERROR_LIB_RM_VERSION_MISMATCH",
        "ERROR_VGPU_ECC_NOT_SUPPORTED",
        "ERROR_INSUFFICIENT_RESOURCES",
        "ERROR_FREQ_NOT_SUPPORTED",
        "ERROR_ARGUMENT_VERSION_MISMATCH",
        "ERROR_GPU_NOT_FOUND",
        "ERROR_RESET_TYPE_NOT_SUPPORTED",
    }
)
# Texts found anywhere in a line: long and NVML's own. The others only after an NVML prefix.
_ANYWHERE = frozenset(
    {
        "NVML Shared Library Not Found",
        "Corrupted infoROM",
        "infoROM is corrupted",
        "GPU is lost",
        "GPU requires reset",
        "GPU requires restart",
        "Insufficient External Power",
        "Unable to communicate with GPU because it is insufficiently powered",
        "No supported GPUs were found",
        "The operating system has blocked the request",
        "GPU access blocked by the operating system",
        "In use by another client",
        "RM has detected an NVML/RM version mismatch",
        "The requested vgpu operation is not available on target device, because ECC is enabled",
    }
)


def _pynvml_class(name: str) -> str:
    """pynvml's exception class of a return code: ERROR_GPU_IS_LOST → NVMLError_GpuIsLost."""
    return "NVMLError_" + "".join(word.capitalize() for word in name.split("_")[1:])


def _entry(row: tuple[int, str, tuple[str, ...], str, str, str]) -> Entry:
    number, name, texts, layer, cause, fix = row
    return Entry(
        code=str(number),
        name=f"NVML_{name}",
        cause=cause,
        fix=fix,
        layer=layer,
        aliases=(f"NVML_{name}", name, _pynvml_class(name), *texts),
        texts=tuple(text for text in texts if text in _ANYWHERE),
        transient=number in {21, 27},
    )


def _alternatives(words: list[str]) -> str:
    return "|".join(
        re.escape(word).replace(r"\ ", r"\s+") for word in sorted(words, key=lambda word: (-len(word), word))
    )


_TEXTS = _alternatives([text for row in _ROWS for text in row[2]])

CATALOGUE = Catalogue(
    id="nvml",
    title="NVML return codes (nvmlReturn_t)",
    source=NVML_DOC,
    version="NVML API of driver R580 (nvml.h nvmlReturn_t, NVML_ERROR_UNINITIALIZED 1 to "
    "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED 30, NVML_ERROR_UNKNOWN 999)",
    entries=tuple(_entry(row) for row in _ROWS),
    applies_to=(
        "nvidia-smi",
        "plugin-log",
        "operand",
        "operator-driver",
        "runtime",
        "events",
        "cuda-workload",
    ),
    readers=(
        # The C names anywhere: NVML_ERROR_GPU_IS_LOST.
        r"(?P<code>NVML_ERROR_[A-Z_]+)\b",
        # go-nvml's names: the distinctive ones anywhere, any after an NVML prefix and a colon.
        rf"(?<![\w])(?P<code>ERROR_(?:{_alternatives([name[6:] for name in _DISTINCTIVE])}))\b",
        r"NVML[^\n]{0,120}?:\s*(?P<code>ERROR_[A-Z_]+)\b",
        # pynvml's exception classes: pynvml.NVMLError_GpuIsLost: GPU is lost.
        r"(?P<code>NVMLError_[A-Za-z]+)\b",
        # nvmlErrorString's texts after an NVML prefix: `Failed to initialize NVML: Unknown Error`,
        # `NVML: GPU requires reset`, `nvml error: Not Supported`.
        rf"NVML[^\n]{{0,120}}?:\s*\[?(?P<code>{_TEXTS})(?![\w])",
        # go-nvml callers' own prefixes (the device plugin's `error getting device handle for index
        # '0': Unknown Error`) and nvidia-smi's per-GPU lines (`GPU 00000000:1A:00.0: In use by
        # another client`), with the text or go-nvml's name.
        r"(?:device (?:handle|count|info|name|uuid)|nvml\.Device|"
        r"GPU ?[0-9A-F]{4,8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-7])"
        rf"[^\n:]{{0,60}}:\s*(?P<code>{_TEXTS}|ERROR_[A-Z_]+)(?![\w])",
        # nvidia-smi's own prefixes, its `mig` subcommands' above all (NVIDIA MIG user guide):
        # `Failed to display compute instances: Insufficient Permissions`, `Failed to create GPU
        # instances: Insufficient Resources`, `Unable to enable MIG Mode for GPU ...: In use by
        # another client`.
        # Only about a GPU, a MIG instance or profile: systemd's `Failed to get unit file state
        # for X: Unknown error N` is not NVML's.
        r"(?:Failed to|Unable to) (?:display|create|destroy|enable|disable|list|get|set|query|reset)"
        r"\b[^\n:]{0,60}?(?:instance|MIG|GPU|profile|device)[^\n:]{0,40}"
        rf":\s*(?P<code>{_TEXTS})(?![\w])",
        # `nvmlDeviceGetCount returned 9`, `nvmlInit_v2 err: 18`, `nvml vram init failure: 18`,
        # `nvmlDeviceGetHandleByIndex() failed: 15`.
        r"nvml\w*(?:\(\))?[\w ]{0,30}?(?:returned|err|error|failure|failed(?: with(?: error)?(?: code)?)?)"
        r"\s*:?\s*(?P<code>[1-9]\d{0,2})\b",
    ),
    unknown=Entry(
        "?",
        "an NVML return code this catalogue does not list",
        "NVML returned {code}, which the NVML API of driver R580 does not define (a newer driver's code)",
        "look {code} up in nvml.h (nvmlReturn_t) of the driver installed on {node} "
        "(`nvidia-smi` shows its version)",
        "driver",
    ),
)
