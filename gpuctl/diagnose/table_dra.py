"""Rows for GPUs under Dynamic Resource Allocation: the DRA driver's kubelet plugin log and the
scheduler's DynamicResources filter."""

from __future__ import annotations

from gpuctl.diagnose.signatures import DRIVER_FIX, HARDWARE_FIX, sig

DRA = (
    # Before the generic NVML rows: the DRA plugin locates libnvidia-ml itself (no runtime involved).
    sig(
        "dra.driver-libraries-missing",
        "plugin-log",
        "driver",
        r'failed to locate driver libraries: error locating "libnvidia-ml\.so\.1"',
        "the DRA driver's kubelet plugin cannot find the NVIDIA driver's libraries on the node "
        "(driver not installed, or the chart's nvidiaDriverRoot points elsewhere): it publishes no GPUs",
        DRIVER_FIX + "; for a containerised driver set the chart's `nvidiaDriverRoot`",
    ),
    sig(
        "dra.device-unhealthy",
        "plugin-log",
        "hardware",
        r"Received unhealthy notification for device: \S+",
        "the DRA driver's health check marked a GPU unhealthy (an Xid event): it is published with a "
        "NoSchedule device taint and no claim gets it",
        HARDWARE_FIX,
    ),
    sig(
        "sched.dra-cannot-allocate",
        "scheduling",
        "scheduling",
        r"cannot allocate all claims",
        "the scheduler found no devices for the pod's ResourceClaim on the node: its GPUs are held "
        "by other claims, tainted, or not published in a ResourceSlice",
        "`kubectl get resourceslices --field-selector spec.nodeName={node} -o yaml` (devices, taints) "
        "and `kubectl get resourceclaims -A` (who holds them)",
    ),
)
