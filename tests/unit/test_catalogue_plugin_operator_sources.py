"""Entries added from a sweep of the device plugin's and the GPU Operator's source strings, for
families no public thread shows yet: each is found on its message as the component formats it
(the format string of the cited source with its `%v` filled in)."""

from __future__ import annotations

import pytest

from gpuctl.diagnose.scan import find_all

# (expected id, the message; source file in the entry's citation)
_MESSAGES = (
    # NVIDIA/k8s-device-plugin v0.20.0
    (
        "kubelet.config-not-found",
        "F1207 00:00:00.000000 1 main.go:93] specified config a100-mig does not exist",
    ),
    ("kubelet.config-not-found", "no config was set, no default was provided, and all fallbacks failed"),
    ("kubelet.config-not-found", "error selecting config: no configuration files available"),
    ("kubelet.mps-shm-mount-failed", "error mounting /mps/shm as tmpfs: operation not permitted"),
    (
        "kubelet.mps-daemon-setup-failed",
        "Failed to start MPS daemon: error setting compute mode EXCLUSIVE_PROCESS: exit status 2",
    ),
    ("kubelet.mps-daemon-setup-failed", "failed to start NVIDIA MPS command: exec: not found"),
    (
        "kubelet.mps-mig-unsupported",
        "invalid MPS configuration: sharing using MPS is not supported for MIG devices",
    ),
    (
        "kubelet.mig-profile-unreadable",
        "error building GPU device map: "
        "error getting MIG profile for MIG device at index '(0, 1)': Not Found",
    ),
    (
        "kubelet.mig-caps-missing",
        "missing MIG GPU instance capability path: /proc/driver/nvidia/capabilities/gpu0/mig/gi1/access",
    ),
    ("kubelet.plugin-config-invalid", "devices set as 'some' but the only valid string input is 'all'"),
    ("kubelet.plugin-config-invalid", "invalid IMEX config: channelIDs must be [] or [0]; found [1]"),
    ("kubelet.plugin-config-invalid", "unknown fallback strategy: sysfs"),
    (
        "kubelet.gfd-nodefeature-failed",
        'failed to create NodeFeature object "nvidia-features-for-node-1": the server could not find the '
        "requested resource",
    ),
    # kubernetes/kubernetes v1.34 pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go
    (
        "kubelet.kubelet-socket-denied",
        'E1207 00:00:00.000000 1 server.go:1] "Unprivileged containerized plugins might not work. Could not '
        'set selinux context on socket dir" err="operation not supported" '
        'path="/var/lib/kubelet/device-plugins/"',
    ),
    # NVIDIA/gpu-operator v26.7.0 (controllers, cmd/nvidia-validator)
    ("gpu-operator.node-os-labels-missing", "GPU node OS info is empty: release=, tag="),
    (
        "gpu-operator.node-os-labels-missing",
        "unable to retrieve OS name from label feature.node.kubernetes.io/system-os_release.ID",
    ),
    (
        "gpu-operator.os-versions-mixed",
        "different OS versions found for the same kernel version 5.15.0-1057-aws",
    ),
    ("gpu-operator.clusterpolicy-conflict", "the NRI Plugin cannot be enabled when CDI is disabled"),
    (
        "gpu-operator.clusterpolicy-conflict",
        "unable to resolve driver image path for pre-compiled drivers, driver.repository, driver.image and "
        "driver.version have to be specified in the ClusterPolicy",
    ),
    (
        "gpu-operator.driver-customization-unsupported",
        "repository configuration not supported for distribution sles",
    ),
    ("gpu-operator.host-driver-files-missing", "failed to locate driver libraries: not found"),
    ("gpu-operator.host-driver-files-missing", "failed to find an executable 'nvidia-smi' on the host"),
    (
        "gpu-operator.runtime-unrecognized",
        "Unable to get runtime info from the cluster, defaulting to containerd",
    ),
    ("gpu-operator.sriov-vfs-missing", "not all VFs have been created. 8/16 enabled across 2 GPU(s)"),
    # NVIDIA/gpu-driver-container (nvidia-driver scripts, rhel10/install.sh)
    ("gpu-operator.mofed-wait", "waiting for mellanox ofed and nvidia drivers to be installed"),
    ("gpu-operator.kernel-module-type-invalid", "invalid value for the KERNEL_MODULE_TYPE variable: closed"),
    ("gpu-operator.vgpu-manager-died", "ERROR: nvidia-vgpu-mgr daemon is no longer running. Exiting."),
    ("gpu-operator.kernel-version-string", "Error: Unable to clone unzboot source."),
)


@pytest.mark.parametrize(("expected", "message"), _MESSAGES, ids=[m for _, m in _MESSAGES])
def test_a_source_message_names_its_family(expected: str, message: str) -> None:
    found = find_all(message)
    assert found, message
    assert found[0].signature_id == expected, [d.signature_id for d in found]
    assert found[0].cause
    assert found[0].hint


def test_the_plugin_hint_lines_after_a_strategy_error_are_no_finding() -> None:
    # "If this is a GPU node, ..." follows the error line that names the cause: it adds none.
    assert find_all("If this is a GPU node, did you configure the NVIDIA Container Toolkit?") == []


_MORE = (
    # NVIDIA/gpu-operator v26.7.0 (assets/state-driver startup probe, api/ validation, internal/driver)
    ("gpu-operator.driver-startup-probe", "NVIDIA driver daemons are not ready; Current status: NotReady"),
    (
        "gpu-operator.clusterpolicy-conflict",
        "specifying image digest is not supported when precompiled is enabled",
    ),
    ("gpu-operator.clusterpolicy-conflict", 'default NVIDIADriver "default" cannot use nodeSelector'),
    (
        "gpu-operator.nvidiadriver-conflicting-selector",
        "Conflicting nodes found with given node selector label",
    ),
    ("gpu-operator.host-driver-files-missing", "failed to stat 'nvidia-smi' on the host: permission denied"),
    # NVIDIA/k8s-driver-manager v0.12.0
    ("gpu-operator.driver-manager-gpu-pods-remain", "Failed to drain node of GPU pods"),
    (
        "gpu-operator.driver-rootfs-busy",
        "failed to unmount stale NVIDIA driver rootfs: device or resource busy",
    ),
    ("gpu-operator.nouveau-unload-failed", "failed to unload nouveau driver: exit status 1"),
    ("gpu-operator.vfio-bind-failed", "failed to bind device 0000:3b:00.0 to vfio driver: no such device"),
    ("gpu-operator.mofed-wait", "failed to wait for MOFED driver: timed out"),
    # apt's words for the package the precompiled driver container asks for (ubuntu22.04/precompiled)
    (
        "gpu-operator.precompiled-modules-missing",
        "E: Unable to locate package linux-modules-nvidia-535-server-5.15.0-1057-aws",
    ),
)


@pytest.mark.parametrize(("expected", "message"), _MORE, ids=[m for _, m in _MORE])
def test_an_operand_message_names_its_family(expected: str, message: str) -> None:
    found = find_all(message)
    assert found, message
    assert found[0].signature_id == expected, [d.signature_id for d in found]


def test_the_reconcile_failure_fix_fills_in_its_jsonpath() -> None:
    # A fix written as an f-string with `{{.items[0]}}` becomes `{.items[0]}`, which format_map
    # reads as a positional field: `gpuctl explain` then failed on the line that found it.
    found = find_all("Error syncing state state-driver: failed to create object")
    assert found[0].signature_id == "gpu-operator.clusterpolicy-reconcile-failed"
    assert "jsonpath='{.items[0].status.conditions}'" in found[0].hint
