"""CUDA runtime and driver errors: every `cudaError_t` (driver_types.h) and `CUresult` (cuda.h) of
CUDA 13.3, one entry per number.

Since CUDA 10.1 the runtime's and the driver's codes share their numbers where they mean the same
thing (`cudaErrorSystemNotReady` = `CUDA_ERROR_SYSTEM_NOT_READY` = 802), so both names are aliases
of one entry. The messages are what `cudaGetErrorString`/`cuGetErrorString` return, as programs
print them: PyTorch `RuntimeError: CUDA error: <message>`, the CUDA samples' `code=802
(cudaErrorSystemNotReady)`, vectorAdd's `(error code <message>)`, deviceQuery's `cudaGetDeviceCount
returned 100` and `-> <message>`, NCCL's `Cuda failure '<message>'`, TensorFlow's `CUDA_ERROR_X:
<message>`. A long message is recognised anywhere in a line; a short one ("out of memory",
"unknown error") only after one of those prefixes, where it cannot be another tool's words.

Sources: https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (enum cudaError),
https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (enum cudaError_enum), the
CUDA 13.3 headers driver_types.h and cuda.h.
"""

from __future__ import annotations

import re

from gpuctl.diagnose.catalogue import Catalogue, Entry

RUNTIME_DOC = "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html"
DRIVER_DOC = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html"

_APP = (
    "the program's own bug, not the node's: rerun it with `CUDA_LAUNCH_BLOCKING=1` (and under "
    "`compute-sanitizer`) to find the failing call and fix it there; {node} is fine unless other "
    "programs fail on it too"
)
_RELAUNCH = "; the CUDA context is now unusable: the process must exit and start again (restart the pod)"
_DRIVER_UPGRADE = (
    "on {node}: `nvidia-smi` shows the newest CUDA the driver runs (top right); upgrade the driver "
    "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`) or run an image built for that "
    "CUDA (`gpuctl verify --cuda-image IMAGE`)"
)
_REBOOT = (
    "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first) so the loaded kernel module and "
    "the user-space driver libraries are one version; `cat /proc/driver/nvidia/version` and "
    "`nvidia-smi` show both"
)
_HARDWARE = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), read `dmesg | grep -i -e xid -e NVRM` "
    "on it, reset the GPU (`nvidia-smi -r -i GPU`) or power-cycle the node; replace the GPU if it repeats"
)
_MPS = (
    "on {node}: check the MPS control daemon (`echo get_server_list | nvidia-cuda-mps-control`, its "
    "log in /var/log/nvidia-mps) and that the pod mounts the daemon's pipe directory "
    "(CUDA_MPS_PIPE_DIRECTORY); with the device plugin's MPS sharing, `kubectl -n kube-system logs` "
    "the mps-control-daemon pod; lower the replicas per GPU if the limit is reached"
)
_CONTAINER_DEVICES = (
    "`kubectl exec` into a GPU pod on {node} and run `nvidia-smi -L` and `ls -l /dev/nvidia*`: "
    "/dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidiaN must all be there; on the node, `sudo "
    "nvidia-modprobe -u -c=0` (or `sudo modprobe nvidia-uvm`) creates the UVM device, and `dmesg | "
    "grep -i nvrm` says why the driver refused"
)

