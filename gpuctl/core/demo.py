"""`demo`: the whole story on a simulated cluster, through the same core functions as the commands.

Starts the built-in mixed cluster (CPU nodes, healthy GPU nodes, broken ones) in-process, then
taints, inventories and verifies it. The caller renders each step as it arrives; the simulated
cluster stops when the `demo_cluster` block ends, also on errors and Ctrl-C.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Union

from gpuctl.core.render import DEFAULT_TAINT_EFFECT, DEFAULT_TAINT_KEY
from gpuctl.core.status import StatusResult, gpu_status
from gpuctl.core.taint import TaintResult, taint_gpu_nodes
from gpuctl.core.verify_model import VerifyOptions, VerifyResult
from gpuctl.kube.nodes import Taint

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from gpuctl.sim.server.http_server import SimServer

DEMO_TAINT = Taint(key=DEFAULT_TAINT_KEY, value="present", effect=DEFAULT_TAINT_EFFECT)
DEMO_VERIFY_TIMEOUT_S = 60.0
StepResult = Union[TaintResult, StatusResult, VerifyResult]  # noqa: UP007 - runtime alias on 3.10


@dataclass(frozen=True)
class DemoCluster:
    server: SimServer
    kubeconfig: Path
    api_client: ApiClient
    scenario_source: str


@dataclass(frozen=True)
class DemoStep:
    """One step, run when the caller calls `run()` (after announcing it)."""

    command: str  # what a person would type against a real cluster
    purpose: str
    run: Callable[[], StepResult]


@contextlib.contextmanager
def demo_cluster(scenario_path: Path | None = None) -> Iterator[DemoCluster]:
    """Serve the scenario (default: the built-in mixed cluster) on loopback for the block."""
    from gpuctl.kube.client import load_api_client
    from gpuctl.sim.scenario import default_scenario_path, load_scenario
    from gpuctl.sim.server.http_server import SimServer

    path = scenario_path or default_scenario_path()
    server = SimServer(load_scenario(path))
    with tempfile.TemporaryDirectory(prefix="gpuctl-demo-") as workdir:
        server.start()
        try:
            kubeconfig = Path(workdir) / "kubeconfig"
            server.write_kubeconfig(kubeconfig)
            yield DemoCluster(server, kubeconfig, load_api_client(kubeconfig), str(path))
        finally:
            server.stop()


def demo_steps(api_client: ApiClient) -> list[DemoStep]:
    """The steps in order; each runs only when called, so its output can appear as it happens."""
    from gpuctl.core.verify import verify

    def taint() -> StepResult:
        return taint_gpu_nodes(api_client, taint=DEMO_TAINT)

    return [
        DemoStep("gpuctl taint-gpu-nodes", "keep non-GPU pods off the GPU nodes", taint),
        DemoStep("gpuctl taint-gpu-nodes", "again: idempotent, every node unchanged and no write", taint),
        DemoStep("gpuctl status", "the GPU inventory", lambda: gpu_status(api_client)),
        DemoStep(
            "gpuctl verify",
            "prove every GPU node with a pod running nvidia-smi, diagnose the rest",
            lambda: verify(api_client, VerifyOptions(timeout_s=DEMO_VERIFY_TIMEOUT_S)),
        ),
    ]
