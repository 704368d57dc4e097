"""The diagnosis table: failure signatures (regex) → cause → fix hint.

Pure data, in three tables (container runtime, GPU and driver, cluster). The message texts are
those printed by NVIDIA's container toolkit, k8s-device-plugin, nvidia-smi/NVML, the kernel
driver, containerd/runc, the kubelet and kube-scheduler; docs/diagnosis.md lists the table.
Hints may use `{node}` (the node name), `{namespace}`, `{image}` and the pattern's named groups;
a missing one reads as its name in capitals (`NODE`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Signature:
    """One known failure: where it shows up, how to recognise it, what it means, what to do.

    `source` is where gpuctl verify reads it; `also` lists other sources printing the same text.
    A `generic` signature is a fallback, used only when no specific one matches. A `transient`
    one may clear up by itself (waiting can help); the others will not. `operand_hint` is what to
    do besides `hint` when the image a line names is a GPU Operator operand's (diagnose/images.py):
    `{operand}` and `{field}` are the operand and its ClusterPolicy field.
    """

    id: str
    source: str  # runtime | nvidia-smi | plugin-log | kernel | scheduling | autoscaler | karpenter
    # | image-pull | events | node | operator-driver | cuda-workload | nccl-workload
    pattern: re.Pattern[str]
    cause: str
    hint: str
    category: str = ""
    also: tuple[str, ...] = ()
    generic: bool = False
    transient: bool = False
    operand_hint: str = ""

    def applies_to(self, source: str) -> bool:
        return source == self.source or source in self.also

    @property
    def host_layer(self) -> bool:
        """Caused by what `gpuctl bootstrap --phase host` installs on the host (driver, container
        toolkit, container runtime), so that phase fixes it. The GPU Operator's driver container
        is not the host layer: the Operator's own flags decide who installs the driver."""
        return self.category in HOST_LAYER_CATEGORIES and self.source != "operator-driver"

    @property
    def beyond_the_cluster(self) -> bool:
        """Nothing the cluster layer applies can clear it and it does not clear up by itself (the
        host layer's or the GPU's own fault): waiting for the node to get its GPUs cannot help."""
        return not self.transient and self.category in (*HOST_LAYER_CATEGORIES, *GPU_FAULT_CATEGORIES)


# The categories of the host layer: the driver, the container toolkit, the container runtime.
HOST_LAYER_CATEGORIES = ("driver", "toolkit", "runtime")
# The categories of a fault of the GPUs themselves or their fabric (an Xid or SXid the device plugin
# marks a GPU unhealthy for): the GPU stays unusable until it is reset or repaired.
GPU_FAULT_CATEGORIES = ("fabric", "hardware", "nvlink", "memory")


def sig(  # noqa: PLR0917 - one positional argument per column of the table
    id_: str,
    source: str,
    category: str,
    pattern: str,
    cause: str,
    hint: str,
    *,
    also: tuple[str, ...] = (),
    generic: bool = False,
    transient: bool = False,
    operand_hint: str = "",
) -> Signature:
    return Signature(
        id_, source, re.compile(pattern, re.IGNORECASE), cause, hint, category, also, generic, transient,
        operand_hint,
    )  # fmt: skip


TOOLKIT_FIX = (
    "on {node}: `sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default && "
    "sudo systemctl restart containerd` (or `gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), "
    "then `{plugin_restart}`"
)
# How TOOLKIT_FIX restarts the device plugin on {node} when the caller does not know its pod:
# gpuctl's own DaemonSet (a GPU Operator's plugin pod lives elsewhere: callers that read the
# pod pass `plugin_restart` naming it).
DEFAULT_PLUGIN_RESTART = (
    "kubectl -n kube-system delete pod -l name=nvidia-device-plugin-ds --field-selector spec.nodeName={node}"
)
DRIVER_FIX = (
    "on {node}: check `nvidia-smi` and `lsmod | grep nvidia`; install or load the driver "
    "(`gpuctl bootstrap --phase host -i INVENTORY --limit {node}`), then reboot the node"
)
REBOOT_FIX = "reboot {node} (`kubectl drain {node} --ignore-daemonsets` first) so the new kernel module loads"
HARDWARE_FIX = (
    "drain {node} (`kubectl drain {node} --ignore-daemonsets`), read `dmesg | grep -i -e xid -e NVRM` "
    "on it, reset the GPU (`nvidia-smi -r -i GPU`) or power-cycle the node; replace the GPU if it repeats"
)
