"""Rows for GPUs under Dynamic Resource Allocation: the DRA driver's kubelet plugin log (the
scheduler's "cannot allocate all claims" shares sched.insufficient-gpu; the DRA catalogue,
catalogues/dra.py, holds the kubelet's, the scheduler's and the driver's fixed error texts)."""

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
    # The lines that only say a claim was not prepared; the reason after them is the DRA
    # catalogue's (catalogues/dra.py: driver not registered, MIG, ComputeDomain, config ...).
    sig(
        "dra.prepare-failed",
        "events",
        "plugin",
        r"Failed to prepare dynamic resources|NodePrepareResources failed|NodePrepareResources: |"
        r"error preparing devices for claim|prepare devices failed|dra: handling request failed",
        "the kubelet could not prepare the pod's ResourceClaim through the DRA driver's kubelet "
        "plugin, so the pod stays in ContainerCreating; the rest of the message says why",
        "`kubectl describe pod` for the whole message, and the DRA driver's kubelet-plugin log on "
        "{node} (`kubectl get pods -A -o wide --field-selector spec.nodeName={node} | grep "
        "kubelet-plugin`, containers `gpus` and `compute-domains`)",
        also=("plugin-log", "runtime"),
        generic=True,
    ),
    sig(
        "imex.no-interface",
        "operand",
        "dra",
        r"No matching network interface found for any IP addresses in the node config",
        "the IMEX daemon of a ComputeDomain found none of the addresses in its nodes config on its "
        "own network interfaces, so it does not start and the ComputeDomain never becomes Ready",
        "`kubectl get computedomains -A -o yaml` and the IMEX daemon pod's log on {node}: the "
        "addresses the DRA driver wrote must be the daemon pods' own; a host `nvidia-imex` service "
        "must not run beside them (`sudo systemctl disable --now nvidia-imex` on {node}); then "
        "recreate the ComputeDomain",
    ),
)
