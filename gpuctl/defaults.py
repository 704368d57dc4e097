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

# The gate (`verify --gate`, bootstrap): a GPU node not proven at a level carries
# gpuctl.io/unproven=<level>:NoSchedule, and a node a gated verify proved carries the annotation
# gpuctl.io/proven-level ("<level> <RFC 3339 time>").
GATE_TAINT_KEY = "gpuctl.io/unproven"
GATE_TAINT_EFFECT = "NoSchedule"
PROVEN_ANNOTATION = "gpuctl.io/proven-level"
# `verify --gate-mode`: taint (gpuctl owns the gate taint, and publishes the condition) or
# condition (gpuctl only publishes the condition; a NodeReadinessRule's controller owns the taint).
GATE_MODES = ("taint", "condition")
# The node condition a gated verify publishes (gpuctl.core.node_condition), written by server-side
# apply to nodes/status under its own field manager.
GATE_CONDITION_TYPE = "GPUProven"
CONDITION_FIELD_MANAGER = "gpuctl-gpu-proven"
# The NodeReadinessRule API (kubernetes-sigs/node-readiness-controller) `render --readiness-rule`
# writes, and the taint key prefix its controller requires.
READINESS_RULE_API = "readiness.node.x-k8s.io/v1alpha1"
READINESS_TAINT_PREFIX = "readiness.k8s.io/"
DEFAULT_READINESS_TAINT = f"{READINESS_TAINT_PREFIX}gpu-proven"  # `render --readiness-taint`
# On DRA nodes (Kubernetes 1.37), a GPU that failed while the node's others passed is kept from
# claims by a DeviceTaintRule gpuctl owns (label gpuctl.io/gate=device), not by the node taint.
DEVICE_GATE_LABEL = "gpuctl.io/gate"
DEVICE_GATE_NODE_LABEL = "gpuctl.io/gated-node"


def is_gate_taint_key(key: str) -> bool:
    """A taint key of a gate (gpuctl's own, or a Node Readiness Controller rule's `--gate-taint`):
    the proof tolerates it, and a DaemonSet that does not is a warning, not a failure."""
    return key == GATE_TAINT_KEY or key.startswith(READINESS_TAINT_PREFIX)


# gpuctl's own namespace: verification pods, the RBAC ServiceAccount.
GPUCTL_NAMESPACE = "gpuctl-system"
# Where the static device plugin goes (NVIDIA's static manifest uses kube-system too).
DEVICE_PLUGIN_NAMESPACE = "kube-system"
RUNTIME_CLASS = "nvidia"

# The verification pods' image: nvidia-smi itself is injected by the NVIDIA container runtime.
VERIFY_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"

# The images of the deeper proof levels (`verify --level cuda|nccl`).
#
# CUDA_SAMPLE_IMAGE: NVIDIA's CUDA vectorAdd sample (built from NVIDIA/k8s-samples, published on NGC
# as nvcr.io/nvidia/k8s/cuda-sample). vectoradd-cuda12.5.0-ubuntu22.04 is the newest tag NVIDIA's own
# documentation uses: NVIDIA/cloud-native-docs gpu-operator/getting-started.rst (commit 52dcb7b8,
# 2026-08-21) and NVIDIA/k8s-device-plugin README.md (commit 1b826acc, 2026-08-19, without the
# -ubuntu22.04 suffix). k8s-samples' main branch builds from CUDA 13.0.0 (deployments/container/
# Dockerfile), but no public use of a newer tag was found, and NVIDIA/cuda-samples issue #384
# (2025-08) reports vectoradd-cuda12.5.0 as the newest on NGC. The sample sits at /cuda-samples/vectorAdd
# (gpuctl.cuda_workload.VECTOR_ADD). CUDA 12.5 minor-version compatibility runs it on any 12.x
# driver (R525 and later) on the GPUs it was compiled for.
CUDA_SAMPLE_IMAGE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"
# NCCL_TESTS_IMAGE: NVIDIA publishes no image holding only nccl-tests. CoreWeave's public images
# (github.com/coreweave/nccl-tests, ghcr.io/coreweave/nccl-tests) are the ones most often used in
# Kubernetes NCCL jobs; the tag below is listed in that repository's README.md (commit cb865533,
# 2026-05-27; NCCL 2.30.4, HPC-X 2.26, amd64 and arm64). CUDA 12.9.1 rather than 13.x: CUDA 13 needs
# driver R580 and dropped Volta. nccl-tests is built with MPI=1 at /opt/nccl-tests/build; a single
# process with `-g N` drives all of a node's GPUs without mpirun.
NCCL_TESTS_IMAGE = "ghcr.io/coreweave/nccl-tests:12.9.1-devel-ubuntu22.04-nccl2.30.4-1-2eedd7c"
NCCL_TESTS_ALL_REDUCE = "/opt/nccl-tests/build/all_reduce_perf"

