"""GPU Operator rows: what the Operator's driver container prints when it cannot take the node.

Read from the log of a crash-looping `nvidia-driver-daemonset` pod (`bootstrap --stack operator`
diagnosing a node whose validator waits for the driver), and by `gpuctl explain`.
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
)  # fmt: skip
