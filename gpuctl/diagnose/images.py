"""The image a pull error names, and whether it is one of the GPU Operator's operands.

An image pull line names its image in one of a few shapes (the kubelet's `Failed to pull image
"X"` and `Back-off pulling image "X"`, containerd's `failed to resolve reference "X"`, docker's
`manifest for X not found`); the image rows' causes and fixes use it as `{image}`. An operand's
image is set by the GPU Operator's ClusterPolicy (`spec.<operand>.repository/image/version`,
the Helm chart's values of the same names), so that is where a wrong or withdrawn one is fixed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Letters a registry, repository, tag or digest is spelt with: what is read is safe as a shell word.
_REFERENCE = r"[A-Za-z0-9][A-Za-z0-9._/:@-]*"
_NAMED = re.compile(
    rf'(?:\bimage(?: tag)?|\breference|\bPullImage)\s+\\?"(?P<quoted>{_REFERENCE})'
    rf"|\bmanifest for (?P<manifest>{_REFERENCE}) not found"
    rf"|\bpull access denied for (?P<denied>{_REFERENCE})"
    rf"|\bdocker://(?P<source>{_REFERENCE})"
)


def image_named(line: str) -> str:
    """The image `line` says it pulls ("" when it names none)."""
    match = _NAMED.search(line)
    if match is None:
        return ""
    return next(value for value in match.groups() if value).rstrip(".:,")


@dataclass(frozen=True)
class Operand:
    """A GPU Operator operand: its name in words and its ClusterPolicy field (`spec.<field>`)."""

    name: str
    field: str


# The operands' images, by their path under nvidia/ in nvcr.io or a mirror of it, as the GPU
# Operator's chart sets them: https://github.com/NVIDIA/gpu-operator/blob/main/deployments/
# gpu-operator/values.yaml. The validator runs the operator's own image since v25.10 (earlier
# cloud-native/gpu-operator-validator); GPU feature discovery runs the device plugin's image
# since v23.9 (earlier gpu-feature-discovery).
OPERANDS = {
    "driver": Operand("driver", "driver"),
    "cloud-native/k8s-driver-manager": Operand("driver manager", "driver.manager"),
    "k8s/container-toolkit": Operand("container toolkit", "toolkit"),
    "k8s-device-plugin": Operand("device plugin (and GPU feature discovery)", "devicePlugin"),
    "gpu-feature-discovery": Operand("GPU feature discovery", "gfd"),
    "k8s/dcgm-exporter": Operand("DCGM exporter", "dcgmExporter"),
    "cloud-native/dcgm": Operand("DCGM", "dcgm"),
    "cloud-native/k8s-mig-manager": Operand("MIG manager", "migManager"),
    "gpu-operator": Operand("validator (the operator's own image)", "validator"),
    "cloud-native/gpu-operator-validator": Operand("validator", "validator"),
    "cloud-native/vgpu-device-manager": Operand("vGPU device manager", "vgpuDeviceManager"),
    "cloud-native/k8s-kata-manager": Operand("Kata manager", "kataManager"),
    "cloud-native/k8s-cc-manager": Operand("confidential computing manager", "ccManager"),
    "cloud-native/nvidia-fs": Operand("GPUDirect Storage driver", "gds"),
    "cloud-native/gdrdrv": Operand("GDRCopy driver", "gdrcopy"),
    "kubevirt-gpu-device-plugin": Operand("sandbox device plugin", "sandboxDevicePlugin"),
    "cloud-native/nvidia-sandbox-device-plugin": Operand(
        "Kata sandbox device plugin", "kataSandboxDevicePlugin"
    ),
}


_UNDER_NVIDIA = re.compile(r"(?:^|/)nvidia/(?P<path>.+)$")


def operand_of(image: str) -> Operand | None:
    """The GPU Operator operand `image` is (any registry, tag or digest), None for any other."""
    repository = image.partition("@")[0]
    head, slash, last = repository.rpartition("/")
    found = _UNDER_NVIDIA.search(f"{head}{slash}{last.partition(':')[0]}")
    return OPERANDS.get(found.group("path")) if found else None
