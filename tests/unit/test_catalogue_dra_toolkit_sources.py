"""Entries added from a sweep of the NVIDIA DRA driver's, the container toolkit's, Fabric
Manager's and nvidia-smi's own error strings, for families no public thread shows yet: each is
found on its message as the component formats it (the format string of the entry's cited source
with its `%v`/`%s` filled in)."""

from __future__ import annotations

import pytest

from gpuctl.diagnose.scan import find_all

# (expected id, the message)
_MESSAGES = (
    # kubernetes/kubernetes v1.34 (k8s.io/dynamic-resource-allocation/resourceclaim, the kubelet's
    # gRPC client of the plugin)
    (
        "dra.claim-not-owned",
        "Failed to prepare dynamic resources: prepare dynamic resources: ResourceClaim "
        "default/gpu-pod-gpu-x7k2p was not created for pod default/gpu-pod (pod is not owner)",
    ),
    (
        "dra.plugin-api-unsupported",
        "prepare dynamic resources: NodePrepareResources: rpc error: code = Unimplemented desc = unknown "
        "service k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin",
    ),
    # the scheduler's DynamicResources plugin and the structured allocator (a FailedScheduling
    # event as the scheduler's source quotes it, and its test's CEL error)
    (
        "dra.claim-from-template-pending",
        "Warning  FailedScheduling  95s   default-scheduler  0/1 nodes are available: 1 waiting for "
        'dynamic resource controller to create the resourceclaim "pause-resource".',
    ),
    (
        "dra.cel-selector-error",
        "claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: model",
    ),
    # kubernetes-sigs/dra-driver-nvidia-gpu cmd/gpu-kubelet-plugin/vfio-device.go
    (
        "dra.gpu-bound-to-other-driver",
        'error configuring vfio device "gpu-vfio-1": GPU "0000:61:00.0" is bound to "nouveau" driver, '
        'expected "vfio-pci" or "nvidia"',
    ),
    ("dra.gpu-has-vfs", "error verifying disabled VFs: gpu has 4 VFs, cannot unbind"),
    ("dra.vfio-bind-failed", "failed to load vfio_pci module: exit status 1"),
    # cmd/gpu-kubelet-plugin/nvlib.go
    ("dra.mig-enabled-no-devices", "Physical GPU gpu-0 has MIG mode enabled but no configured MIG devices"),
    # cmd/gpu-kubelet-plugin/device_state.go (the kubelet checkpoint manager's error, wrapped)
    ("dra.checkpoint-corrupt", "unable to get checkpoint: checkpoint is corrupted"),
    # pkg/featuregates/featuregates.go
    (
        "dra.feature-gates-invalid",
        "feature gate ComputeDomainCliques requires IMEXDaemonsWithDNSNames to also be enabled",
    ),
    # NVIDIA/nvidia-container-toolkit v1.20.0 (internal/oci, internal/config/image, pkg/nvcdi,
    # cmd/nvidia-container-runtime-hook, cmd/nvidia-ctk-installer)
    (
        "container-toolkit.low-level-runtime-missing",
        "error constructing low-level runtime: no runtime binary found from candidate list: "
        "[docker-runc runc crun]",
    ),
    (
        "container-toolkit.envvar-request-ignored",
        "Ignoring devices requested by environment variable(s) in unprivileged container: "
        "[NVIDIA_VISIBLE_DEVICES]",
    ),
    (
        "container-toolkit.envvar-request-ignored",
        "Ignoring devices specified in NVIDIA_VISIBLE_DEVICES in unprivileged container",
    ),
    (
        "container-toolkit.imex-channel-not-found",
        "IMEX channel 0 not found at /dev/nvidia-caps-imex-channels/channel0: stat "
        "/dev/nvidia-caps-imex-channels/channel0: no such file or directory",
    ),
    (
        "container-toolkit.capabilities-unsupported",
        "unsupported capabilities found in 'compute,video,vulkan' (allowed 'compute,video')",
    ),
    (
        "container-toolkit.toolkit-already-running",
        "This normally means an instance of the NVIDIA toolkit Container is already running, aborting",
    ),
    (
        "container-toolkit.toolkit-already-running",
        "unable to get flock on pidfile: resource temporarily unavailable",
    ),
    (
        "container-toolkit.runtime-restart-failed",
        "unable to send SIGHUP to 'containerd' process: no such process",
    ),
    ("container-toolkit.runtime-restart-failed", "unable to restart docker: exit status 1"),
    # nvidia-smi's wording of NVML's return codes
    (
        "nvml.8",
        "Unable to determine the device handle for GPU 0000:81:00.0: Unable to communicate with GPU "
        "because it is insufficiently powered.",
    ),
    ("nvml.28", "Failed to initialize NVML: No supported GPUs were found"),
)


@pytest.mark.parametrize(("expected", "message"), _MESSAGES, ids=[m[:60] for _, m in _MESSAGES])
def test_a_source_message_names_its_family(expected: str, message: str) -> None:
    found = find_all(message)
    assert found, message
    assert found[0].signature_id == expected, [d.signature_id for d in found]


def test_another_programs_lock_timeout_is_not_the_plugins() -> None:
    assert find_all("timeout acquiring lock (/var/lib/dpkg/lock-frontend)") == []
    found = find_all("timeout acquiring lock (/var/lib/kubelet/plugins/gpu.nvidia.com/pu.lock)")
    assert [d.signature_id for d in found] == ["dra.prepare-lock-timeout"]


def test_a_volume_claim_not_owned_is_not_read_as_a_resource_claim() -> None:
    found = find_all("PVC default/data-my-pod was not created for pod default/my-pod (pod is not owner)")
    assert "dra.claim-not-owned" not in [d.signature_id for d in found]


def test_the_bound_driver_is_read_out_of_the_line() -> None:
    found = find_all('GPU "0000:61:00.0" is bound to "nouveau" driver, expected "vfio-pci" or "nvidia"')
    assert "bound to nouveau" in found[0].cause