# (number, runtime name, driver name, message, layer, cause, fix); an empty name: the API has no
# such code. Messages are cudaGetErrorString's (cuGetErrorString's where only the driver has it).
# fmt: off
_ROWS: tuple[tuple[int, str, str, str, str, str, str], ...] = (
    (1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument", "application",
     "a CUDA call got a parameter out of its range (CUDA error 1)", _APP),
    (2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", "application",
     "the GPU's memory is exhausted (CUDA error 2): the program asks for more than is free, "
     "another process on the same GPU (a shared or time-sliced GPU, a leftover process) holds it, or "
     "the pod's share is smaller than the GPU: a MIG instance's memory, or under the device plugin's "
     "MPS sharing the per-client device memory limit (a share of the GPU's memory per replica)",
     "on {node}: `nvidia-smi` lists the processes holding GPU memory; stop leftovers, give the pod a "
     "whole GPU (no time-slicing/MPS sharing, or fewer MPS replicas) or a larger MIG profile, or "
     "reduce the program's batch size or model size"),
    (3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED", "initialization error", "driver",
     "CUDA could not initialise the driver (CUDA error 3): the container lacks a GPU device node "
     "(/dev/nvidia-uvm is the usual one missing), the kernel module refused the GPU, or the process "
     "forked after initialising CUDA",
     _CONTAINER_DEVICES + "; a program that forks after CUDA starts must use the spawn start method"),
    (4, "cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED", "driver shutting down", "application",
     "a CUDA call ran while the process was exiting, after the driver was unloaded (CUDA error 4)",
     "harmless at exit; if the program fails with it earlier, " + _APP),
    (5, "cudaErrorProfilerDisabled", "CUDA_ERROR_PROFILER_DISABLED",
     "profiler disabled while using external profiling tool", "application",
     "a profiler call ran while an external profiling tool (Nsight) owns profiling (CUDA error 5)",
     "run without the external profiler, or drop the program's own cudaProfilerStart/Stop calls"),
    (6, "cudaErrorProfilerNotInitialized", "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
     "profiler not initialized: call cudaProfilerInitialize()", "application",
     "a deprecated profiler state error (CUDA error 6): the profiler was not initialised",
     "remove the obsolete profiler calls or run under a current profiler; " + _APP),
    (7, "cudaErrorProfilerAlreadyStarted", "CUDA_ERROR_PROFILER_ALREADY_STARTED",
     "profiler already started", "application",
     "cudaProfilerStart was called twice (CUDA error 7; deprecated, harmless)",
     "remove the duplicate cudaProfilerStart call; " + _APP),
    (8, "cudaErrorProfilerAlreadyStopped", "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
     "profiler already stopped", "application",
     "cudaProfilerStop was called twice (CUDA error 8; deprecated, harmless)",
     "remove the duplicate cudaProfilerStop call; " + _APP),
    (9, "cudaErrorInvalidConfiguration", "", "invalid configuration argument", "application",
     "a kernel launch asks for more threads, blocks or shared memory than the GPU allows (CUDA error 9)",
     _APP),
    (10, "cudaErrorVersionTranslation", "", "", "driver",
     "the driver is newer than the CUDA runtime and returned graph node parameters the runtime cannot "
     "translate (CUDA error 10)",
     "use a CUDA runtime (image) as new as the driver's CUDA version (`nvidia-smi` header), or avoid "
     "the graph node query in the program"),
    (12, "cudaErrorInvalidPitchValue", "", "invalid pitch argument", "application",
     "a pitch parameter of a 2D/3D copy or allocation is out of range (CUDA error 12)", _APP),
    (13, "cudaErrorInvalidSymbol", "", "invalid device symbol", "application",
     "the symbol passed to a CUDA call is not a valid device symbol (CUDA error 13)", _APP),
    (16, "cudaErrorInvalidHostPointer", "", "invalid host pointer", "application",
     "a host pointer passed to a CUDA call is invalid (CUDA error 16; deprecated)", _APP),
    (17, "cudaErrorInvalidDevicePointer", "", "invalid device pointer", "application",
     "a device pointer passed to a CUDA call is invalid (CUDA error 17; deprecated)", _APP),
    (18, "cudaErrorInvalidTexture", "", "invalid texture reference", "application",
     "the texture passed to a CUDA call is not valid (CUDA error 18)", _APP),
    (19, "cudaErrorInvalidTextureBinding", "", "texture is not bound to a pointer", "application",
     "the texture is not bound to a valid address (CUDA error 19)", _APP),
    (20, "cudaErrorInvalidChannelDescriptor", "", "invalid channel descriptor", "application",
     "the channel descriptor has an unsupported format (CUDA error 20)", _APP),
    (21, "cudaErrorInvalidMemcpyDirection", "", "invalid copy direction for memcpy", "application",
     "a memcpy got a direction that is not a cudaMemcpyKind (CUDA error 21)", _APP),
    (22, "cudaErrorAddressOfConstant", "", "invalid address of constant", "application",
     "the program took the address of a constant variable (CUDA error 22; deprecated)", _APP),
    (23, "cudaErrorTextureFetchFailed", "", "fetch from texture failed", "application",
     "a texture fetch failed (CUDA error 23; deprecated)", _APP),
    (24, "cudaErrorTextureNotBound", "", "cannot fetch from a texture that is not bound", "application",
     "a kernel read a texture that is not bound (CUDA error 24; deprecated)", _APP),
    (25, "cudaErrorSynchronizationError", "", "incorrect use of __syncthreads()", "application",
     "a block synchronisation failed (CUDA error 25; deprecated)", _APP),
    (26, "cudaErrorInvalidFilterSetting", "", "linear filtering not supported for non-float type",
     "application", "linear texture filtering on a non-float type (CUDA error 26)", _APP),
    (27, "cudaErrorInvalidNormSetting", "",
     "read as normalized float not supported for 32-bit non float type", "application",
     "a 32-bit integer texture read as normalized float (CUDA error 27)", _APP),
    (28, "cudaErrorMixedDeviceExecution", "",
     "device emulation mode and device execution mode cannot be mixed", "application",
     "emulation and device code mixed (CUDA error 28; removed with CUDA 3.1)", _APP),
    (31, "cudaErrorNotYetImplemented", "", "feature not yet implemented", "application",
     "the API call is not implemented (CUDA error 31; deprecated)", _APP),
    (32, "cudaErrorMemoryValueTooLarge", "", "memory size or pointer value too large to fit in 32 bit",
     "application", "an emulated pointer exceeded 32 bits (CUDA error 32; deprecated)", _APP),
    (34, "cudaErrorStubLibrary", "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library", "toolkit",
     "the program loaded the toolkit's stub libcuda.so (CUDA error 34) instead of the driver's: the "
     "NVIDIA runtime did not inject the driver libraries into the container, or LD_LIBRARY_PATH puts "
     "/usr/local/cuda/lib64/stubs first",
     "remove the stubs directory from LD_LIBRARY_PATH in the image; check that the pod runs under the "
     "NVIDIA runtime (`gpuctl verify --runtime-class nvidia`, or `sudo nvidia-ctk runtime configure "
     "--runtime=containerd --set-as-default` on {node})"),
    (35, "cudaErrorInsufficientDriver", "", "CUDA driver version is insufficient for CUDA runtime version",
     "driver",
     "CUDA cannot use the node's driver (CUDA error 35): the container's CUDA runtime needs a newer "
     "driver, the loaded kernel module cannot drive this GPU (Blackwell needs the open modules), or "
     "the container has no driver at all (the CUDA runtime returns 35 when it finds no libcuda.so.1: "
     "the pod requests no GPU or does not run with the NVIDIA runtime, so nothing injected it)",
     _DRIVER_UPGRADE + "; install the open kernel modules for Blackwell; if `nvidia-smi` is missing "
     "in the container, request a GPU (`nvidia.com/gpu`) and run the pod with the NVIDIA runtime "
     "(`gpuctl verify --runtime-class nvidia` proves it on {node})"),
    (36, "cudaErrorCallRequiresNewerDriver", "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
     "API call is not supported in the installed CUDA driver",
     "driver",
     "the program calls a CUDA API the node's driver is too old for (CUDA error 36)", _DRIVER_UPGRADE),
    (37, "cudaErrorInvalidSurface", "", "invalid surface reference", "application",
     "the surface passed to a CUDA call is not valid (CUDA error 37)", _APP),
    (43, "cudaErrorDuplicateVariableName", "", "duplicate global variable looked up by string name",
     "application", "two device variables share one name (CUDA error 43)", _APP),
    (44, "cudaErrorDuplicateTextureName", "", "duplicate texture looked up by string name",
     "application", "two textures share one name (CUDA error 44)", _APP),
    (45, "cudaErrorDuplicateSurfaceName", "", "duplicate surface looked up by string name",
     "application", "two surfaces share one name (CUDA error 45)", _APP),
    (46, "cudaErrorDevicesUnavailable", "CUDA_ERROR_DEVICE_UNAVAILABLE",
     "CUDA-capable device(s) is/are busy or unavailable", "config",
     "CUDA cannot open the GPU (CUDA error 46): its compute mode is Exclusive_Process with another "
     "process holding it (MPS sets it: a container that does not reach the MPS daemon, through its "
     "pipe directory and /dev/shm, is refused), or Prohibited; or MIG mode is on with no instance this "
     "container may use",
     "on {node}: `nvidia-smi --query-gpu=index,compute_mode,mig.mode.current --format=csv` and "
     "`nvidia-smi` (processes); set the default mode with `sudo nvidia-smi -c DEFAULT` (or "
     "`-i GPU -c DEFAULT`), stop the other process, or create MIG instances / disable MIG "
     "(`sudo nvidia-smi -mig 0`); under MPS sharing keep the mode and check the daemon instead: "
     "`echo get_server_list | nvidia-cuda-mps-control`, the device plugin's mps-control-daemon pod "
     "log, and that the pod mounts the daemon's pipe directory and /dev/shm"),
    (49, "cudaErrorIncompatibleDriverContext", "", "incompatible driver context", "application",
     "a driver API context the runtime cannot use is current (CUDA error 49)", _APP),
    (52, "cudaErrorMissingConfiguration", "", "__global__ function call is not configured",
     "application", "a kernel was launched without a launch configuration (CUDA error 52)", _APP),
    (53, "cudaErrorPriorLaunchFailure", "", "unspecified launch failure in prior launch", "application",
     "an earlier kernel launch failed (CUDA error 53; deprecated)", _APP),
    (65, "cudaErrorLaunchMaxDepthExceeded", "", "launch would exceed maximum depth of nested launches",
     "application", "device-side launches nested deeper than allowed (CUDA error 65)", _APP),
    (66, "cudaErrorLaunchFileScopedTex", "",
     "launch failed because kernel uses unsupported, file-scoped textures (texture objects are supported)",
     "application", "a device-side launch of a kernel using file-scoped textures (CUDA error 66)", _APP),
    (67, "cudaErrorLaunchFileScopedSurf", "",
     "launch failed because kernel uses unsupported, file-scoped surfaces (surface objects are supported)",
     "application", "a device-side launch of a kernel using file-scoped surfaces (CUDA error 67)", _APP),
    (68, "cudaErrorSyncDepthExceeded", "",
     "cudaDeviceSynchronize failed because caller's grid depth exceeds cudaLimitDevRuntimeSyncDepth",
     "application", "device-side cudaDeviceSynchronize at a grid depth above the limit (CUDA error 68)",
     _APP),
    (69, "cudaErrorLaunchPendingCountExceeded", "",
     "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount", "application",
     "too many pending device-side launches (CUDA error 69)",
     "raise cudaLimitDevRuntimePendingLaunchCount with cudaDeviceSetLimit; " + _APP),
    (98, "cudaErrorInvalidDeviceFunction", "", "invalid device function", "config",
     "the kernel does not exist for this GPU (CUDA error 98): the program or library was not compiled "
     "for the GPU's architecture (compute capability)",
     "on {node}: `nvidia-smi --query-gpu=name,compute_cap --format=csv`; use an image or wheel built "
     "for that architecture (or with PTX for it), or rebuild with `-gencode arch=compute_XX,code=sm_XX`"),
    (100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected", "runtime",
     "CUDA sees no GPU in the container (CUDA error 100): the NVIDIA runtime injected no device "
     "(runtime not the default and no RuntimeClass, NVIDIA_VISIBLE_DEVICES empty or void, "
     "CUDA_VISIBLE_DEVICES naming no GPU) or the driver cannot open the GPU",
     "`kubectl exec` into a GPU pod on {node} and run `nvidia-smi -L`; if it lists nothing, rerun with "
     "`gpuctl verify --runtime-class nvidia` or configure the runtime (`sudo nvidia-ctk runtime "
     "configure --runtime=containerd --set-as-default` on {node}); if it lists the GPUs, check "
     "CUDA_VISIBLE_DEVICES and `dmesg | grep -i nvrm` on {node}"),
    (101, "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal", "config",
     "the program asks for a GPU index the container does not have (CUDA error 101): it expects more "
     "GPUs than the pod was given, or CUDA_VISIBLE_DEVICES names GPUs outside the container",
     "request as many GPUs as the program uses (`nvidia.com/gpu` limit) or make it use the ones it "
     "sees (`nvidia-smi -L` in the pod); do not set CUDA_VISIBLE_DEVICES to host indices in a pod"),
    (102, "cudaErrorDeviceNotLicensed", "CUDA_ERROR_DEVICE_NOT_LICENSED",
     "device doesn't have valid Grid license", "config",
     "the vGPU has no valid NVIDIA vGPU (GRID) license, so CUDA is refused (CUDA error 102)",
     "on {node}: `nvidia-smi -q | grep -i -A2 license` and the nvidia-gridd log (`journalctl -u "
     "nvidia-gridd`); configure the license server (/etc/nvidia/gridd.conf, client token) and restart "
     "nvidia-gridd"),
    (103, "cudaErrorSoftwareValidityNotEstablished", "", "integrity checks failed", "driver",
     "the CUDA runtime's self-tests of itself or the driver failed (CUDA error 103)",
     "reinstall the driver on {node} (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`) and "
     "use an unmodified CUDA image"),
    (127, "cudaErrorStartupFailure", "", "startup failure in cuda runtime", "driver",
     "the CUDA runtime failed internally while starting (CUDA error 127)",
     "on {node}: `nvidia-smi` and `dmesg | grep -i nvrm`; reinstall or upgrade the driver "
     "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`)"),
    (200, "cudaErrorInvalidKernelImage", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid",
     "application", "a device code image (cubin/fatbin) is corrupt or not for this GPU (CUDA error 200)",
     "rebuild or reinstall the program's CUDA binaries for the GPU's architecture; " + _APP),
    (201, "cudaErrorDeviceUninitialized", "CUDA_ERROR_INVALID_CONTEXT", "invalid device context",
     "application", "no valid CUDA context is current on the calling thread (CUDA error 201)", _APP),
    (202, "", "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "context already current", "application",
     "the context is already current (CUDA error 202; deprecated)", _APP),
    (205, "cudaErrorMapBufferObjectFailed", "CUDA_ERROR_MAP_FAILED", "mapping of buffer object failed",
     "application", "a buffer object could not be mapped (CUDA error 205)", _APP),
    (206, "cudaErrorUnmapBufferObjectFailed", "CUDA_ERROR_UNMAP_FAILED",
     "unmapping of buffer object failed", "application",
     "a buffer object could not be unmapped (CUDA error 206)", _APP),
    (207, "cudaErrorArrayIsMapped", "CUDA_ERROR_ARRAY_IS_MAPPED", "array is mapped", "application",
     "an array that is mapped was destroyed (CUDA error 207)", _APP),
    (208, "cudaErrorAlreadyMapped", "CUDA_ERROR_ALREADY_MAPPED", "resource already mapped",
     "application", "the resource is already mapped (CUDA error 208)", _APP),
    (209, "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device", "config",
     "the program or library carries no kernel for this GPU's architecture (CUDA error 209): the "
     "image or wheel was built for other GPUs (too old a build for a new GPU, or a build that dropped "
     "an old GPU's compute capability)",
     "on {node}: `nvidia-smi --query-gpu=name,compute_cap --format=csv`; run an image or wheel built "
     "for that compute capability (e.g. a newer PyTorch/CUDA for Blackwell), or rebuild with "
     "`TORCH_CUDA_ARCH_LIST`/`-gencode` including it; or run the pod on nodes whose GPU the build "
     "has (`kubectl get nodes -L nvidia.com/gpu.product -L nvidia.com/gpu.compute.major`, GPU "
     "Feature Discovery's labels, in a nodeSelector or nodeAffinity)"),
    (210, "cudaErrorAlreadyAcquired", "CUDA_ERROR_ALREADY_ACQUIRED", "resource already acquired",
     "application", "the resource was already acquired (CUDA error 210)", _APP),
    (211, "cudaErrorNotMapped", "CUDA_ERROR_NOT_MAPPED", "resource not mapped", "application",
     "the resource is not mapped (CUDA error 211)", _APP),
    (212, "cudaErrorNotMappedAsArray", "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "resource not mapped as array",
     "application", "a mapped resource is not available as an array (CUDA error 212)", _APP),
    (213, "cudaErrorNotMappedAsPointer", "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
     "resource not mapped as pointer", "application",
     "a mapped resource is not available as a pointer (CUDA error 213)", _APP),
    (214, "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE",
     "uncorrectable ECC error encountered", "memory",
     "a GPU hit an uncorrectable ECC memory error (CUDA error 214); work on it fails until the GPU "
     "is reset, and a repeat means failing memory",
     "on {node}: `nvidia-smi -q -d ECC` (volatile/aggregate uncorrectable counts) and "
     "`nvidia-smi -q -d ROW_REMAPPER` (pending remaps need a reset); " + _HARDWARE),
    (215, "cudaErrorUnsupportedLimit", "CUDA_ERROR_UNSUPPORTED_LIMIT",
     "limit is not supported on this architecture", "application",
     "a cudaLimit is not supported by this GPU (CUDA error 215)", _APP),
    (216, "cudaErrorDeviceAlreadyInUse", "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
     "exclusive-thread device already in use by a different thread", "config",
     "the GPU is in an exclusive compute mode and another thread or process holds it (CUDA error 216)",
     "on {node}: `nvidia-smi --query-gpu=index,compute_mode --format=csv`; `sudo nvidia-smi -i GPU -c "
     "DEFAULT`, or stop the other user of the GPU"),
    (217, "cudaErrorPeerAccessUnsupported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices", "hardware",
     "the GPUs cannot reach each other peer-to-peer (CUDA error 217): PCIe ACS or an IOMMU in "
     "translated mode blocks P2P between them, the VM did not pass the topology through, or the "
     "GPUs do not support P2P (GeForce)",
     "on {node}: `nvidia-smi topo -p2p r` (every pair should read OK) and `nvidia-smi topo -m`; "
     "`sudo lspci -vvv | grep ACSCtl` (SrcValid+ on the switches' ports blocks P2P: disable ACS in "
     "the BIOS or with setpci); boot with `iommu=pt`; see NCCL's troubleshooting guide on ACS"),
    (218, "cudaErrorInvalidPtx", "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed", "driver",
     "the driver's JIT compiler could not compile the program's PTX for this GPU (CUDA error 218): "
     "the PTX is newer than the driver or invalid",
     _DRIVER_UPGRADE + "; or use a build with native code (SASS) for the GPU"),
    (219, "cudaErrorInvalidGraphicsContext", "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
     "invalid OpenGL or DirectX context", "application",
     "an OpenGL/DirectX interop call found no valid graphics context (CUDA error 219)", _APP),
    (220, "cudaErrorNvlinkUncorrectable", "CUDA_ERROR_NVLINK_UNCORRECTABLE",
     "uncorrectable NVLink error detected during the execution", "nvlink",
     "an uncorrectable NVLink error hit the GPU's links during the work (CUDA error 220)",
     "on {node}: `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e` (error counters), `dmesg | grep -i "
     "xid` (Xid 74); " + _HARDWARE),
    (221, "cudaErrorJitCompilerNotFound", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
     "PTX JIT compiler library not found", "toolkit",
     "the driver's PTX JIT compiler (libnvidia-ptxjitcompiler.so) is not in the container (CUDA error "
     "221): the NVIDIA runtime did not inject the compute libraries",
     "give the pod the compute capability (NVIDIA_DRIVER_CAPABILITIES=compute,utility or all) and run "
     "it under the NVIDIA runtime; on {node}: `ls /usr/lib/x86_64-linux-gnu/libnvidia-ptxjitcompiler*`"),
    (222, "cudaErrorUnsupportedPtxVersion", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain.", "driver",
     "the program's PTX was built by a CUDA toolkit newer than the node's driver can compile (CUDA "
     "error 222)", _DRIVER_UPGRADE + "; or use a build with native code (SASS) for the GPU"),
    (223, "cudaErrorJitCompilationDisabled", "CUDA_ERROR_JIT_COMPILATION_DISABLED",
     "PTX JIT compilation was disabled", "config",
     "the program needs PTX JIT compilation but it is disabled (CUDA error 223), e.g. by "
     "CUDA_DISABLE_PTX_JIT=1",
     "unset CUDA_DISABLE_PTX_JIT in the pod, or use a build with native code for the GPU"),
    (224, "cudaErrorUnsupportedExecAffinity", "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
     "the provided execution affinity is not supported", "application",
     "the requested execution affinity (SM count) is not supported by the GPU (CUDA error 224)", _APP),
    (225, "cudaErrorUnsupportedDevSideSync", "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
     "the provided PTX contains unsupported call to cudaDeviceSynchronize", "application",
     "device-side cudaDeviceSynchronize, unsupported from compute capability 9.0 (CUDA error 225)", _APP),
    (226, "cudaErrorContained", "CUDA_ERROR_CONTAINED",
     "Invalid access of peer GPU memory over nvlink or a hardware error", "hardware",
     "the GPU contained an error (CUDA error 226): an invalid access of peer GPU memory over NVLink "
     "or a hardware error; the process cannot use CUDA any more",
     "restart the pod; on {node}: `dmesg | grep -i xid` (a hardware Xid next to it means a GPU fault: "
     + _HARDWARE + ")"),
    (300, "cudaErrorInvalidSource", "CUDA_ERROR_INVALID_SOURCE", "", "application",
     "the device kernel source is invalid (CUDA error 300; printed as 'device kernel image is "
     "invalid')", _APP),
    (301, "cudaErrorFileNotFound", "CUDA_ERROR_FILE_NOT_FOUND", "file not found", "application",
     "a file a CUDA call was to load (a cubin, a module) was not found (CUDA error 301)", _APP),
    (302, "cudaErrorSharedObjectSymbolNotFound", "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND",
     "shared object symbol not found", "application",
     "a link to a shared object failed to resolve (CUDA error 302)", _APP),
    (303, "cudaErrorSharedObjectInitFailed", "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
     "shared object initialization failed", "driver",
     "a shared object failed to initialise (CUDA error 303): from cuInit, the driver library could "
     "not start, mostly a libcuda that does not belong to the node's kernel module or a container "
     "without the GPU devices",
     "in the pod on {node}: `nvidia-smi` and `ls -l /dev/nvidia*`; run it under the NVIDIA runtime "
     "and keep libcuda out of the image (the runtime injects the node's); on the node `nvidia-smi` and "
     "`dmesg | grep -i nvrm`"),
    (304, "cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM",
     "OS call failed or operation not supported on this OS", "runtime",
     "a system call inside CUDA failed (CUDA error 304): in containers mostly CUDA IPC or shared memory "
     "between processes that do not share an IPC namespace or /dev/shm",
     "run the cooperating processes in one pod with a memory-backed /dev/shm (`emptyDir: {{medium: "
     "Memory}}`) and a shared IPC namespace (`hostIPC` only if needed); check seccomp/AppArmor denials "
     "in `dmesg` on {node}"),
    (400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle",
     "application", "a stream, event or other handle passed to CUDA is invalid (CUDA error 400)", _APP),
    (401, "cudaErrorIllegalState", "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state", "application",
     "a resource is not in a state for the requested operation (CUDA error 401)", _APP),
    (402, "cudaErrorLossyQuery", "CUDA_ERROR_LOSSY_QUERY",
     "attempted introspection would be semantically lossy", "application",
     "an object was queried with an API too old to describe it (CUDA error 402)", _APP),
    (500, "cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND", "named symbol not found", "application",
     "a named symbol (kernel, variable, driver function) was not found (CUDA error 500)", _APP),
    (600, "cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "device not ready", "application",
     "asynchronous work is not finished yet (CUDA error 600: a status, not a failure)",
     "nothing to fix unless the program treats it as an error; " + _APP),
    (700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered", "application",
     "a kernel read or wrote an invalid GPU memory address (CUDA error 700)" + _RELAUNCH,
     _APP + "; an Xid 13/31/43 for the same pid in `dmesg` is the same fault"),
    (701, "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch", "application",
     "a kernel launch needs more registers or threads than the GPU has per block (CUDA error 701)", _APP),
    (702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT",
     "the launch timed out and was terminated", "config",
     "a kernel ran longer than the display watchdog allows (CUDA error 702): the GPU drives a display "
     "or has the kernel execution timeout on",
     "on {node}: `nvidia-smi -q | grep -i -e 'display mode' -e timeout`; use a GPU without a display "
     "(stop the X server on it) or split the kernel into shorter launches"),
    (703, "cudaErrorLaunchIncompatibleTexturing", "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
     "launch uses incompatible texturing mode", "application",
     "a kernel launch uses an incompatible texturing mode (CUDA error 703)", _APP),
    (704, "cudaErrorPeerAccessAlreadyEnabled", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled", "application",
     "peer access was enabled twice (CUDA error 704; harmless)", _APP),
    (705, "cudaErrorPeerAccessNotEnabled", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
     "peer access has not been enabled", "application",
     "peer access is disabled that was never enabled (CUDA error 705)", _APP),
    (708, "cudaErrorSetOnActiveProcess", "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
     "cannot set while device is active in this process", "application",
     "device flags were set after the device became active (CUDA error 708)", _APP),
    (709, "cudaErrorContextIsDestroyed", "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed",
     "application", "the current context was destroyed (CUDA error 709)", _APP),
    (710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "device-side assert triggered", "application",
     "an assert in GPU code failed (CUDA error 710): e.g. an index out of range in PyTorch" + _RELAUNCH,
     _APP + "; PyTorch: `TORCH_USE_CUDA_DSA`/running on CPU shows the failing assert"),
    (711, "cudaErrorTooManyPeers", "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted",
     "config",
     "a GPU ran out of peer mappings (CUDA error 711): without NVSwitch each GPU supports at most 8 "
     "peer connections, system-wide, so one process enabling peer access among more than 8 GPUs (NCCL "
     "or nccl-tests driving all GPUs of a 10- or 16-GPU node from one process, TensorFlow's "
     "MirroredStrategy, PyTorch DataParallel, llama.cpp), or another library (a CUDA-aware MPI) "
     "holding peer mappings too, exhausts them; it is not a fault of the node or the program's code",
     "run at most 8 GPUs per process: one process per GPU (`torchrun --nproc_per_node=N`, `mpirun -np "
     "N` with nccl-tests' `-g 1`), or give each process <= 8 GPUs (the pod's `nvidia.com/gpu` limit, "
     "`CUDA_VISIBLE_DEVICES`); where one process must drive them all, keep NCCL's own mappings off "
     "(`NCCL_P2P_DISABLE=1`, or `NCCL_P2P_LEVEL=PIX` to peer only GPUs under one PCIe switch); "
     "frameworks that enable peer access themselves (TensorFlow) need the GPU count lowered"),
    (712, "cudaErrorHostMemoryAlreadyRegistered", "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped", "application",
     "the host memory range is already registered (CUDA error 712)", _APP),
    (713, "cudaErrorHostMemoryNotRegistered", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region", "application",
     "the pointer was never registered with cudaHostRegister (CUDA error 713)", _APP),
    (714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error",
     "application",
     "a kernel corrupted or overflowed its call stack (CUDA error 714)" + _RELAUNCH,
     "raise the stack size (cudaLimitStackSize) or fix the recursion; " + _APP),
    (715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered", "application",
     "a kernel executed an illegal instruction (CUDA error 715)" + _RELAUNCH, _APP),
    (716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address",
     "application", "a kernel accessed memory at a misaligned address (CUDA error 716)" + _RELAUNCH,
     _APP),
    (717, "cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "operation not supported on global/shared address space", "application",
     "an instruction used an address in the wrong address space (CUDA error 717)" + _RELAUNCH, _APP),
    (718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "invalid program counter", "application",
     "a kernel jumped to an invalid program counter (CUDA error 718)" + _RELAUNCH, _APP),
    (719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure",
     "application",
     "a kernel faulted while running (CUDA error 719): usually the program's invalid memory access; on "
     "a node where every program fails so, a GPU fault (Xid in `dmesg`)" + _RELAUNCH,
     _APP + "; if `dmesg | grep -i xid` on {node} shows Xid 79/48/63/94/95 at the same time: "
     + _HARDWARE),
    (720, "cudaErrorCooperativeLaunchTooLarge", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch", "application",
     "a cooperative launch asks for more blocks than can be resident at once (CUDA error 720)", _APP),
    (721, "cudaErrorTensorMemoryLeak", "CUDA_ERROR_TENSOR_MEMORY_LEAK", "tensor memory not completely freed",
     "application", "a kernel exited without freeing its tensor memory (CUDA error 721)", _APP),
    (800, "cudaErrorNotPermitted", "CUDA_ERROR_NOT_PERMITTED", "operation not permitted", "config",
     "the operation is not permitted in this configuration (CUDA error 800): e.g. under MPS, on a MIG "
     "instance, or from a stream callback",
     "check whether the GPU is shared (MPS, MIG: `nvidia-smi -L` in the pod) and whether the program "
     "supports that; otherwise " + _APP),
    (801, "cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported", "config",
     "the GPU, its mode (MIG, vGPU, MPS) or the OS does not support the operation (CUDA error 801)",
     "run on a GPU/mode that supports the feature (full GPU instead of a MIG slice or vGPU), or "
     "disable the feature in the program"),
    (802, "cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized", "fabric",
     "CUDA cannot start (error 802): the GPUs are joined by NVSwitches and NVIDIA Fabric Manager "
     "is not running on the node, or its version differs from the driver's; nvidia-smi still lists "
     "the GPUs",
     "on {node}: `systemctl status nvidia-fabricmanager` and `journalctl -u nvidia-fabricmanager`; "
     "install nvidia-fabricmanager of exactly the driver's version and start it (`sudo systemctl "
     "enable --now nvidia-fabricmanager`; `gpuctl bootstrap --phase host -i INVENTORY --limit {node}` "
     "does both), then `gpuctl preflight --limit {node}`"),
    (803, "cudaErrorSystemDriverMismatch", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "system has unsupported display driver / cuda driver combination", "driver",
     "the user-space CUDA driver (libcuda) and the loaded kernel module are different versions (CUDA "
     "error 803): the driver was upgraded without a reboot, or the image brings its own libcuda "
     "(forward-compatibility libraries) that does not fit the node's module",
     _REBOOT + "; if the node is consistent, remove libcuda/compat libraries from the image"),
    (804, "cudaErrorCompatNotSupportedOnDevice", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "forward compatibility was attempted on non supported HW", "driver",
     "CUDA error 804: the container brings CUDA forward-compatibility libraries for a CUDA newer "
     "than the node's driver supports, and this GPU cannot use them (forward compatibility works "
     "only on data-center GPUs): the node's driver is too old for the image",
     "upgrade the driver on {node} to one whose CUDA version (`nvidia-smi` header) is at least "
     "the image's (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), or use an image "
     "built for the driver's CUDA; if the driver was just upgraded, reboot {node}"),
    (805, "cudaErrorMpsConnectionFailed", "CUDA_ERROR_MPS_CONNECTION_FAILED",
     "MPS client failed to connect to the MPS control daemon or the MPS server", "config",
     "the program could not reach the MPS control daemon or server (CUDA error 805): MPS is expected "
     "(CUDA_MPS_PIPE_DIRECTORY set) but no daemon runs or its pipe directory is not mounted", _MPS),
    (806, "cudaErrorMpsRpcFailure", "CUDA_ERROR_MPS_RPC_FAILURE",
     "the remote procedural call between the MPS server and the MPS client failed", "config",
     "a call between the MPS client and server failed (CUDA error 806): the MPS server died or "
     "restarted", _MPS),
    (807, "cudaErrorMpsServerNotReady", "CUDA_ERROR_MPS_SERVER_NOT_READY",
     "MPS server is not ready to accept new MPS client requests", "config",
     "the MPS server is still starting or recovering from a fault (CUDA error 807)",
     "retry shortly; if it persists, " + _MPS),
    (808, "cudaErrorMpsMaxClientsReached", "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
     "the hardware resources required to create MPS client have been exhausted", "config",
     "the GPU's MPS client limit is reached (CUDA error 808)", _MPS),
    (809, "cudaErrorMpsMaxConnectionsReached", "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
     "the hardware resources required to support device connections have been exhausted", "config",
     "the MPS server's device connection limit is reached (CUDA error 809)", _MPS),
    (810, "cudaErrorMpsClientTerminated", "CUDA_ERROR_MPS_CLIENT_TERMINATED",
     "the MPS client has been terminated by the server", "config",
     "the MPS server terminated this client (CUDA error 810): a fault in this or another client, or "
     "the daemon was told to terminate it", _MPS),
    (811, "cudaErrorCdpNotSupported", "CUDA_ERROR_CDP_NOT_SUPPORTED",
     "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, does not support it",
     "config", "the program uses CUDA Dynamic Parallelism, which MPS does not support (CUDA error 811)",
     "run the program on a GPU without MPS sharing, or build it without dynamic parallelism"),
    (812, "cudaErrorCdpVersionMismatch", "CUDA_ERROR_CDP_VERSION_MISMATCH",
     "unsupported interaction between different versions of CUDA Dynamic Parallelism", "application",
     "code built with different CUDA Dynamic Parallelism versions was mixed (CUDA error 812)", _APP),
    (900, "cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing", "application",
     "an operation not allowed during CUDA graph capture ran on a capturing stream (CUDA error 900)",
     _APP),
    (901, "cudaErrorStreamCaptureInvalidated", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture", "application",
     "a CUDA graph capture was invalidated by an earlier error (CUDA error 901)", _APP),
    (902, "cudaErrorStreamCaptureMerge", "CUDA_ERROR_STREAM_CAPTURE_MERGE",
     "operation would result in a merge of separate capture sequences", "application",
     "two separate graph captures would be merged (CUDA error 902)", _APP),
    (903, "cudaErrorStreamCaptureUnmatched", "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
     "capture was not ended in the same stream as it began", "application",
     "a graph capture ended on another stream than it began (CUDA error 903)", _APP),
    (904, "cudaErrorStreamCaptureUnjoined", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
     "capturing stream has unjoined work", "application",
     "a forked capture stream was not joined back (CUDA error 904)", _APP),
    (905, "cudaErrorStreamCaptureIsolation", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
     "dependency created on uncaptured work in another stream", "application",
     "a capture depends on work outside it (CUDA error 905)", _APP),
    (906, "cudaErrorStreamCaptureImplicit", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream", "application",
     "the legacy default stream would depend on a capturing stream (CUDA error 906)", _APP),
    (907, "cudaErrorCapturedEvent", "CUDA_ERROR_CAPTURED_EVENT",
     "operation not permitted on an event last recorded in a capturing stream", "application",
     "an event recorded during capture was used outside it (CUDA error 907)", _APP),
    (908, "cudaErrorStreamCaptureWrongThread", "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread", "application",
     "a thread-local graph capture was ended from another thread (CUDA error 908)", _APP),
    (909, "cudaErrorTimeout", "CUDA_ERROR_TIMEOUT", "wait operation timed out", "application",
     "a CUDA wait operation timed out (CUDA error 909)", _APP),
    (910, "cudaErrorGraphExecUpdateFailure", "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
     "the graph update was not performed because it included changes which violated constraints "
     "specific to instantiated graph update", "application",
     "an instantiated CUDA graph could not be updated (CUDA error 910)", _APP),
    (911, "cudaErrorExternalDevice", "CUDA_ERROR_EXTERNAL_DEVICE",
     "an async error has occured in external entity outside of CUDA", "hardware",
     "a device outside the GPU (a NIC or another accelerator sharing memory with it) signalled an "
     "error (CUDA error 911)" + _RELAUNCH,
     "check the external device (the NIC for GPUDirect RDMA: `ibstat`, `dmesg` on {node}); restart "
     "the pod"),
    (912, "cudaErrorInvalidClusterSize", "CUDA_ERROR_INVALID_CLUSTER_SIZE",
     "a kernel launch error has occurred due to cluster misconfiguration", "application",
     "a kernel launch uses an invalid thread block cluster size (CUDA error 912)", _APP),
    (913, "cudaErrorFunctionNotLoaded", "CUDA_ERROR_FUNCTION_NOT_LOADED",
     "the function handle is not loaded when calling an API that requires a loaded function",
     "application", "a function handle was used before it was loaded (CUDA error 913)", _APP),
    (914, "cudaErrorInvalidResourceType", "CUDA_ERROR_INVALID_RESOURCE_TYPE",
     "one or more resources passed in are not valid resource types for the operation", "application",
     "a green-context resource of the wrong type was passed (CUDA error 914)", _APP),
    (915, "cudaErrorInvalidResourceConfiguration", "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
     "one or more resources are insufficient or non-applicable for the operation", "application",
     "the green-context resources are insufficient for the operation (CUDA error 915)", _APP),
    (916, "", "CUDA_ERROR_KEY_ROTATION", "an error happened during the key rotation sequence", "config",
     "the confidential-computing key rotation between the CPU and the GPU failed (CUDA error 916)",
     "on {node}: check the GPU's confidential computing mode (`nvidia-smi conf-compute -q`) and the "
     "driver log (`dmesg | grep -i nvrm`); restart the pod, reset the GPU if it repeats"),
    (917, "cudaErrorStreamDetached", "CUDA_ERROR_STREAM_DETACHED", "", "application",
     "the stream's green context was destroyed, so the stream is detached (CUDA error 917)", _APP),
    (918, "cudaErrorGraphRecaptureFailure", "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE", "", "application",
     "a CUDA graph recapture failed and was terminated (CUDA error 918)", _APP),
    (999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "unknown error", "driver",
     "CUDA failed for an unknown internal reason (CUDA error 999): on a node usually the driver or "
     "GPU state, e.g. a GPU lost after an Xid, /dev/nvidia-uvm missing in the container, a driver "
     "upgraded without a reboot, or the container's device access revoked",
     "on {node}: `dmesg | grep -i -e xid -e nvrm` (a GPU fault: " + _HARDWARE + "), `nvidia-smi`, "
     "and in the pod `ls -l /dev/nvidia*` (/dev/nvidia-uvm present; `sudo nvidia-modprobe -u -c=0` on "
     "the node creates it); reboot the node if the driver was just upgraded"),
    (10000, "cudaErrorApiFailureBase", "", "api failure base", "application",
     "a deprecated marker: errors above 10000 came from old runtimes' API failures (CUDA error 10000)",
     _APP),
)
# fmt: on

