"""Workload rows: what the CUDA check (vectorAdd on every GPU) and the NCCL all-reduce print on
broken nodes. A CUDA error reaches gpuctl from both: vectorAdd names it `(error code ...)`, NCCL as
`NCCL WARN Cuda failure '...'`, applications as `CUDA error: ...`.

Fabric Manager's error 802 (`system not yet initialized`) is gpu.fabric-not-ready in table_gpu.py:
nvidia-smi and the device plugin see it too.
"""

from __future__ import annotations

from gpuctl.diagnose.signatures import HARDWARE_FIX, sig

_CUDA_ALSO = ("nccl-workload", "events", "plugin-log")
_NCCL_DEBUG = (
    "rerun the all-reduce with NCCL_DEBUG=WARN (or INFO) in its environment: the `NCCL WARN` line "
    "before this one names the call that failed"
)

WORKLOAD = (
    # --- CUDA runtime errors (cudaGetErrorString) ------------------------------------------------
    sig(
        "cuda.driver-too-old", "cuda-workload", "driver",
        r"CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver",
        "CUDA cannot use the node's driver (CUDA error 35): the container's CUDA runtime needs a newer "
        "driver, the loaded kernel module cannot drive this GPU (Blackwell needs the open modules), "
        "or the container has no driver library at all (the pod does not run with the NVIDIA "
        "runtime: no RuntimeClass while nvidia is not the default runtime)",
        "on {node}: `nvidia-smi` shows the newest CUDA the driver runs (top right); upgrade the driver "
        "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`) or install its open kernel "
        "modules, or pick an image built for that CUDA (`gpuctl verify --cuda-image IMAGE`); if the "
        "driver is new enough, run the pod with `runtimeClassName: nvidia` (`gpuctl verify "
        "--runtime-class nvidia`)",
        also=_CUDA_ALSO,
    ),
    sig(
        "cuda.no-device", "cuda-workload", "runtime",
        # Not the start hook's own CUDA check (container-toolkit.hook-cuda-no-device): that is the
        # host's GPU, not the container's view of it.
        r"(?<!initialization error: cuda error: )no CUDA-capable device is detected|"
        r"CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice",
        "CUDA sees no GPU in the container (CUDA error 100): the NVIDIA runtime injected no device "
        "(runtime not the default and no RuntimeClass, NVIDIA_VISIBLE_DEVICES empty or void) or the "
        "driver cannot open the GPU",
        "`kubectl exec` into a GPU pod on {node} and run `nvidia-smi -L`; if it lists nothing, rerun with "
        "`gpuctl verify --runtime-class nvidia` or configure the runtime (`sudo nvidia-ctk runtime "
        "configure --runtime=containerd --set-as-default` on {node}); if it lists the GPUs, check "
        "`dmesg | grep -i nvrm` on {node}",
        also=_CUDA_ALSO,
    ),
    sig(
        "cuda.ecc-uncorrectable", "cuda-workload", "hardware",
        r"uncorrectable ECC error encountered|CUDA_ERROR_ECC_UNCORRECTABLE|cudaErrorECCUncorrectable",
        "a GPU hit an uncorrectable ECC memory error (CUDA error 214); work on it fails until the GPU "
        "is reset, and a repeat means failing memory",
        "on {node}: `nvidia-smi -q -d ECC` (volatile/aggregate uncorrectable counts) and "
        "`nvidia-smi -q -d ROW_REMAPPER` (pending remaps need a reset); " + HARDWARE_FIX,
        also=_CUDA_ALSO,
    ),
    sig(
        "cuda.devices-unavailable", "cuda-workload", "sharing",
        r"all CUDA-capable devices are busy or unavailable|"
        r"CUDA-capable device\(s\) is/are busy or unavailable|"
        r"cudaErrorDevicesUnavailable|CUDA_ERROR_DEVICE_UNAVAILABLE",
        "CUDA cannot open the GPU (CUDA error 46): its compute mode is Exclusive_Process with another "
        "process holding it (MPS sets it: a container that does not reach the MPS daemon, through its "
        "pipe directory and /dev/shm, is refused), or Prohibited; or MIG mode is on with no instance "
        "this container may use",
        "on {node}: `nvidia-smi --query-gpu=index,compute_mode,mig.mode.current --format=csv` and "
        "`nvidia-smi` (processes); set the default mode with `sudo nvidia-smi -c DEFAULT` (or "
        "`-i GPU -c DEFAULT`), stop the other process, or create MIG instances / disable MIG "
        "(`sudo nvidia-smi -mig 0`); under MPS sharing keep the mode and check the daemon instead: "
        "`echo get_server_list | nvidia-cuda-mps-control`, the device plugin's mps-control-daemon pod "
        "log, and that the pod mounts the daemon's pipe directory and /dev/shm",
        also=_CUDA_ALSO,
    ),
    # --- NCCL (nccl-tests all_reduce_perf) ------------------------------------------------------
    sig(
        "nccl.p2p-unavailable", "nccl-workload", "hardware",
        r"peer access is not supported between these two devices|cudaErrorPeerAccessUnsupported",
        "the GPUs cannot reach each other peer-to-peer (CUDA error 217): PCIe ACS or an IOMMU in "
        "translated mode blocks P2P between them, the VM did not pass the topology through, or the "
        "GPUs do not support P2P (GeForce)",
        "on {node}: `nvidia-smi topo -p2p r` (every pair should read OK) and `nvidia-smi topo -m`; "
        "`sudo lspci -vvv | grep ACSCtl` (SrcValid+ on the switches' ports blocks P2P: disable ACS in "
        "the BIOS or with setpci); boot with `iommu=pt`; see NCCL's troubleshooting guide on ACS",
        also=("cuda-workload", "events"),
    ),
    sig(
        "nccl.warn", "nccl-workload", "runtime",
        r"NCCL WARN (?P<warning>.{1,160})",
        "NCCL reported a problem gpuctl has no entry for: {warning}",
        _NCCL_DEBUG + "; NCCL's troubleshooting guide lists the usual causes",
        generic=True,
    ),
)  # fmt: skip
