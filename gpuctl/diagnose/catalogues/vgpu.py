"""NVIDIA vGPU guest licensing: a virtual machine's vGPU (or a cloud's GRID-driver GPU) runs only
while the guest driver's licensing daemon, nvidia-gridd, holds a license from the NVIDIA License
System (a CLS or DLS instance, or a legacy license server).

Without a license the driver restricts the GPU after a grace period: nvidia-smi -q shows
`License Status : Unlicensed (Restricted)` and CUDA then refuses the device (`CUDA-capable
device(s) is/are busy or unavailable`, CUDA error 46) or runs it throttled. nvidia-gridd logs its
failures to syslog (`nvidia-gridd: Failed to acquire license from ...`). Under the GPU Operator the
driver container runs nvidia-gridd with the gridd.conf and client configuration token of the
ClusterPolicy's `driver.licensingConfig`.
"""

from __future__ import annotations

from gpuctl.diagnose.catalogue import Catalogue, Entry

_NLS = "https://docs.nvidia.com/license-system/latest/nvidia-license-system-user-guide/index.html"
_OPERATOR_VGPU = (
    "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/install-gpu-operator-vgpu.html"
)

_LICENSE = (
    "give the guest a license: on a host-managed driver copy the client configuration token from "
    "the license server to /etc/nvidia/ClientConfigToken/ and set `FeatureType=1` in "
    "/etc/nvidia/gridd.conf, then `sudo systemctl restart nvidia-gridd`; under the GPU Operator put "
    "gridd.conf and client_configuration_token.tok in a ConfigMap (or Secret) named by the "
    "ClusterPolicy's `driver.licensingConfig` (`nlsEnabled: true`) and restart the driver pod on "
    "{node}; `nvidia-smi -q | grep -A2 -i license` on {node} must show Licensed"
)

CATALOGUE = Catalogue(
    id="vgpu",
    title="NVIDIA vGPU guest licensing (nvidia-gridd)",
    source=_NLS,
    version="NVIDIA License System 3.x, vGPU guest drivers 13 to 19",
    entries=(
        Entry(
            "unlicensed",
            "vGPU not licensed",
            "the vGPU guest driver on {node} holds no license (nvidia-gridd got none: no client "
            "configuration token or gridd.conf, the license server unreachable, or no free "
            "license); once the grace period ends the driver restricts the GPU, and CUDA refuses it "
            "(`all CUDA-capable devices are busy or unavailable`) or runs it throttled",
            _LICENSE,
            "driver",
            aliases=("Unlicensed",),
            source=_NLS,
        ),
        Entry(
            "license-acquire-failed",
            "nvidia-gridd could not get a license",
            "nvidia-gridd on {node} could not register with or get a license from the license "
            "server: the server (port 443 for a CLS or DLS) is not reachable from the node, the "
            "client configuration token is missing, expired or from another server, the server has "
            "no free license of the feature type asked for, or the client's trusted store is "
            "corrupt; the GPU stays unlicensed",
            "on {node}: `journalctl -t nvidia-gridd` (or /var/log/syslog) for the step that failed; "
            "check the license server is reachable (`curl -v https://SERVER`), download a fresh "
            "client configuration token, then " + _LICENSE,
            "driver",
            texts=(
                "Failed to acquire license from",
                "Failed to register client",
                "Failed to update local trusted store",
                "License acquisition failed",
            ),
            source=_NLS,
        ),
    ),
    applies_to=("nvidia-smi", "host", "operator-driver", "operand"),
    readers=(
        # nvidia-smi -q's vGPU section: `License Status : Unlicensed (Restricted)`
        r"(?-i:License Status)\s*:\s*(?P<code>(?-i:Unlicensed))\b",
    ),
)