# Messages too short or too common to be recognised without a CUDA prefix before them.
_CONTEXT_ONLY = frozenset(
    message
    for *_, message, _layer, _cause, _fix in _ROWS
    if len(message) < 28
    and message
    not in {
        "invalid device ordinal",
        "device-side assert triggered",
        "unspecified launch failure",
        "a PTX JIT compilation failed",
        "invalid device function",
    }
)


# Texts the CUDA runtime's users print for these errors in their own words (the message is theirs,
# the code is CUDA's): PyTorch's (c10/cuda/CUDAFunctions.cpp, its allocator, torch.cuda's lazy
# init), and the wording of 46 before CUDA 11.
_EXTRA_TEXTS = {
    2: ("CUDA out of memory. Tried to allocate",),
    3: ("CUDA driver initialization failed, you might not have a CUDA gpu",),
    35: (
        "Found no NVIDIA driver on your system",
        "The NVIDIA driver on your system is too old (found version",
        # the dynamic loader's own words when no runtime injected the driver's library
        "libcuda.so.1: cannot open shared object file",
        "Could not load dynamic library 'libcuda.so.1'",
    ),
    46: ("all CUDA-capable devices are busy or unavailable",),
    100: ("No CUDA GPUs are available",),
    999: ("CUDA unknown error - this may be due to an incorrectly set up environment",),
}


