"""NVIDIA Xid errors: every Xid of NVIDIA's Xid catalogue, with NVIDIA's resolution and its layer.

The NVIDIA kernel driver reports a GPU error as an Xid in the kernel log
(`NVRM: Xid (PCI:0000:3b:00): 79, pid=..., name=..., ...`); the device plugin and the DRA driver
repeat the number when they mark a GPU unhealthy. NVIDIA's Xid catalogue gives each Xid a mnemonic,
a description and a resolution bucket (RESTART_APP, RESET_GPU, RESTART_BM, CONTACT_SUPPORT, IGNORE,
the NVLink and ECC workflows, ...); the table below carries every Xid it lists (1 to 162), the
bucket as NVIDIA publishes it (its NVSentinel mapping of the catalogue), and the layer the error
belongs to, so several Xids in one log are reported root first: an NVLink Xid (74, 144-150) before
the Xid 45/43 of the applications it killed, a fallen-off GPU (79) before everything on it.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

SOURCE = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
MAPPING = (  # the resolution bucket of each Xid, as NVIDIA's NVSentinel reads the catalogue
    "https://github.com/NVIDIA/NVSentinel/blob/main/distros/kubernetes/nvsentinel/charts/"
    "gpu-health-monitor/xiderrorsmapping.csv"
)

# The Xids the device plugin (and the DRA driver) ignore: application faults that leave the GPU
# healthy (k8s-device-plugin internal/rm/health.go, k8s-dra-driver-gpu device_health.go).
DEVICE_PLUGIN_IGNORED_XIDS = ("13", "31", "43", "45", "68", "109")

_DRAIN = "drain {node} (`kubectl drain {node} --ignore-daemonsets --delete-emptydir-data`)"
_RESET = (
    "reset the GPU (`sudo nvidia-smi -r -i {gpu}`; reboot {node} if the reset is refused), "
    "`kubectl uncordon {node}` and restart the device plugin pod so it advertises the GPU again "
    "(`{plugin_restart}`)"
)
_RMA = "collect `sudo nvidia-bug-report.sh` on {node} and open a case with NVIDIA or the system vendor"
_RESTART_APP = (
    "restart the workload named in the line (pid/name) and debug it if it fails again "
    "(`compute-sanitizer`, `CUDA_LAUNCH_BLOCKING=1`)"
)
_FABRIC_CHECK = (
    "`nvidia-smi nvlink -s -i {gpu}` and `nvidia-smi nvlink -e -i {gpu}` on {node} show the link's "
    "state and error counters; on NVSwitch systems read `journalctl -u nvidia-fabricmanager` and the "
    "SXid lines of `dmesg`"
)

# NVIDIA's resolution buckets: (what the Xid means for the node, what to do).
_BUCKETS: dict[str, tuple[str, str]] = {
    "RESTART_APP": (
        "NVIDIA's action is to restart the application: the GPU stopped that program's work and "
        "stays usable; the device plugin still marks the GPU unhealthy for this Xid",
        _RESTART_APP + "; restart the device plugin pod on {node} if it marked the GPU unhealthy "
        "(`{plugin_restart}`); if the Xid repeats on this GPU with different programs, "
        + _DRAIN
        + " and "
        + _RESET,
    ),
    "RESET_GPU": (
        "the GPU is left in a state only a GPU reset clears; its jobs fail until then",
        _DRAIN + ", then " + _RESET + "; if it returns after the reset, " + _RMA,
    ),
    "RESTART_BM": (
        "only restarting the node (bare metal) recovers the GPU",
        _DRAIN + ", then reboot {node} (a cold power cycle through the BMC if the GPU does not come "
        "back); if it recurs, check the GPU's power cables, seating and cooling, run NVIDIA's field "
        "diagnostics and " + _RMA,
    ),
    "CONTACT_SUPPORT": (
        "NVIDIA's catalogue gives no field fix but to contact support; current data-center GPUs are "
        "not expected to report it",
        _RMA + "; if jobs fail with it, " + _DRAIN + " and " + _RESET,
    ),
    "IGNORE": (
        "informational: NVIDIA's catalogue asks for no action and running jobs go on",
        "nothing for this line alone; if it repeats, check the GPU (`nvidia-smi -q -i {gpu}` on "
        "{node}) and " + _RMA,
    ),
    "WORKFLOW_NVLINK5_ERR": (
        "traffic over the link failed, so the jobs using NVLink between these GPUs (NCCL, "
        "peer-to-peer) fail; a line saying Nonfatal was recovered by the hardware",
        _FABRIC_CHECK + "; for a Fatal one, " + _DRAIN + ", reset the GPU or reboot {node} and check the "
        "GPU's fabric state (`nvidia-smi -q | grep -A2 -i fabric`); repeated on the same link, reseat "
        "or service it and " + _RMA,
    ),
    "UPDATE_SWFW": (
        "the vGPU manager, the guest driver or the vGPU configuration do not match",
        "install a vGPU manager and guest driver of one release (NVIDIA's vGPU release notes list "
        "the pairs) and check the vGPU profile of {node}",
    ),
    "CHECK_MECHANICALS": (
        "the GPU cut its clocks because of its power supply or a power brake signal",
        "check {node}'s power supplies and the GPU's power cables, the BMC's power events "
        "(`ipmitool sel list`) and the throttle reason (`nvidia-smi -q -d PERFORMANCE -i {gpu}`)",
    ),
    "RESTART_VM": (
        "the confidential computing keys of the GPU's channels could not be renewed",
        "restart the confidential VM {node}; update the GPU driver if it recurs, else " + _RMA,
    ),
    "CHECK_UVM": (
        "an error on the coherent CPU-GPU interconnect, raised through unified memory (UVM)",
        "restart the workload; check the nvidia-uvm module on {node} (`lsmod | grep nvidia_uvm`, "
        "`dmesg | grep -i uvm`); if it repeats, " + _DRAIN + " and " + _RESET,
    ),
}

# Xids with their own meaning or workflow in NVIDIA's catalogue: (meaning, fix) over the bucket's.
_OWN: dict[int, tuple[str, str]] = {
    13: (
        "NVIDIA counts it an application fault (illegal instruction or address, out-of-range "
        "access in a kernel); the GPU stays usable and the device plugin ignores this Xid",
        _RESTART_APP + "; nothing to fix on {node} unless the same GPU keeps reporting it with "
        "different programs (then " + _DRAIN + " and " + _RESET + ")",
    ),
    31: (
        "NVIDIA counts it an application fault (the program's own bad pointer, rarely a driver or "
        "hardware fault); the GPU stays usable and the device plugin ignores this Xid",
        _RESTART_APP + "; nothing to fix on {node} unless the same GPU keeps reporting it with "
        "different programs (then " + _DRAIN + " and " + _RESET + ")",
    ),
    43: (
        "an application fault: the GPU stays usable and the device plugin ignores this Xid",
        _RESTART_APP + "; nothing to fix on {node}; if an earlier Xid on this GPU (74, 79, 48, 94, "
        "95, 119) preceded it, act on that one",
    ),
    45: (
        "a consequence, not a cause: if the log shows an earlier Xid on this GPU (NVLink 74/144-150, "
        "ECC 48/94/95, 79, 119) that one killed the program; alone it is a program that ended or "
        "was killed; the device plugin ignores this Xid",
        "act on the earlier Xid or SXid of the log if there is one; else nothing to fix on {node}: "
        + _RESTART_APP,
    ),
    48: (
        "uncorrectable data was read, so the programs using it were stopped; the GPU remaps the bad "
        "row (or retires the page) at the next GPU reset",
        _DRAIN + ", then " + _RESET + "; `nvidia-smi -q -d ROW_REMAPPER -i {gpu}` (or `-d "
        "PAGE_RETIREMENT`) must then show no pending remap and no remapping failure; if it shows a "
        "failure or the DBEs continue, " + _RMA + " for an RMA",
    ),
    63: (
        "the repair takes effect at the next GPU reset; until then the GPU keeps running and avoids "
        "the row where it can",
        "to apply the remap when convenient, " + _DRAIN + " and " + _RESET + " (a retired page of an "
        "older GPU applies when the driver reloads: reboot {node}); `nvidia-smi -q -d ROW_REMAPPER -i "
        "{gpu}` (or `-d PAGE_RETIREMENT`) shows what is pending or failed",
    ),
    64: (
        "the memory repair failed, which NVIDIA counts among the conditions for an RMA",
        _DRAIN + ", then " + _RESET + "; check `nvidia-smi -q -d ROW_REMAPPER -i {gpu}` (Remapping "
        "Failure Occurred: Yes) and " + _RMA + " for an RMA",
    ),
    68: (
        "an application fault (a bad video decode stream): the GPU stays usable and the device plugin "
        "ignores this Xid",
        _RESTART_APP + "; nothing to fix on {node} unless the same GPU keeps reporting it with "
        "different programs (then " + _DRAIN + " and " + _RESET + ")",
    ),
    74: (
        "the link's traffic failed, so the jobs using NVLink between these GPUs (NCCL, "
        "peer-to-peer) fail with their own Xids (45, 43) and NCCL or CUDA errors; NVIDIA's workflow "
        "decodes the line's registers to tell a marginal link from a hardware fault",
        _FABRIC_CHECK + "; " + _DRAIN + ", reset the GPUs (or reboot {node}); if the same link fails "
        "again, reseat the NVLink bridge or tray and run NVIDIA's field diagnostics, then " + _RMA,
    ),
    79: (
        "every program on that GPU fails and NVML reports it lost until the node is restarted",
        _DRAIN + ", then power-cycle {node} (a warm reboot may not bring the GPU back; `nvidia-smi -r` "
        "cannot reach it); if it falls off again, check its power cables, seating, PSU and "
        "temperatures, update the system BIOS, and " + _RMA + " for an RMA",
    ),
    92: (
        "the GPU corrects them, but the rate warns of failing memory",
        "watch `nvidia-smi -q -d ECC,ROW_REMAPPER -i {gpu}` on {node}; if uncorrectable errors or "
        "remaps follow, " + _DRAIN + " and " + _RESET,
    ),
    94: (
        "NVIDIA's action is to restart the affected application; the GPU stays usable and repairs "
        "the memory at its next reset",
        "restart the workload and the device plugin pod, which marked the GPU unhealthy for this Xid "
        "(`{plugin_restart}`); at a convenient time " + _DRAIN + " and " + _RESET + " so the pending "
        "row remap applies (`nvidia-smi -q -d ROW_REMAPPER -i {gpu}`)",
    ),
    95: (
        "every program on the GPU is stopped and the GPU must be reset before it is used again",
        _DRAIN
        + ", then "
        + _RESET
        + "; check `nvidia-smi -q -d ROW_REMAPPER -i {gpu}` afterwards and "
        + _RMA
        + " if a remapping failure shows",
    ),
    109: (
        "an application fault the device plugin ignores (the GPU stays advertised); NVIDIA's "
        "catalogue resets the GPU when it repeats",
        _RESTART_APP + "; if it repeats on this GPU, " + _DRAIN + " and " + _RESET,
    ),
    119: (
        "the GPU does not answer the driver: its jobs hang or fail and nvidia-smi may hang too; some "
        "drivers had GSP timeout bugs fixed in later releases",
        _DRAIN + ", then " + _RESET + "; if it recurs, update the driver to the newest release of its "
        "branch (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), and as NVIDIA's "
        "workaround for some drivers turn GSP firmware off (`options nvidia NVreg_EnableGpuFirmware=0`"
        ", not possible with the open kernel modules); then " + _RMA,
    ),
    120: (
        "the GPU's firmware failed; the GPU's jobs fail until it is reset",
        _DRAIN + ", then " + _RESET + "; if it recurs, update the driver to the newest release of its "
        "branch (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), then " + _RMA,
    ),
    154: (
        "the driver says the GPU now needs: {action}; the Xid logged before it on this GPU is the error",
        "do what the line says for GPU {gpu}: GPU Reset Required (or PF FLR): "
        + _DRAIN
        + " and "
        + _RESET
        + "; Node or OS Reboot Required: "
        + _DRAIN
        + " and reboot {node}; Drain P2P: stop "
        "the jobs using peer-to-peer on the GPU, then reset it; and act on the Xid logged before it",
    ),
}

# The kernel driver's `Xid (PCI:0000:3b:00): ` before the number, never an NVSwitch's `SXid (`.
_KERNEL = (
    r"(?-i:Xid)(?<![A-Za-z]Xid) \((?:PCI:)?"
    r"(?P<gpu>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-9a-fA-F])?)\): "
)

# code, mnemonic ("-": none published yet), layer, NVIDIA's resolution bucket, description.
_XIDS: tuple[tuple[int, str, str, str, str], ...] = (
    (
        1,
        "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) method error, unused on current GPUs",
    ),
    (
        2,
        "ROBUST_CHANNEL_FIFO_ERROR_SW_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) software method error, unused on current GPUs",
    ),
    (
        3,
        "ROBUST_CHANNEL_FIFO_ERROR_UNK_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) unknown method error, unused on current GPUs",
    ),
    (
        4,
        "ROBUST_CHANNEL_FIFO_ERROR_CHANNEL_BUSY",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) channel busy error, unused on current GPUs",
    ),
    (
        5,
        "ROBUST_CHANNEL_FIFO_ERROR_RUNOUT_OVERFLOW",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) runout overflow, unused on current GPUs",
    ),
    (
        6,
        "ROBUST_CHANNEL_FIFO_ERROR_PARSE_ERR",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) push buffer parse error, unused on current GPUs",
    ),
    (
        7,
        "ROBUST_CHANNEL_FIFO_ERROR_PTE_ERR",
        "driver",
        "CONTACT_SUPPORT",
        "a DMA engine (FIFO) page table error, unused on current GPUs",
    ),
    (
        8,
        "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT",
        "application",
        "RESTART_APP",
        "the GPU stopped processing a channel (idle timeout)",
    ),
    (
        9,
        "ROBUST_CHANNEL_GR_ERROR_INSTANCE",
        "driver",
        "CONTACT_SUPPORT",
        "a graphics engine instance error, unused on current GPUs",
    ),
    (
        10,
        "ROBUST_CHANNEL_GR_ERROR_SINGLE_STEP",
        "driver",
        "CONTACT_SUPPORT",
        "a graphics engine single-step error, unused on current GPUs",
    ),
    (
        11,
        "ROBUST_CHANNEL_GR_ERROR_MISSING_HW",
        "application",
        "RESTART_APP",
        "an invalid or corrupted push buffer stream",
    ),
    (
        12,
        "ROBUST_CHANNEL_GR_ERROR_SW_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "a graphics engine software method error, unused on current GPUs",
    ),
    (
        13,
        "ROBUST_CHANNEL_GR_EXCEPTION",
        "application",
        "RESTART_APP",
        "a graphics engine exception: a GPU kernel hit an illegal instruction, an "
        "illegal or misaligned address or an out-of-range access",
    ),
    (14, "ROBUST_CHANNEL_FAKE_ERROR", "driver", "IGNORE", "a test error injected on purpose"),
    (
        15,
        "ROBUST_CHANNEL_SCANLINE_TIMEOUT",
        "driver",
        "CONTACT_SUPPORT",
        "a display scanline timeout, unused on current GPUs",
    ),
    (
        16,
        "ROBUST_CHANNEL_VBLANK_CALLBACK_TIMEOUT",
        "driver",
        "CONTACT_SUPPORT",
        "a display engine hang (vblank callback timeout)",
    ),
    (
        17,
        "ROBUST_CHANNEL_PARAMETER_ERROR",
        "driver",
        "CONTACT_SUPPORT",
        "a display parameter error, unused on current GPUs",
    ),
    (
        18,
        "ROBUST_CHANNEL_BUS_MASTER_TIMEOUT_ERROR",
        "driver",
        "CONTACT_SUPPORT",
        "bus mastering disabled in the PCI configuration space",
    ),
    (
        19,
        "ROBUST_CHANNEL_DISP_MISSED_NOTIFIER",
        "driver",
        "CONTACT_SUPPORT",
        "a display engine missed notifier",
    ),
    (
        20,
        "ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "an invalid or corrupted MPEG push buffer",
    ),
    (
        21,
        "ROBUST_CHANNEL_ME_ERROR_SW_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "an invalid or corrupted motion estimation push buffer",
    ),
    (
        22,
        "ROBUST_CHANNEL_VP_ERROR_SW_METHOD",
        "driver",
        "CONTACT_SUPPORT",
        "an invalid or corrupted video processor push buffer",
    ),
    (
        23,
        "ROBUST_CHANNEL_RC_LOGGING_ENABLED",
        "driver",
        "CONTACT_SUPPORT",
        "error logging enabled, unused on current GPUs",
    ),
    (24, "ROBUST_CHANNEL_GR_SEMAPHORE_TIMEOUT", "driver", "CONTACT_SUPPORT", "a GPU semaphore timeout"),
    (
        25,
        "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY",
        "application",
        "RESTART_APP",
        "an invalid or illegal push buffer notify",
    ),
    (
        26,
        "ROBUST_CHANNEL_FIFO_ERROR_FBISTATE_TIMEOUT",
        "driver",
        "CONTACT_SUPPORT",
        "a framebuffer interface state timeout",
    ),
    (27, "ROBUST_CHANNEL_VP_ERROR", "driver", "CONTACT_SUPPORT", "a video processor exception"),
    (28, "ROBUST_CHANNEL_VP2_ERROR", "driver", "CONTACT_SUPPORT", "a video processor 2 exception"),
    (29, "ROBUST_CHANNEL_BSP_ERROR", "driver", "CONTACT_SUPPORT", "a video bitstream processor exception"),
    (
        30,
        "ROBUST_CHANNEL_BAD_ADDR_ACCESS",
        "driver",
        "CONTACT_SUPPORT",
        "a GPU semaphore access error, unused on current GPUs",
    ),
    (
        31,
        "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT",
        "application",
        "RESTART_APP",
        "a GPU memory page fault: a program used a GPU address it had not mapped (an "
        "illegal address or a use after free)",
    ),
    (
        32,
        "ROBUST_CHANNEL_PBDMA_ERROR",
        "application",
        "RESTART_APP",
        "an invalid or corrupted push buffer stream (PBDMA error)",
    ),
    (33, "ROBUST_CHANNEL_SEC_ERROR", "driver", "CONTACT_SUPPORT", "an internal micro-controller (SEC) error"),
    (34, "ROBUST_CHANNEL_MSVLD_ERROR", "driver", "CONTACT_SUPPORT", "a video decoder (MSVLD) exception"),
    (35, "ROBUST_CHANNEL_MSPDEC_ERROR", "driver", "CONTACT_SUPPORT", "a video decoder (MSPDEC) exception"),
    (
        36,
        "ROBUST_CHANNEL_MSPPP_ERROR",
        "driver",
        "CONTACT_SUPPORT",
        "a video post-processor (MSPPP) exception",
    ),
    (
        37,
        "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD",
        "driver",
        "IGNORE",
        "the graphics context firmware (FECS) got a method it does not implement",
    ),
    (
        38,
        "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT",
        "driver",
        "IGNORE",
        "a graphics context firmware (FECS) watchdog timeout",
    ),
    (39, "ROBUST_CHANNEL_CE0_ERROR", "application", "RESTART_APP", "a copy engine (CE0) exception"),
    (40, "ROBUST_CHANNEL_CE1_ERROR", "application", "RESTART_APP", "a copy engine (CE1) exception"),
    (41, "ROBUST_CHANNEL_CE2_ERROR", "application", "RESTART_APP", "a copy engine (CE2) exception"),
    (42, "ROBUST_CHANNEL_VIC_ERROR", "driver", "CONTACT_SUPPORT", "a video image compositor (VIC) exception"),
    (
        43,
        "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR",
        "application",
        "RESTART_APP",
        "the GPU stopped processing a channel after a fault the program caused, and reset that channel",
    ),
    (
        44,
        "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW",
        "driver",
        "IGNORE",
        "a graphics engine fault during a context switch",
    ),
    (
        45,
        "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL",
        "application",
        "WORKFLOW_XID_45",
        "preemptive cleanup: the driver tore down a program's GPU channels, because the"
        " program ended or an earlier error killed it",
    ),
    (
        46,
        "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR",
        "hardware",
        "RESET_GPU",
        "the GPU stopped processing (GPU timeout)",
    ),
    (47, "ROBUST_CHANNEL_NVENC0_ERROR", "driver", "CONTACT_SUPPORT", "a video encoder (NVENC0) exception"),
    (
        48,
        "ROBUST_CHANNEL_GPU_ECC_DBE",
        "memory",
        "WORKFLOW_XID_48",
        "an uncorrectable double-bit ECC error (DBE) in GPU memory",
    ),
    (
        49,
        "SILENT_RUNNING_CONSTANT_LEVEL_SET_BY_REGISTRY",
        "hardware",
        "CONTACT_SUPPORT",
        "a power state locked by a registry setting",
    ),
    (
        50,
        "SILENT_RUNNING_LEVEL_TRANSITION_DUE_TO_RC_ERROR",
        "hardware",
        "CONTACT_SUPPORT",
        "a power state change after a channel error",
    ),
    (
        51,
        "SILENT_RUNNING_STRESS_TEST_FAILURE",
        "hardware",
        "CONTACT_SUPPORT",
        "a power state change after a failed stress test",
    ),
    (
        52,
        "SILENT_RUNNING_LEVEL_TRANS_DUE_TO_TEMP_RISE",
        "hardware",
        "CONTACT_SUPPORT",
        "a power state change after the temperature rose (thermal event)",
    ),
    (
        53,
        "SILENT_RUNNING_TEMP_REDUCED_CLOCKING",
        "hardware",
        "CONTACT_SUPPORT",
        "clocks reduced because of temperature (thermal event)",
    ),
    (
        54,
        "SILENT_RUNNING_PWR_REDUCED_CLOCKING",
        "hardware",
        "CHECK_MECHANICALS",
        "clocks reduced because of power (a power brake or supply event)",
    ),
    (
        55,
        "SILENT_RUNNING_TEMPERATURE_READ_ERROR",
        "hardware",
        "CONTACT_SUPPORT",
        "the GPU's temperature could not be read",
    ),
    (
        56,
        "DISPLAY_CHANNEL_EXCEPTION",
        "driver",
        "CONTACT_SUPPORT",
        "a display engine (EVO) channel exception",
    ),
    (
        57,
        "FB_LINK_TRAINING_FAILURE_ERROR",
        "memory",
        "CONTACT_SUPPORT",
        "GPU memory (framebuffer) link training failed",
    ),
    (58, "FB_MEMORY_ERROR", "memory", "CONTACT_SUPPORT", "a GPU memory (framebuffer interface) error"),
    (59, "PMU_ERROR", "driver", "CONTACT_SUPPORT", "an internal micro-controller (PMU) error"),
    (60, "ROBUST_CHANNEL_SEC2_ERROR", "application", "RESTART_APP", "a security engine (SEC2) exception"),
    (
        61,
        "PMU_BREAKPOINT",
        "driver",
        "CONTACT_SUPPORT",
        "an internal micro-controller (PMU) breakpoint or warning",
    ),
    (62, "PMU_HALT_ERROR", "hardware", "RESET_GPU", "an internal micro-controller (PMU) halted"),
    (
        63,
        "INFOROM_DRAM_RETIREMENT_EVENT",
        "memory",
        "IGNORE",
        "a GPU memory row was marked for remapping (or a page for retirement) after an ECC error",
    ),
    (
        64,
        "INFOROM_DRAM_RETIREMENT_FAILURE",
        "memory",
        "RESET_GPU",
        "a GPU memory row could not be remapped (or a page retired): the GPU's spare rows are used up",
    ),
    (65, "ROBUST_CHANNEL_NVENC1_ERROR", "driver", "CONTACT_SUPPORT", "a video encoder (NVENC1) exception"),
    (
        66,
        "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION",
        "driver",
        "IGNORE",
        "a graphics context firmware (FECS) register access violation",
    ),
    (
        67,
        "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION",
        "driver",
        "IGNORE",
        "a graphics context firmware (FECS) verification violation",
    ),
    (68, "ROBUST_CHANNEL_NVDEC0_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC0) exception"),
    (
        69,
        "ROBUST_CHANNEL_GR_CLASS_ERROR",
        "application",
        "RESTART_APP",
        "a graphics engine class error: the program sent the GPU an invalid command",
    ),
    (70, "ROBUST_CHANNEL_CE3_ERROR", "application", "RESTART_APP", "a copy engine (CE3) exception"),
    (71, "ROBUST_CHANNEL_CE4_ERROR", "application", "RESTART_APP", "a copy engine (CE4) exception"),
    (72, "ROBUST_CHANNEL_CE5_ERROR", "application", "RESTART_APP", "a copy engine (CE5) exception"),
    (73, "ROBUST_CHANNEL_NVENC2_ERROR", "driver", "CONTACT_SUPPORT", "a video encoder (NVENC2) exception"),
    (74, "NVLINK_ERROR", "nvlink", "WORKFLOW_NVLINK_ERR", "an NVLink error on one of the GPU's links"),
    (75, "ROBUST_CHANNEL_CE6_ERROR", "application", "RESTART_APP", "a copy engine (CE6) exception"),
    (76, "ROBUST_CHANNEL_CE7_ERROR", "application", "RESTART_APP", "a copy engine (CE7) exception"),
    (77, "ROBUST_CHANNEL_CE8_ERROR", "application", "RESTART_APP", "a copy engine (CE8) exception"),
    (78, "VGPU_START_ERROR", "driver", "UPDATE_SWFW", "a vGPU could not be started"),
    (
        79,
        "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS",
        "hardware",
        "RESTART_BM",
        "the GPU has fallen off the bus: it stopped answering on PCIe (power, thermal, "
        "PCIe link or board fault)",
    ),
    (
        80,
        "PBDMA_PUSHBUFFER_CRC_MISMATCH",
        "application",
        "RESTART_APP",
        "a push buffer CRC mismatch (commands corrupted on their way to the GPU)",
    ),
    (81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR", "driver", "CONTACT_SUPPORT", "a VGA subsystem error"),
    (82, "ROBUST_CHANNEL_NVJPG0_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG0) exception"),
    (83, "ROBUST_CHANNEL_NVDEC1_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC1) exception"),
    (84, "ROBUST_CHANNEL_NVDEC2_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC2) exception"),
    (85, "ROBUST_CHANNEL_CE9_ERROR", "application", "RESTART_APP", "a copy engine (CE9) exception"),
    (
        86,
        "ROBUST_CHANNEL_OFA0_ERROR",
        "application",
        "RESTART_APP",
        "an optical flow accelerator (OFA0) exception",
    ),
    (87, "NVTELEMETRY_DRIVER_REPORT", "driver", "CONTACT_SUPPORT", "a driver telemetry report"),
    (88, "ROBUST_CHANNEL_NVDEC3_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC3) exception"),
    (89, "ROBUST_CHANNEL_NVDEC4_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC4) exception"),
    (90, "LTC_ERROR", "memory", "CONTACT_SUPPORT", "an L2 cache (LTC) error"),
    (91, "RESERVED_XID", "driver", "CONTACT_SUPPORT", "a reserved Xid"),
    (
        92,
        "EXCESSIVE_SBE_INTERRUPTS",
        "memory",
        "IGNORE",
        "an excessive rate of corrected single-bit ECC errors",
    ),
    (93, "INFOROM_ERASE_LIMIT_EXCEEDED", "hardware", "IGNORE", "the InfoROM reached its erase limit"),
    (
        94,
        "ROBUST_CHANNEL_CONTAINED_ERROR",
        "memory",
        "RESTART_APP",
        "a contained uncorrectable memory (ECC) error: only the programs using the bad memory were stopped",
    ),
    (
        95,
        "ROBUST_CHANNEL_UNCONTAINED_ERROR",
        "memory",
        "RESET_GPU",
        "an uncontained uncorrectable memory (ECC) error: every program on the GPU is affected",
    ),
    (96, "ROBUST_CHANNEL_NVDEC5_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC5) exception"),
    (97, "ROBUST_CHANNEL_NVDEC6_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC6) exception"),
    (98, "ROBUST_CHANNEL_NVDEC7_ERROR", "application", "RESTART_APP", "a video decoder (NVDEC7) exception"),
    (99, "ROBUST_CHANNEL_NVJPG1_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG1) exception"),
    (100, "ROBUST_CHANNEL_NVJPG2_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG2) exception"),
    (101, "ROBUST_CHANNEL_NVJPG3_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG3) exception"),
    (102, "ROBUST_CHANNEL_NVJPG4_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG4) exception"),
    (103, "ROBUST_CHANNEL_NVJPG5_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG5) exception"),
    (104, "ROBUST_CHANNEL_NVJPG6_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG6) exception"),
    (105, "ROBUST_CHANNEL_NVJPG7_ERROR", "application", "RESTART_APP", "a JPEG engine (NVJPG7) exception"),
    (106, "SMBPBI_TEST_MESSAGE", "driver", "IGNORE", "an out-of-band (SMBPBI) test message"),
    (107, "SMBPBI_TEST_MESSAGE_SILENT", "driver", "IGNORE", "a silent out-of-band (SMBPBI) test message"),
    (
        108,
        "DESTINATION_FLA_TRANSLATION_ERROR",
        "nvlink",
        "CONTACT_SUPPORT",
        "a fabric address (FLA) translation error at the destination GPU",
    ),
    (
        109,
        "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR",
        "application",
        "RESET_GPU",
        "a context switch timeout: a program's work did not yield the GPU in time",
    ),
    (110, "SEC_FAULT_ERROR", "hardware", "RESET_GPU", "a security fault in the GPU"),
    (111, "BUNDLE_ERROR_EVENT", "driver", "CONTACT_SUPPORT", "a graphics bundle error"),
    (112, "DISP_SUPERVISOR_ERROR", "driver", "CONTACT_SUPPORT", "a display supervisor error"),
    (113, "DP_LT_FAILURE", "driver", "CONTACT_SUPPORT", "a DisplayPort link training failure"),
    (114, "HEAD_RG_UNDERFLOW", "driver", "CONTACT_SUPPORT", "a display head underflow"),
    (115, "CORE_CHANNEL_REGS", "driver", "CONTACT_SUPPORT", "a display core channel error"),
    (116, "WINDOW_CHANNEL_REGS", "driver", "CONTACT_SUPPORT", "a display window channel error"),
    (117, "CURSOR_CHANNEL_REGS", "driver", "CONTACT_SUPPORT", "a display cursor channel error"),
    (118, "HEAD_REGS", "driver", "CONTACT_SUPPORT", "a display head error"),
    (
        119,
        "GSP_RPC_TIMEOUT",
        "driver",
        "RESET_GPU",
        "the GPU System Processor (GSP) firmware did not answer a driver call in time",
    ),
    (120, "GSP_ERROR", "driver", "RESET_GPU", "the GPU System Processor (GSP) firmware reported an error"),
    (
        121,
        "C2C_ERROR",
        "hardware",
        "IGNORE",
        "a chip-to-chip (C2C, Grace to GPU) link error that was corrected",
    ),
    (
        122,
        "SPI_PMU_RPC_READ_FAIL",
        "hardware",
        "CONTACT_SUPPORT",
        "a read from the GPU's SPI flash (through the PMU) failed",
    ),
    (
        123,
        "SPI_PMU_RPC_WRITE_FAIL",
        "hardware",
        "CONTACT_SUPPORT",
        "a write to the GPU's SPI flash (through the PMU) failed",
    ),
    (
        124,
        "SPI_PMU_RPC_ERASE_FAIL",
        "hardware",
        "CONTACT_SUPPORT",
        "an erase of the GPU's SPI flash (through the PMU) failed",
    ),
    (125, "INFOROM_FS_ERROR", "hardware", "CONTACT_SUPPORT", "the InfoROM file system has an error"),
    (126, "ROBUST_CHANNEL_CE10_ERROR", "application", "RESTART_APP", "a copy engine (CE10) exception"),
    (127, "ROBUST_CHANNEL_CE11_ERROR", "application", "RESTART_APP", "a copy engine (CE11) exception"),
    (128, "ROBUST_CHANNEL_CE12_ERROR", "application", "RESTART_APP", "a copy engine (CE12) exception"),
    (129, "ROBUST_CHANNEL_CE13_ERROR", "application", "RESTART_APP", "a copy engine (CE13) exception"),
    (130, "ROBUST_CHANNEL_CE14_ERROR", "application", "RESTART_APP", "a copy engine (CE14) exception"),
    (131, "ROBUST_CHANNEL_CE15_ERROR", "application", "RESTART_APP", "a copy engine (CE15) exception"),
    (132, "ROBUST_CHANNEL_CE16_ERROR", "application", "RESTART_APP", "a copy engine (CE16) exception"),
    (133, "ROBUST_CHANNEL_CE17_ERROR", "application", "RESTART_APP", "a copy engine (CE17) exception"),
    (134, "ROBUST_CHANNEL_CE18_ERROR", "application", "RESTART_APP", "a copy engine (CE18) exception"),
    (135, "ROBUST_CHANNEL_CE19_ERROR", "application", "RESTART_APP", "a copy engine (CE19) exception"),
    (136, "ALI_TRAINING_FAIL", "nvlink", "RESET_GPU", "NVLink training (ALI) failed: a link did not come up"),
    (137, "NVLINK_FLA_PRIV_ERR", "nvlink", "IGNORE", "an NVLink fabric address (FLA) privilege error"),
    (
        138,
        "ROBUST_CHANNEL_DLA_ERROR",
        "driver",
        "CONTACT_SUPPORT",
        "a deep learning accelerator (DLA) exception",
    ),
    (
        139,
        "ROBUST_CHANNEL_OFA1_ERROR",
        "application",
        "RESTART_APP",
        "an optical flow accelerator (OFA1) exception",
    ),
    (
        140,
        "UNRECOVERABLE_ECC_ERROR_ESCAPE",
        "memory",
        "RESET_GPU",
        "an uncorrectable ECC error escaped containment",
    ),
    (141, "ROBUST_CHANNEL_FAST_PATH_ERROR", "driver", "IGNORE", "a fast path channel error"),
    (142, "ROBUST_CHANNEL_NVENC3_ERROR", "driver", "CONTACT_SUPPORT", "a video encoder (NVENC3) exception"),
    (143, "GPU_INIT_ERROR", "hardware", "RESET_GPU", "the GPU failed to initialize"),
    (144, "NVLINK_SAW_ERROR", "nvlink", "WORKFLOW_NVLINK5_ERR", "an NVLink (SAW block) error"),
    (145, "NVLINK_RLW_ERROR", "nvlink", "WORKFLOW_NVLINK5_ERR", "an NVLink (RLW block) error"),
    (146, "NVLINK_TLW_ERROR", "nvlink", "WORKFLOW_NVLINK5_ERR", "an NVLink (TLW block) error"),
    (147, "NVLINK_TREX_ERROR", "nvlink", "WORKFLOW_NVLINK5_ERR", "an NVLink (TREX block) error"),
    (148, "NVLINK_NVLPW_CTRL_ERROR", "nvlink", "WORKFLOW_NVLINK5_ERR", "an NVLink (NVLPW control) error"),
    (
        149,
        "NVLINK_NETIR_ERROR",
        "nvlink",
        "WORKFLOW_NVLINK5_ERR",
        "an NVLink (NETIR, the link to the NVLink switch fabric) error",
    ),
    (150, "NVLINK_MSE_ERROR", "nvlink", "WORKFLOW_NVLINK5_ERR", "an NVLink management engine (MSE) error"),
    (
        151,
        "ROBUST_CHANNEL_KEY_ROTATION_ERROR",
        "driver",
        "RESTART_VM",
        "a confidential computing key rotation failed",
    ),
    (
        152,
        "ROBUST_CHANNEL_DLA_SMMU_ERROR",
        "driver",
        "IGNORE",
        "a deep learning accelerator (DLA) SMMU error",
    ),
    (153, "ROBUST_CHANNEL_DLA_TIMEOUT", "driver", "IGNORE", "a deep learning accelerator (DLA) timeout"),
    (
        154,
        "GPU_RECOVERY_ACTION_CHANGED",
        "driver",
        "XID_154",
        "the GPU's recovery action changed after another Xid (none, GPU reset, node "
        "reboot or drain and reset)",
    ),
    (
        155,
        "NVLINK_SW_DEFINED_ERROR",
        "nvlink",
        "RESET_GPU",
        "an NVLink error the driver detected in software",
    ),
    (
        156,
        "RESOURCE_RETIREMENT_EVENT",
        "memory",
        "RESET_GPU",
        "a GPU memory resource was retired after an error and takes effect at the next reset",
    ),
    (157, "RESOURCE_RETIREMENT_FAILURE", "memory", "IGNORE", "a GPU memory resource could not be retired"),
    (158, "GPU_FATAL_TIMEOUT", "hardware", "RESET_GPU", "a fatal GPU timeout"),
    (
        159,
        "ROBUST_CHANNEL_CHI_NON_DATA_ERROR",
        "driver",
        "CHECK_UVM",
        "a coherent CPU-GPU interconnect (CHI) non-data error",
    ),
    (
        160,
        "CHANNEL_RETIREMENT_EVENT",
        "memory",
        "RESTART_BM",
        "a GPU memory channel was marked for retirement (HBM channel repair), applied "
        "at the next node restart",
    ),
    (161, "CHANNEL_RETIREMENT_FAILURE", "memory", "IGNORE", "a GPU memory channel could not be retired"),
    (162, "-", "hardware", "RESET_GPU", "an error NVIDIA lists with the action to reset the GPU"),
)


# The driver's own words around an Xid that some lines carry without the Xid's number (the banner
# of a GSP timeout, printed before or instead of the Xid 119 line).
_TEXTS: dict[int, tuple[str, ...]] = {
    119: ("Timeout waiting for RPC from GSP", "of waiting for RPC response from", "GSP Timeout"),
}


def _entry(code: int, mnemonic: str, layer: str, bucket: str, description: str) -> Entry:
    meaning, fix = _OWN.get(code) or _BUCKETS[bucket]
    name = mnemonic if mnemonic != "-" else f"Xid {code}"
    return Entry(
        str(code),
        name,
        f"Xid {code} ({name}), {description}: {meaning}",
        fix,
        layer,
        aliases=(f"xid {code}",),
        texts=_TEXTS.get(code, ()),
        source=MAPPING,
    )


CATALOGUE = Catalogue(
    id="xid",
    title="NVIDIA Xid errors",
    source=SOURCE,
    version="Xid catalog for Ampere and newer GPUs (Xids 1-162), resolutions as NVIDIA NVSentinel's mapping",
    entries=tuple(_entry(*row) for row in _XIDS),
    applies_to=(
        "kernel",
        "plugin-log",
        "nvidia-smi",
        "events",
        "operand",
        "host",
        "node",
        "cuda-workload",
        "nccl-workload",
    ),
    readers=(
        # Each reader starts with the component's own words, matched case-sensitively so the
        # regex engine skips to them (a healthy 200-line log is read in well under a millisecond).
        # The kernel driver: `NVRM: Xid (PCI:0000:3b:00): 79, pid=...` (older drivers print no
        # `PCI:`); never the `SXid (PCI:...)` of an NVSwitch.
        # Xid 154 first, for the recovery action it names (`..., GPU recovery action changed from 0x0
        # (None) to 0x2 (Node Reboot Required)`); the general reader finds the same Xid after it.
        _KERNEL
        + r"(?P<code>154), GPU recovery action changed from [^()]*\([^)]*\) to \S+ \((?P<action>[^)]+)\)",
        _KERNEL + r"(?P<code>\d+)\b",
        # Newer drivers name the Xid that caused this one (`NVRM: Xid (PCI:0000:dc:00): 45, ...
        # caused by previous Xid 149`): that Xid is read too, so the root is reported, not the
        # consequence, even where the root's own line is not in the text. Its GPU is not read:
        # the earlier Xid may be another GPU's (an NVLink peer's).
        r"(?-i:Xid)(?<![A-Za-z]Xid) \([^)\n]{0,40}\): \d+\b[^\n]*? (?-i:caused by previous Xid) "
        r"(?P<code>\d+)\b",
        # The device plugin: `XidCriticalError: Xid=79 on Device=GPU-...; marking device as
        # unhealthy.` (`on GPU=`, `, All devices will go unhealthy` in older releases).
        r"(?-i:XidCriticalError: Xid=)(?P<code>\d+)(?: on (?:Device|GPU)=(?P<gpu>[\w-]+))?",
        # Both log each NVML event they process or skip (`Processing event {Device:... EventType:8
        # EventData:79 GpuInstanceId:...}`, Go's %+v of the event); type 8 is an Xid critical error.
        r"(?-i:ing event \{Device:)[^\n]{0,200}? EventType:8 EventData:(?P<code>\d+)",
        # The DRA driver's kubelet plugin: `Sending unhealthy notification for device GPU-... due
        # to event type: 8 and event data: 79`.
        r"(?-i:unhealthy notification for device )(?P<gpu>\S+) due to event type: \S+ "
        r"and event data: (?P<code>\d+)",
    ),
    unknown=Entry(
        "?",
        "Xid not in this catalogue",
        "Xid {code} is not in the Xid catalogue gpuctl carries (a newer driver's Xid): a GPU error "
        "the device plugin treats as fatal, marking the GPU unhealthy",
        "look Xid {code} up in NVIDIA's Xid catalog ("
        + SOURCE
        + ") for its resolution; until then "
        + _DRAIN
        + " and "
        + _RESET,
        "hardware",
    ),
)