# NVIDIA's k8s-device-plugin, rendered by `gpuctl render` and applied by bootstrap. The same image
# carries GPU feature discovery (gpu-feature-discovery) and the MPS control daemon. v0.20.1: the
# patch release of the release-0.20 branch (NVIDIA/k8s-device-plugin, release v0.20.1, listed as
# the latest release by the project's release mirror in 2026-10); v0.20.0 is release-0.20's
# versions.mk at commit 1b826acc (2026-08-19). The static manifest gpuctl follows is unchanged.
DEVICE_PLUGIN_VERSION = "v0.20.1"
DEVICE_PLUGIN_IMAGE = f"nvcr.io/nvidia/k8s-device-plugin:{DEVICE_PLUGIN_VERSION}"

# NVIDIA's GPU Operator chart (`bootstrap --stack operator`, `render --stack operator`). v26.7.2:
# the second patch release of NVIDIA/gpu-operator's release-26.7 branch (commit 10ee5b36 is
# v26.7.0's tree, 2026-08-20; the 26.7.1 packages were published 2026-10-09, the 26.7.2 packages
# 2026-10-21: Chainguard advisory CGA-wh6m-qw6p-wx3f, package gpu-operator-26.7, fixed in
# 26.7.2-r2). 26.7.2 deploys DRA driver v0.5.1 in GPUCluster mode. 26.7 brings the
# GPUCluster mode (nvidia.com/v1alpha1, cluster-scoped singleton `gpu-cluster`, chart value
# gpuCluster.deployCR): it cannot coexist with a ClusterPolicy (controllers/
# gpucluster_controller.go validatePrerequisites, clusterpolicy_controller.go Reconcile).
# DCGM pod labels: no change found. The ClusterPolicy's DaemonSets keep `app: nvidia-dcgm-exporter`
# and `app: nvidia-dcgm` from v25.10.0 through v26.3.0 to v26.7.0 (assets/state-dcgm-exporter/
# 0800_daemonset.yaml, assets/state-dcgm/0400_dcgm.yml; no app.kubernetes.io/* label in either);
# 26.7's GPUCluster mode adds nvidia-dcgm-exporter-dra and nvidia-dcgm-dra, `app` their names
# (manifests/state-dcgm-exporter/0700_daemonset.yaml, manifests/state-dcgm/0500_daemonset.yaml,
# v26.7.0), which gpuctl.kube.daemonsets recognises with the older names. What 26.7.0 changed is
# the exporter's metrics: DCGMExporterSpec.enablePodLabels/enablePodUID (commit 146f17f4, default
# off), workload pod labels on metrics, not on its own pods. v26.7.1 and v26.7.2 could not be
# compared: NVIDIA/gpu-operator's tags as read end at v26.7.0 (release-26.7 at commit 10ee5b36,
# main at a22dbf67, 2026-08-21, neither touching the DCGM templates after v26.7.0).
OPERATOR_CHART = "nvidia/gpu-operator"
OPERATOR_CHART_REPO = "https://helm.ngc.nvidia.com/nvidia"
OPERATOR_CHART_VERSION = "v26.7.2"
OPERATOR_RELEASE = "gpu-operator"
OPERATOR_NAMESPACE = "gpu-operator"

# The DRA driver for NVIDIA GPUs (`bootstrap --stack dra`, `render --stack dra`). 0.5.1: the patch
# release of v0.5.0 (kubernetes-sigs/dra-driver-nvidia-gpu issue #1365, "Release v0.5.0",
# 2026-08-18), the version GPU Operator v26.7.2 deploys; v26.7.0 deployed 0.5.0 (NVIDIA/
# gpu-operator release-26.7 deployments/gpu-operator/values.yaml draDriver.version, commit
# 10ee5b36). Its chart lives in kubernetes-sigs/dra-driver-nvidia-gpu (deployments/helm/
# dra-driver-nvidia-gpu), published under the OCI path below. On resource.k8s.io/v1 the chart's
# DeviceClass gpu.nvidia.com carries `extendedResourceName: nvidia.com/gpu`
# (templates/deviceclass-gpu.yaml), which Kubernetes 1.37 honours (DRAExtendedResource, GA).
# Since v0.5 the kubelet plugin reports GPU health as device taints on its ResourceSlice instead
# of removing the device (pull request #983, "Add taints on health events"): a critical Xid
# taints the device `gpu.nvidia.com/xid=<Xid>:NoSchedule` (pull request #1390 checks that shape;
# a non-fatal Xid gets effect None), and the taint stays until the plugin restarts (the sim
# follows: gpuctl.sim.runtime.dra.UNHEALTHY_TAINT_KEY).
DRA_DRIVER_CHART = "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
DRA_DRIVER_CHART_VERSION = "0.5.1"
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