# Entries whose cause another page of NVIDIA's documents states: 711's limit of 8 peers per GPU is
# cudaDeviceEnablePeerAccess's ("Each device can support a system-wide maximum of eight peer
# connections").
_SOURCES = {711: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html"}


def _entry(row: tuple[int, str, str, str, str, str, str]) -> Entry:
    number, runtime, driver, message, layer, cause, fix = row
    names = tuple(name for name in (runtime, driver) if name)
    texts = (message,) if message and message not in _CONTEXT_ONLY else ()
    return Entry(
        code=str(number),
        name=runtime or driver,
        cause=cause,
        fix=fix,
        layer=layer,
        aliases=(*names, *((message,) if message else ())),
        texts=(*texts, *_EXTRA_TEXTS.get(number, ())),
        source=_SOURCES.get(number, RUNTIME_DOC if runtime else DRIVER_DOC),
        transient=number in {46, 600, 807},
    )


_ENTRIES = tuple(_entry(row) for row in _ROWS)

# CUDA 800 from the calls that create, export or import memory for a fabric handle
# (CU_MEM_HANDLE_TYPE_FABRIC, multi-node NVLink) means no IMEX channel, not MPS or MIG: the driver
# API's cuMemCreate documents that such memory needs /dev/nvidia-caps-imex-channels/channelN.
_FABRIC_HANDLE = Entry(
    code="fabric-handle-not-permitted",
    name="fabric-handle memory without an IMEX channel",
    cause="{code} was refused (CUDA error 800, operation not permitted) for memory shared through "
    "the NVLink fabric (CU_MEM_HANDLE_TYPE_FABRIC, multi-node NVLink, as NCCL, NVSHMEM, MSCCL++ and "
    "DeepEP request it): the process has no IMEX channel: /dev/nvidia-caps-imex-channels/channelN "
    "is missing or not in the container, the IMEX daemon does not run, or the system has no "
    "multi-node NVLink domain at all (an HGX H100/B200 board rather than GB200 NVL72) although CUDA "
    "reports fabric handles supported",
    fix="on an NVL72/multi-node NVLink system: run the IMEX daemon and give the job a channel; on "
    "Kubernetes create a ComputeDomain (NVIDIA DRA driver) and claim its channel in the pod, "
    "elsewhere `nvidia-imex` on every node of the domain and `sudo mknod "
    "/dev/nvidia-caps-imex-channels/channel0 c <major of nvidia-caps-imex-channels in "
    "/proc/devices> 0` passed into the container; on a single-node HGX system make the program "
    "use POSIX file-descriptor handles instead of fabric handles (its option, e.g. NCCL_MNNVL_ENABLE=0)",
    layer="fabric",
    aliases=("cuMemCreate", "cuMemExportToShareableHandle", "cuMemImportFromShareableHandle"),
    source="https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__VA.html",
)


def _alternatives(messages: list[str]) -> str:
    """One regex alternative per message, longest first; white space matches any run of it."""
    return "|".join(
        re.escape(message).replace(r"\ ", r"\s+")
        for message in sorted(messages, key=lambda message: (-len(message), message))
    )


_MESSAGES = _alternatives([row[3] for row in _ROWS if row[3]])
# NCCL's `Cuda failure '<m>'` is the NCCL catalogue's finding (nccl.cuda-failure), except where the
# CUDA entry names a cause below the program (a driver, fabric, hardware or configuration fault, e.g.
# 711's peer limit): that entry says more, and NCCL's generic reader leaves these messages to it.
NODE_MESSAGES = _alternatives([row[3] for row in _ROWS if row[3] and row[4] != "application"])

# A CUDA API function's name as programs print it (`cudaGetDeviceCount`, `cuInit()`): the capital
# after the prefix is matched case-sensitively, so `curl` or `current` is not one.
_API = r"cu(?:da)?(?-i:[A-Z])\w*(?:\(\))?"

CATALOGUE = Catalogue(
    id="cuda",
    title="CUDA runtime and driver errors (cudaError_t, CUresult)",
    source=RUNTIME_DOC,
    version="CUDA 13.3 (driver_types.h enum cudaError, cuda.h enum cudaError_enum)",
    entries=(*_ENTRIES, _FABRIC_HANDLE),
    applies_to=("cuda-workload", "nccl-workload", "runtime", "operand", "plugin-log", "events"),
    readers=(
        # A fabric handle's memory refused: `GpuBuffer cuMemCreate failed: operation not permitted`,
        # `call='cuMemCreate(&handle, size, &fabric_prop_, 0)' Reason=operation not permitted`.
        r"(?P<code>cuMem(?-i:Create|ExportToShareableHandle|ImportFromShareableHandle))\b[^\n]{0,160}?"
        r"(?:operation not permitted|CUDA_ERROR_NOT_PERMITTED|error 800\b)",
        # cudaErrorSystemNotReady, CUDA_ERROR_NO_DEVICE (not a macro of the program's: no `(`).
        r"(?P<code>cudaError[A-Z]\w*)\b(?!\()",
        r"(?P<code>CUDA_ERROR_[A-Z_]+)\b(?!\()",
        # deviceQuery `cudaGetDeviceCount returned 100`, `cuInit failed with error 999`.
        rf"{_API} (?:returned|failed with(?: error)?(?: code)?)\s*:?\s*(?P<code>[1-9]\d{{0,4}})\b",
        # ollama's and others' `cuInit err: 802`.
        rf"{_API}\s+err(?:or)?\s*[:=]\s*(?P<code>[1-9]\d{{0,4}})\b",
        # `cuda driver library init failure: 802`.
        r"CUDA[\w ]{0,40}? init(?:ialization)? failure:\s*(?P<code>[1-9]\d{0,4})\b",
        # `CUDA error 803`, `CUDA error code 35`, `CUDA Error #2`, TensorRT's `CUDA initialization
        # failure with error 35`.
        r"CUDA[\w ]{0,40}? (?:error|failure with error|failed with error)(?: code)?\s*[:#=]?\s*"
        r"(?P<code>[1-9]\d{0,4})\b",
        # A message after what prints one: `CUDA error: <m>`, `failed to initialize CUDA: <m>`, vectorAdd
        # `(error code <m>)`, deviceQuery `-> <m>`, `cudaGetDeviceCount failed <m>`, `GPUassert: <m>`.
        r"(?:CUDA[^\n:]{0,80}?:\s*|"
        r"\(error code\s+|(?m:^)[ \t]*->[ \t]*|GPUassert:\s*|"
        rf"{_API}\s+(?:failed|error)\s*:?\s*)(?P<code>{_MESSAGES})(?!\w)",
        # NCCL `Cuda failure 711 'peer mapping resources exhausted'`, nccl-tests `Test CUDA failure
        # common.cu:1013 'unknown error'`.
        rf"Cuda failure(?: \d{{1,5}}| \S+:\d+)?\s*'(?P<code>{NODE_MESSAGES})'",
        # TensorFlow `failed call to cuInit: UNKNOWN ERROR (303)`, CUDA.jl `(code 719, ERROR_LAUNCH_FAILED)`.
        r"failed call to cu\w+: [A-Z_ ]{0,40}\((?P<code>[1-9]\d{0,4})\)",
        r"\(code (?P<code>[1-9]\d{0,4}), (?:CUDA_)?ERROR_[A-Z_]+\)",
        # PyTorch `Unexpected error from cudaGetDeviceCount(). ... Error 999: unknown error`.
        r"cudaGetDeviceCount\(\)[^\n]{0,160}?Error (?P<code>[1-9]\d{0,4}):",
    ),
    unknown=Entry(
        "?",
        "a CUDA error this catalogue does not list",
        "the program failed with CUDA error {code}, which CUDA 13.3 does not define (a newer toolkit's "
        "error, a number of a toolkit before CUDA 10.1, which numbered its errors differently, or a "
        "program's own code)",
        "look {code} up in the CUDA Runtime API's enum cudaError of the toolkit the program was built "
        "with; " + _APP,
        "application",
    ),
)
