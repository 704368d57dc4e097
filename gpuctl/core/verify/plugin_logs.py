"""The GPU plugin's log of a GPU node (the device plugin's, or the kubelet plugin of the node's
allocation): read where it can explain something, and judged as the allocation's log check
(GpuAllocation.log_check_id).

The API server keeps no pod logs: each read is proxied to the node's kubelet, which reads the
container runtime's file. On a node that advertises all its GPUs, whose plugin pod runs without
restarts and whose verification pod proved the GPUs, the log has nothing to explain, and reading it
on every node of a 5,000-node cluster is 5,000 kubelet round trips per run. So a log is read when
the node shows a problem before the pods run (GPUs missing, short of allocatable or of what was
expected, the plugin pod not ready or restarted, no pod can run there, or `--no-pods`); at once,
while the pods start; and for a node whose verification pod then failed or warned, once it has.
Every other node's check is a skip that says why.

gpuctl's least-privilege roles let verify read pod logs only in the namespaces they name
(docs/rbac.md); a plugin installed elsewhere is still found, and its log check then says that
gpuctl may not read it instead of ending the run.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

from gpuctl.core.stacks.registry import allocation_of
from gpuctl.core.verify.expectations import expected_gpus
from gpuctl.core.verify.model import Check, CheckStatus, PodEvaluation, VerifyOptions, skipped, warned
from gpuctl.errors import UnreachableError
from gpuctl.kube.daemonsets import PluginPod
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pods import read_pod_log
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.kube.client import ApiClient

TAIL_LINES = 200
FORBIDDEN = 403
NOT_NEEDED = "not read: the node advertises its GPUs and its verification pod proved them"


def _gpus_short(node: NodeInfo, snapshot: ClusterSnapshot, expected: int | None) -> bool:
    offered, usable = allocation_of(node, snapshot).gpus(node, snapshot)
    return offered == 0 or usable < offered or (expected is not None and offered != expected)


class PluginLogs:
    """Reads the plugin logs verify needs, on the run's thread pool."""

    def __init__(
        self, api_client: ApiClient, snapshot: ClusterSnapshot, executor: ThreadPoolExecutor
    ) -> None:
        self.api_client = api_client
        self.snapshot = snapshot
        self.executor = executor
        self.reads: dict[str, Future[Check]] = {}

    def _pod(self, node: NodeInfo) -> PluginPod | None:
        return allocation_of(node, self.snapshot).plugin_pod(node, self.snapshot)

    def _check_id(self, node: NodeInfo) -> str:
        return allocation_of(node, self.snapshot).log_check_id

    def _read(self, node: NodeInfo, pod: PluginPod) -> Check:
        try:
            log = read_pod_log(self.api_client, pod.namespace, pod.name, pod.container, TAIL_LINES)
        except UnreachableError as error:
            if getattr(error.__cause__, "status", None) != FORBIDDEN:
                raise
            return warned(
                self._check_id(node),
                f"not allowed to read the log of {pod.namespace}/{pod.name}",
                "let gpuctl read pod logs there: "
                f"`{command_line('gpuctl', 'render', '--rbac', '--log-namespace', pod.namespace)}` "
                "(docs/rbac.md)",
            )
        # A pod that never started has no log; device-plugin.pod says why.
        return allocation_of(node, self.snapshot).plugin_log(node, pod, log if isinstance(log, str) else "")

    def read(self, nodes: list[NodeInfo]) -> None:
        """Queue a read of each node's plugin log (once per node)."""
        for node in nodes:
            pod = self._pod(node)
            if pod is not None and node.name not in self.reads:
                self.reads[node.name] = self.executor.submit(self._read, node, pod)

    def read_first(self, options: VerifyOptions, targets: list[NodeInfo]) -> None:
        """Before the pods (`targets`: the nodes that get one): the nodes whose problem the log
        may explain; with --no-pods every node's, as no pod proves the GPUs."""
        if not options.run_pods:
            self.read(self.snapshot.gpu_nodes)
            return
        with_pod = {node.name for node in targets}

        def troubled(node: NodeInfo) -> bool:
            pod = self._pod(node)
            unwell = pod is not None and (not pod.ready or pod.restarts > 0)
            expected = expected_gpus(options.expectations, node.name)
            return unwell or node.name not in with_pod or _gpus_short(node, self.snapshot, expected)

        self.read([node for node in self.snapshot.gpu_nodes if troubled(node)])

    def read_after_pods(self, evaluations: dict[str, PodEvaluation]) -> None:
        """After the pods: the nodes whose verification pod failed, warned or never reported."""

        def proven(node: NodeInfo) -> bool:
            evaluation = evaluations.get(node.name)
            return evaluation is not None and all(c.status == CheckStatus.PASS for c in evaluation.checks)

        self.read([node for node in self.snapshot.gpu_nodes if not proven(node)])

    def results(self) -> dict[str, Check]:
        """node name → its check: the log's judgement, or a skip where it was not needed."""
        found = {name: future.result() for name, future in self.reads.items()}
        for node in self.snapshot.gpu_nodes:
            if node.name not in found and self._pod(node) is not None:
                found[node.name] = skipped(self._check_id(node), NOT_NEEDED)
        return found
