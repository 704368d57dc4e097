"""The rounds of the deeper levels: after the nvidia-smi round, one round per level, each a pod per
node (per MPS part) on the same batch, so the same labels, watch and cleanup cover them. Rounds run
one after the other: each pod requests the node's GPUs, so two cannot run on a node at once. A node
that failed an earlier round gets the later levels' checks as skips saying why.

Requests per level: one create and one log read per node that gets a pod, one watch per round.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.registry import allocation_of
from gpuctl.core.verify.levels import levels_through
from gpuctl.core.verify.levels.fabric import CHECK_ID as FABRIC_CHECK
from gpuctl.core.verify.levels.fabric import FabricRounds
from gpuctl.core.verify.model import PodEvaluation, passed, skipped
from gpuctl.core.verify.pod_run import PlannedPod, PodRun

if TYPE_CHECKING:
    from gpuctl.core.stacks.base import VerificationRun
    from gpuctl.core.verify.levels.base import ProofLevel
    from gpuctl.core.verify.model import VerifyOptions
    from gpuctl.core.verify.progress import PodProgress
    from gpuctl.core.verify.snapshot import ClusterSnapshot
    from gpuctl.kube.nodes import NodeInfo
    from gpuctl.kube.pods import PodBatch, PodOutcome


def not_run(options: VerifyOptions, why: str) -> tuple[PodEvaluation, ...]:
    """The deeper levels' checks of a node no pod could run on, skipped for the same reason."""
    fabric = (PodEvaluation((skipped(FABRIC_CHECK, why),)),) if options.proof.level == "fabric" else ()
    return (
        *(PodEvaluation((skipped(level.check_id, why),)) for level in levels_through(options.proof.level)),
        *fabric,
    )


class LevelRounds:
    """Run every deeper level `options.proof.level` asks for on `nodes` (those the nvidia-smi round
    ran on), recording one evaluation per node and level in `snapshot.levels`."""

    def __init__(
        self,
        batch: PodBatch,
        snapshot: ClusterSnapshot,
        options: VerifyOptions,
        run: tuple[str, dict[Stack, VerificationRun | None]],
        progress: PodProgress | None,
    ) -> None:
        self.batch = batch
        self.snapshot = snapshot
        self.options = options
        self.run_id, self.runs = run
        self.progress = progress

    def run_all(self, nodes: list[NodeInfo]) -> None:
        failed_at: dict[str, str] = {
            node.name: _first_failure(self.snapshot.evaluations.get(node.name)) for node in nodes
        }
        for level in levels_through(self.options.proof.level):
            ready = [node for node in nodes if not failed_at[node.name]]
            results = self._round(level, ready)
            for node in nodes:
                why = failed_at[node.name]
                evaluation = results.get(node.name) or PodEvaluation(
                    (skipped(level.check_id, f"not run: {why} failed"),)
                )
                self.snapshot.levels[node.name] = (*self.snapshot.levels.get(node.name, ()), evaluation)
                failed_at[node.name] = why or _first_failure(evaluation)
        if self.options.proof.level == "fabric":
            self._fabric(nodes, failed_at)

    def _fabric(self, nodes: list[NodeInfo], failed_at: dict[str, str]) -> None:
        """The multi-node all-reduce over the nodes that passed every level before it."""
        ready = [node for node in nodes if not failed_at[node.name]]
        # Its workers request nvidia.com/gpu: a node whose GPUs go to pods another way is left out
        # rather than failed for a resource it does not advertise.
        unserved = {
            node.name: why
            for node in ready
            if (why := allocation_of(node, self.snapshot).gpu_resource_unserved)
        }
        ready = [node for node in ready if node.name not in unserved]
        results = {}
        if ready:  # (asks the API whether MPIJobs are served: only when there is something to run)
            rounds = FabricRounds(self.batch.api_client, self.batch, self.options, self.run_id, self.progress)
            results = rounds.run(ready, {node.name: self._gpus(node) for node in ready})
        for node in nodes:
            why = f"not run: {failed_at[node.name] or 'no multi-node run'} failed"
            if node.name in unserved:
                why = f"not run: {unserved[node.name]}"
            evaluation = results.get(node.name) or PodEvaluation((skipped(FABRIC_CHECK, why),))
            self.snapshot.levels[node.name] = (*self.snapshot.levels.get(node.name, ()), evaluation)

    def _gpus(self, node: NodeInfo) -> int:
        """The GPUs each of the node's pods gets: what its allocation hands out, else what the
        nvidia-smi pod saw (MIG)."""
        given = allocation_of(node, self.snapshot).pod_gpus(node, self.snapshot)
        seen = self.snapshot.evaluations[node.name].seen if node.name in self.snapshot.evaluations else None
        return given if given is not None else seen or 1

    def _round(self, level: ProofLevel, nodes: list[NodeInfo]) -> dict[str, PodEvaluation]:
        results: dict[str, PodEvaluation] = {}
        pods: list[PlannedPod] = []
        gpus_of: dict[str, int] = {}
        for node in nodes:
            gpus = gpus_of[node.name] = self._gpus(node)
            why_not = level.not_applicable(gpus)
            if why_not:
                results[node.name] = PodEvaluation((passed(level.check_id, why_not),))
                continue
            allocation = allocation_of(node, self.snapshot)
            options = replace(self.options, workload=level.workload(gpus, self.options.proof))
            pods += allocation.planned_pods(
                node, self.run_id, options, self.snapshot, self.runs.get(allocation.stack)
            )
        if not pods:
            return results
        if self.progress is not None:
            self.progress.planned(nodes=len(nodes), pods=len(pods), timeout_s=self.options.timeout_s)

        def judge(outcome: PodOutcome, node: NodeInfo) -> PodEvaluation:
            return level.judge(outcome, node, gpus_of[node.name], self.options)

        pod_run = PodRun(self.batch, pods, level.container, judge, self.progress)
        started = time.monotonic()
        pod_run.start()
        by_pod = pod_run.finish_by_pod(started + self.options.timeout_s)
        return results | _by_node(by_pod, pod_run.node_by_pod)


def _first_failure(evaluation: PodEvaluation | None) -> str:
    """The id of the evaluation's first failing check ("" when none failed)."""
    checks = evaluation.checks if evaluation is not None else ()
    return next((check.id for check in checks if check.failed), "")


def _by_node(by_pod: dict[str, PodEvaluation], nodes: dict[str, NodeInfo]) -> dict[str, PodEvaluation]:
    """One evaluation per node: its first failing pod's (MPS: one pod per GPU), with every pod's
    CUDA results."""
    grouped: dict[str, list[PodEvaluation]] = {}
    for pod, evaluation in sorted(by_pod.items()):
        grouped.setdefault(nodes[pod].name, []).append(evaluation)
    merged = {}
    for node, evaluations in grouped.items():
        first = next((e for e in evaluations if _first_failure(e)), evaluations[0])
        cuda = tuple(gpu for e in evaluations for gpu in e.cuda or ())
        merged[node] = replace(first, cuda=cuda if any(e.cuda is not None for e in evaluations) else None)
    return merged
