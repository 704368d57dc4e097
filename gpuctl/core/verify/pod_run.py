"""The active phase of `gpuctl verify`: create the verification pods, follow them, judge each.

Work is queued on one thread pool in the order that keeps the wall time short: pod creations
first (their podStart latency is the long pole), then whatever the caller queues next (device
plugin log reads), which fills the time while the pods start. Each finished pod's log is read
and judged on the pool too, so the main thread only follows the watch; a pod that succeeded
brings nvidia-smi's answer in its termination message (pod_manifest.py), and needs no log read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import NamedTuple

from gpuctl.core.verify.model import PodEvaluation
from gpuctl.core.verify.pod_judgement import stuck_for_good
from gpuctl.core.verify.progress import PodProgress
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pods import PodBatch, PodOutcome
from gpuctl.kube.raw import JsonDict

# How a finished (or stuck) pod is judged: its outcome, with the log read, and its node.
Judge = Callable[[PodOutcome, NodeInfo], PodEvaluation]


class PlannedPod(NamedTuple):
    """A verification pod to create: its manifest is built only when its turn to be created
    comes (5,000 manifests held at once are ~18 MB)."""

    name: str
    node: NodeInfo
    build: Callable[[], JsonDict]


class PodRun:
    """Create one verification pod per node, follow them, judge each as it ends."""

    def __init__(
        self,
        batch: PodBatch,
        pods: list[PlannedPod],
        container: str,
        judge: Judge,
        progress: PodProgress | None = None,
    ):
        self.batch = batch
        self.progress = progress
        self.container = container
        self.judge = judge
        self.planned = pods
        self.node_by_pod = {pod.name: pod.node for pod in pods}
        self.creations: list[Future[list[PodOutcome]]] = []
        self.evaluations: dict[str, Future[PodEvaluation]] = {}
        self.started_at = 0.0  # monotonic: the create requests were queued
        self.ended_at: dict[str, float] = {}  # pod name → monotonic time its outcome was known

    def start(self) -> None:
        """Queue every creation (returns at once)."""
        self.started_at = time.monotonic()
        on_created = self.progress.created if self.progress is not None else None
        manifests = (pod.build() for pod in self.planned)
        self.creations = self.batch.create_all(manifests, len(self.planned), on_created)

    def _evaluate(self, outcome: PodOutcome) -> PodEvaluation:
        if outcome.state == "succeeded" and outcome.message:
            # nvidia-smi's answer, from the termination message the watch brought (pod_manifest.py)
            outcome = replace(outcome, log=outcome.message, message="")
        elif outcome.state in ("succeeded", "failed"):
            outcome = replace(outcome, log=self.batch.read_log(outcome.name, self.container))
        return self.judge(outcome, self.node_by_pod[outcome.name])

    @staticmethod
    def _stuck_for_good(_name: str, events: tuple[tuple[str, str], ...]) -> bool:
        return stuck_for_good(events)

    def _on_done(self, outcome: PodOutcome) -> None:
        self.ended_at[outcome.name] = time.monotonic()
        if self.progress is not None:
            self.progress.finished(outcome.name)
        if outcome.state == "succeeded" and outcome.message:  # nothing to read: judged here
            self.evaluations[outcome.name] = _done(self._evaluate(outcome))
        elif outcome.state in ("succeeded", "failed"):
            self.evaluations[outcome.name] = self.batch.executor.submit(self._evaluate, outcome)

    def finish(self, deadline: float) -> dict[str, PodEvaluation]:
        """Wait for the pods until `deadline` (monotonic); node name → evaluation."""
        return {
            self.node_by_pod[name].name: evaluation
            for name, evaluation in self.finish_by_pod(deadline).items()
        }

    def finish_by_pod(self, deadline: float) -> dict[str, PodEvaluation]:
        """Wait for the pods until `deadline` (monotonic); pod name → evaluation."""
        outcomes = {outcome.name: outcome for creation in self.creations for outcome in creation.result()}
        following = set(self.node_by_pod) - outcomes.keys()
        on_phase = self.progress.phase if self.progress is not None else None
        outcomes |= self.batch.follow(following, deadline, self._on_done, self._stuck_for_good, on_phase)
        pending = [outcome for name, outcome in outcomes.items() if name not in self.evaluations]
        results = {name: future.result() for name, future in self.evaluations.items()}
        for outcome in _fill_from_events(self.batch, pending):
            results[outcome.name] = self._evaluate(outcome)
        now = time.monotonic()
        return {
            name: replace(evaluation, pod_seconds=self.ended_at.get(name, now) - self.started_at)
            for name, evaluation in results.items()
        }


def merge_by_node(by_pod: dict[str, PodEvaluation], nodes: dict[str, NodeInfo]) -> dict[str, PodEvaluation]:
    """One evaluation per node: its first failing pod's, else the union of what its pods saw."""
    grouped: dict[str, list[PodEvaluation]] = {}
    for pod, evaluation in sorted(by_pod.items()):
        grouped.setdefault(nodes[pod].name, []).append(evaluation)
    merged = {}
    for node, evaluations in grouped.items():
        failing = [e for e in evaluations if any(c.failed for c in e.checks)]
        first = failing[0] if failing else evaluations[0]
        uuids = tuple(dict.fromkeys(u for e in evaluations for u in e.uuids))
        mig = sum(e.mig_devices for e in evaluations)
        seen = len(uuids) if uuids else first.seen
        seconds = max((e.pod_seconds for e in evaluations if e.pod_seconds is not None), default=None)
        merged[node] = PodEvaluation(
            first.checks, seen, first.product, first.driver_version, uuids, mig, pod_seconds=seconds
        )
    return merged


def _done(evaluation: PodEvaluation) -> Future[PodEvaluation]:
    future: Future[PodEvaluation] = Future()
    future.set_result(evaluation)
    return future


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
