"""GPU Operator rows: what the Operator's driver container prints when it cannot take the node
(read from the log of a crash-looping `nvidia-driver-daemonset` pod by `bootstrap --stack
operator`, and by `gpuctl explain`), its driver image, and its other operands (MIG manager, DCGM
exporter).
"""

from __future__ import annotations

from gpuctl.diagnose.signatures import sig

_OPERATOR_RERUN = "gpuctl bootstrap --phase cluster --stack operator"

OPERATOR = (
    sig(
        "operator.driver-preinstalled", "operator-driver", "driver",
        # k8s-driver-manager (uninstall_driver) says so itself, in its old and new wording.
        r"Could not unload NVIDIA driver kernel modules, driver is in use|"
        r"NVIDIA GPU driver is already pre-installed on the node|driver is pre-installed on host",
        "the NVIDIA modules loaded on {node} cannot be unloaded for the GPU Operator's driver "
        "container (driver.enabled=true) to install its own: a driver installed on the host is "
        "loaded, or (`driver is in use` on a node without a host driver) GPU pods or host GPU "
        "clients still hold the modules of the previous driver container, as when the driver pod "
        "restarts outside the Operator's upgrade controller while workloads run",
        "tell them apart on {node}: a host driver shows in `dpkg -l | grep nvidia-driver` (or `rpm "
        f"-qa | grep nvidia-driver`): keep it, `{_OPERATOR_RERUN} --no-operator-driver` "
        "(driver.enabled=false), or remove it and reboot; otherwise free the GPUs: `kubectl drain "
        "{node} --ignore-daemonsets --delete-emptydir-data` (or let the ClusterPolicy's "
        "`driver.upgradePolicy` drain and delete GPU pods), stop what `sudo lsof /dev/nvidia*` "
        "lists, and delete the driver pod so it starts again; reboot {node} if the modules stay busy",
    ),
    sig(
        "operator.kernel-headers", "operator-driver", "driver",
        r"Could not resolve Linux kernel version|"
        r"Unable to (?:locate|find|install) (?:package )?(?:the )?(?:Linux )?kernel[- ](?:headers|devel)|"
        r"Unable to locate package linux-headers-",
        "the GPU Operator's driver container cannot get the kernel headers of {node}'s running "
        "kernel to build the driver (no package for that kernel in its repositories)",
        "install the driver on the host instead: `gpuctl bootstrap --phase host -i INVENTORY --limit "
        f"{{node}}` then `{_OPERATOR_RERUN} --no-operator-driver`; or run a kernel the driver image supports",
    ),
    sig(
        "operator.driver-image-missing", "image-pull", "driver",
        r"nvidia/driver:(?P<tag>[\w.-]+)\"?:? not found",
        "the GPU Operator asks for driver image tag {tag}, which NVIDIA does not publish: driver "
        "images exist only for the supported OS releases (the tag ends in the node's OS, e.g. "
        "-ubuntu22.04), so a node on another OS (or a precompiled tag for an unpublished kernel) "
        "has no image",
        "run a supported OS on {node}, or install the driver on the host: `gpuctl bootstrap --phase "
        f"host -i INVENTORY --limit {{node}}` then `{_OPERATOR_RERUN} --no-operator-driver`",
        also=("operator-driver", "events"),
    ),
    # --- operands ---------------------------------------------------------------------------------
    sig(
        "mig.reset-unsupported", "operand", "mig",
        r"Resetting GPU \S+ is not supported",
        "the MIG manager changed the GPU's MIG mode, which takes effect at a GPU reset, and the GPU "
        "cannot be reset here (a cloud VM's passthrough GPU, or a process still holds it): the "
        "change stays pending",
        "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first) to apply the pending MIG "
        "mode, or let the MIG manager reboot it (GPU Operator `migManager.env` WITH_REBOOT=true), "
        "then set `nvidia.com/mig.config` again",
    ),
    sig(
        "mig.config-invalid", "operand", "mig",
        # mig-parted's wording; the device plugin's and gpu-feature-discovery's own config errors
        # wrap it in "unable to parse config file" or name their flags (kubelet.plugin-config-invalid)
        r"(?<!unable to parse config file: )Error parsing config file"
        r"(?![^\n]*(?:PluginCommandLineFlags|\bflags\.(?:plugin|gfd)\b|unknown version))",
        "the MIG configuration (the MIG manager's ConfigMap) is not valid mig-parted YAML, e.g. "
        "`devices` must be `all` or a list of GPU indices",
        "fix the config (`nvidia-mig-parted assert -f CONFIG -c NAME` checks it), update the "
        "ConfigMap the ClusterPolicy's `migManager.config.name` names, then relabel {node} "
        "(`kubectl label node {node} nvidia.com/mig.config=NAME --overwrite`)",
    ),
    sig(
        "mig.config-not-present", "operand", "mig",
        # The first line is the MIG manager's reconfigure script, after `nvidia-mig-parted assert
        # --valid-config` failed (the Go reconfigure of mig-parted v0.13 on says `failed to validate
        # MIG configuration`); the last is mig-parted's own.
        r"Unable to validate the selected MIG configuration|failed to validate MIG configuration|"
        r"selected mig-config not present",
        "the MIG configuration that {node}'s `nvidia.com/mig.config` label names is not in the "
        "config file the MIG manager reads (a custom config added to a ConfigMap the ClusterPolicy "
        "does not name, a misspelt label, or YAML indentation that hides the entry), or that file "
        "does not parse; the MIG manager sets `nvidia.com/mig.config.state=failed`",
        "`kubectl get clusterpolicies -o yaml | grep -A2 migManager` names the ConfigMap in use "
        "(`config.name`, else default-mig-parted-config); check the label's value is a key under "
        "`mig-configs` there "
        "(`nvidia-mig-parted assert --valid-config -f CONFIG -c NAME`), fix the ConfigMap or the "
        "ClusterPolicy's `migManager.config.name`, then relabel {node} (`kubectl label node {node} "
        "nvidia.com/mig.config=NAME --overwrite`)",
    ),
    # --- the operator-validator's stages ----------------------------------------------------------
    sig(
        "validator.driver-not-found", "operand", "driver",
        r"failed to validate the driver, retrying|"
        r"chroot: failed to run command .nvidia-smi.: No such file or directory",
        "the operator-validator's driver-validation stage found no working driver on {node}: no "
        "`nvidia-smi` of a driver installed on the host (under the host's /), and none in the GPU "
        "Operator's driver container root (/run/nvidia/driver), so every GPU operand waits in Init",
        "on {node}: `nvidia-smi` (a host driver) or `kubectl -n {namespace} logs -l "
        "app=nvidia-driver-daemonset` (the Operator's driver); with a host driver, install it with "
        "its utilities (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`) and "
        f"`{_OPERATOR_RERUN} --no-operator-driver`; with the Operator's driver, fix what its driver "
        "container log says",
    ),
    sig(
        "cuda.forward-compat-unsupported", "cuda-workload", "driver",
        r"forward compatibility was attempted on non supported HW|cudaErrorCompatNotSupportedOnDevice|"
        r"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "CUDA error 804: the container brings CUDA forward-compatibility libraries for a CUDA newer "
        "than the node's driver supports, and this GPU cannot use them (forward compatibility works "
        "only on data-center GPUs): the node's driver is too old for the image (e.g. the GPU "
        "Operator's cuda-validator)",
        "upgrade the driver on {node} to one whose CUDA version (`nvidia-smi` header) is at least "
        "the image's (`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), or use an image "
        "built for the driver's CUDA; if the driver was just upgraded, reboot {node}",
        also=("operand",),
    ),
    sig(
        "dcgm.hostengine-init", "operand", "toolkit",
        r"Error starting nv-hostengine: DCGM initialization error|"
        r"Cannot initialize the hostengine: Error: Failed to initialize NVML",
        "DCGM's host engine in dcgm-exporter could not initialise NVML: its container sees no "
        "NVIDIA driver or GPU (not run with the NVIDIA runtime, driver not loaded on the node, or a "
        "device NVML does not support, such as a Jetson)",
        "run `nvidia-smi` on {node} and in the exporter pod (`kubectl -n {namespace} exec POD -- "
        "nvidia-smi`); if only the pod fails, give it the NVIDIA runtime (runtimeClassName nvidia, "
        "or nvidia as containerd's default: `gpuctl bootstrap --phase host -i INVENTORY --limit "
        "{node}`); on MIG GPUs run nv-hostengine separately and point the exporter at it (`-r HOST:5555`)",
    ),
)  # fmt: skip
