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
        r"Could not unload NVIDIA driver kernel modules, driver is in use",
        "a driver is already installed and loaded on the host, and the GPU Operator's driver "
        "container (driver.enabled=true) cannot replace it",
        f"keep the host's driver: `{_OPERATOR_RERUN} --no-operator-driver` (driver.enabled=false); "
        "or remove the host driver from {node} and reboot it",
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
        r"Error parsing config file",
        "the MIG configuration (the MIG manager's ConfigMap) is not valid mig-parted YAML, e.g. "
        "`devices` must be `all` or a list of GPU indices",
        "fix the config (`nvidia-mig-parted assert -f CONFIG -c NAME` checks it), update the "
        "ConfigMap the ClusterPolicy's `migManager.config.name` names, then relabel {node} "
        "(`kubectl label node {node} nvidia.com/mig.config=NAME --overwrite`)",
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
