"""The active phase of `gpuctl verify`: verification pods and device plugin logs, in parallel.

Work is queued on one thread pool in the order that keeps the wall time short: pod creations
first (their podStart latency is the long pole), then device plugin log reads, which fill the
time while the pods start. Each finished pod's log is read and evaluated on the pool too, so
the main thread only follows the watch.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core import verify_checks as checks
from gpuctl.core.verify_model import Check, VerifyOptions
from gpuctl.core.verify_pod import CONTAINER, NODE_ANNOTATION, verification_pod
from gpuctl.core.verify_smi import PodEvaluation, evaluate
from gpuctl.kube.daemonsets import PluginPod
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pods import PodBatch, PodOutcome
from gpuctl.kube.raw import dig, name_of

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

PLUGIN_LOG_TAIL_LINES = 200


def plugin_log_checks(
    api_client: ApiClient,
    nodes: list[NodeInfo],
    plugin_pods: dict[str, PluginPod],
    executor: ThreadPoolExecutor,
) -> dict[str, Future[Check]]:
    """node name → future device-plugin.log check (one log read per node with a plugin pod)."""
    from kubernetes.client import CoreV1Api
    from kubernetes.client.exceptions import ApiException

    from gpuctl.kube.client import api_call
    from gpuctl.kube.raw import call_text

    core = CoreV1Api(api_client)

    def read(node: NodeInfo, pod: PluginPod) -> Check:
        try:
            with api_call("get", f"pods/log in namespace {pod.namespace}"):
                log = call_text(
                    core.read_namespaced_pod_log,
                    pod.name,
                    pod.namespace,
                    container=pod.container or None,
                    tail_lines=PLUGIN_LOG_TAIL_LINES,
                )
        except ApiException:
            log = ""  # a pod that never started has no log; device-plugin.pod says why
        return checks.device_plugin_log(node, pod, log)

    return {
        node.name: executor.submit(read, node, plugin_pods[node.name])
        for node in nodes
        if node.name in plugin_pods
    }


class PodRun:
    """Create one verification pod per target node, follow them, evaluate each as it ends."""

    def __init__(self, batch: PodBatch, targets: list[NodeInfo], run_id: str, options: VerifyOptions):
        self.batch = batch
        self.options = options
        self.manifests = [verification_pod(node, node.gpu_allocatable, run_id, options) for node in targets]
        self.node_by_pod = {name_of(m): _node_for(m, targets) for m in self.manifests}
        self.creations: list[Future[PodOutcome | None]] = []
        self.evaluations: dict[str, Future[PodEvaluation]] = {}

    def start(self) -> None:
        """Queue every creation (returns at once)."""
        self.creations = self.batch.create_all(self.manifests)

    def _evaluate(self, outcome: PodOutcome) -> PodEvaluation:
        node = self.node_by_pod[outcome.name]
        if outcome.state in ("succeeded", "failed"):
            outcome = replace(outcome, log=self.batch.read_log(outcome.name, CONTAINER))
        return evaluate(outcome, node, node.gpu_allocatable, self.options.namespace, self.options.image)

    def _on_done(self, outcome: PodOutcome) -> None:
        if outcome.state in ("succeeded", "failed"):
            self.evaluations[outcome.name] = self.batch.executor.submit(self._evaluate, outcome)

    def finish(self, deadline: float) -> dict[str, PodEvaluation]:
        """Wait for the pods until `deadline` (monotonic); node name → evaluation."""
        created = (creation.result() for creation in self.creations)
        outcomes = {outcome.name: outcome for outcome in created if outcome is not None}
        outcomes |= self.batch.follow(set(self.node_by_pod) - outcomes.keys(), deadline, self._on_done)
        pending = [outcome for name, outcome in outcomes.items() if name not in self.evaluations]
        results = {name: future.result() for name, future in self.evaluations.items()}
        for outcome in _fill_from_events(self.batch, pending):
            results[outcome.name] = self._evaluate(outcome)
        return {self.node_by_pod[name].name: evaluation for name, evaluation in results.items()}


def _node_for(manifest: dict[str, object], targets: list[NodeInfo]) -> NodeInfo:
    wanted = str(dig(manifest, "metadata", "annotations", NODE_ANNOTATION))
    return next(node for node in targets if node.name == wanted)


def _fill_from_events(batch: PodBatch, outcomes: list[PodOutcome]) -> list[PodOutcome]:
    """Unschedulable or image-pull outcomes without a message: take it from the pod's events."""
    needy = {
        outcome.name
        for outcome in outcomes
        if outcome.state in ("unschedulable", "image-pull") and not outcome.message
    }
    if not needy:
        return outcomes
    events = batch.events_by_pod()
    wanted = {"unschedulable": ("FailedScheduling",), "image-pull": ("Failed", "BackOff")}
    filled = []
    for outcome in outcomes:
        messages = [
            str(event.get("message") or "")
            for event in events.get(outcome.name, [])
            if outcome.name in needy and event.get("reason") in wanted[outcome.state]
        ]
        filled.append(replace(outcome, message=messages[-1]) if messages else outcome)
    return filled
