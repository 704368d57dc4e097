"""gpuctl's defaults and version pins, one home each: everything else imports them from here.

Standard library only and no imports of gpuctl modules, so the CLI can read the defaults for its
`--help` without loading anything heavy. The driver branch, the container toolkit version and the
host preflight thresholds are Ansible role defaults (playbooks/roles/*/defaults/main.yml), read through
`gpuctl.package_data.role_default`, because the playbooks use them without gpuctl.
"""

from __future__ import annotations

# The taint that reserves GPU nodes for GPU work (`gpuctl taint-gpu-nodes`, bootstrap, the demo).
GPU_RESOURCE = "nvidia.com/gpu"
GPU_TAINT_KEY = GPU_RESOURCE
GPU_TAINT_VALUE = "present"
GPU_TAINT_EFFECT = "NoSchedule"
GPU_TAINT = f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}"

# gpuctl's own namespace: verification pods, the RBAC ServiceAccount.
GPUCTL_NAMESPACE = "gpuctl-system"
# Where the static device plugin goes (NVIDIA's static manifest uses kube-system too).
DEVICE_PLUGIN_NAMESPACE = "kube-system"
RUNTIME_CLASS = "nvidia"

# The verification pods' image: nvidia-smi itself is injected by the NVIDIA container runtime.
VERIFY_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"

# NVIDIA's k8s-device-plugin, rendered by `gpuctl render` and applied by bootstrap. The same image
# carries GPU feature discovery (gpu-feature-discovery) and the MPS control daemon.
DEVICE_PLUGIN_VERSION = "v0.20.0"
DEVICE_PLUGIN_IMAGE = f"nvcr.io/nvidia/k8s-device-plugin:{DEVICE_PLUGIN_VERSION}"

# NVIDIA's GPU Operator chart (`bootstrap --stack operator`, `render --stack operator`).
OPERATOR_CHART = "nvidia/gpu-operator"
OPERATOR_CHART_REPO = "https://helm.ngc.nvidia.com/nvidia"
OPERATOR_CHART_VERSION = "v26.7.0"
OPERATOR_RELEASE = "gpu-operator"
OPERATOR_NAMESPACE = "gpu-operator"

# The DRA driver for NVIDIA GPUs (`bootstrap --stack dra`, `render --stack dra`).
DRA_DRIVER_CHART = "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
DRA_DRIVER_CHART_VERSION = "0.4.1"
DRA_DRIVER_RELEASE = "dra-driver-nvidia-gpu"
DRA_DRIVER_NAMESPACE = "dra-driver-nvidia-gpu"
DRA_DEVICE_CLASS = "gpu.nvidia.com"

# Role defaults files and the keys that hold the host-side defaults (read, never copied).
DRIVER_ROLE = "nvidia_driver"
DRIVER_BRANCH_KEY = "gpuctl_driver_branch"
TOOLKIT_ROLE = "nvidia_container_toolkit"
TOOLKIT_VERSION_KEY = "gpuctl_toolkit_version"
PREFLIGHT_ROLE = "gpuctl_preflight"
MIN_FREE_MIB_KEY = "gpuctl_preflight_min_free_mib"

# Every verification pod of every run carries these labels (a run adds gpuctl.io/verify-run=<id>).
VERIFICATION_PODS_SELECTOR = "app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"
