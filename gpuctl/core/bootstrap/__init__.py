"""`gpuctl bootstrap`: phases.py runs host → cluster → verify; host.py drives the Ansible host
layer (host_phase.py: node by node where its hosts serve GPUs, gpuctl.core.upgrade), cluster.py
installs any stack (gpuctl.core.stacks) and waits for the GPUs, node_map.py matches inventory
hosts to Kubernetes nodes; the verify phase proves through gpuctl.core.proof."""

from gpuctl.core.bootstrap.cluster import ClusterOptions, ClusterResult, NodeReadiness
from gpuctl.core.bootstrap.host import (
    BootstrapResult,
    HostOutcome,
    failed_task_hint,
    host_outcomes,
    run_host_bootstrap,
)
from gpuctl.core.bootstrap.phases import BootstrapRequest, BootstrapRun, PhaseOutcome, run_bootstrap

__all__ = [
    "BootstrapRequest",
    "BootstrapResult",
    "BootstrapRun",
    "ClusterOptions",
    "ClusterResult",
    "HostOutcome",
    "NodeReadiness",
    "PhaseOutcome",
    "failed_task_hint",
    "host_outcomes",
    "run_bootstrap",
    "run_host_bootstrap",
]
