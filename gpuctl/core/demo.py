"""`demo`: the whole story on a cluster, through the same core functions as the commands.

The caller serves a simulated cluster without a device plugin (the built-in mix of CPU nodes,
healthy GPU nodes and broken ones) and renders each step as it arrives; this module only says
what the steps are: bootstrap's cluster phase brings the GPUs up, then taint, status, verify.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from gpuctl.core.bootstrap import BootstrapRequest, BootstrapRun, ClusterOptions, run_bootstrap
from gpuctl.core.status import StatusResult, gpu_status
from gpuctl.core.taint import DEFAULT_TAINT, TaintResult, taint_gpu_nodes
from gpuctl.core.verify.model import VerifyOptions, VerifyResult
from gpuctl.core.verify.run import verify

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

DEMO_VERIFY_TIMEOUT_S = 60.0
# The broken nodes never get their GPUs: the wait gives up on them quickly and says why.
DEMO_GPU_WAIT_S = 5.0
StepResult = Union[BootstrapRun, TaintResult, StatusResult, VerifyResult]  # noqa: UP007 - runtime alias on 3.10


@dataclass(frozen=True)
class DemoStep:
    """One step, run when the caller calls `run()` (after announcing it)."""

    command: str  # what a person would type against a real cluster
    purpose: str
    run: Callable[[], StepResult]


def demo_steps(api_client: ApiClient) -> list[DemoStep]:
    """The steps in order; each runs only when called, so its output can appear as it happens."""

    def taint() -> StepResult:
        return taint_gpu_nodes(api_client, taint=DEFAULT_TAINT)

    cluster_phase = BootstrapRequest(
        phase="cluster", cluster=ClusterOptions(taint=False, timeout_s=DEMO_GPU_WAIT_S), gate=False
    )
    return [
        DemoStep(
            "gpuctl bootstrap --phase cluster --no-taint --no-gate",
            "deploy the NVIDIA device plugin and wait for every GPU node's GPUs",
            lambda: run_bootstrap(cluster_phase, api_client),
        ),
        DemoStep("gpuctl taint-gpu-nodes", "keep non-GPU pods off the GPU nodes", taint),
        DemoStep("gpuctl taint-gpu-nodes", "again: idempotent, every node unchanged and no write", taint),
        DemoStep("gpuctl status", "the GPU inventory", lambda: gpu_status(api_client)),
        DemoStep(
            "gpuctl verify",
            "prove every GPU node with a pod running nvidia-smi, diagnose the rest",
            lambda: verify(api_client, VerifyOptions(timeout_s=DEMO_VERIFY_TIMEOUT_S)),
        ),
    ]
