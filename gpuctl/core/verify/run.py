"""`gpuctl verify`: prove or diagnose every GPU node.

Requests: a constant handful (nodes, DaemonSets, device plugin pods, RuntimeClasses, namespace,
the pods that hold GPUs (a paged list; where GPUs are claimed, the claims too), one pod list, one watch on
the pods and one on their Warning events, one deletecollection) plus one per GPU node (create the
verification pod: nvidia-smi's answer comes back in its status), and one log read per node with a
problem to explain (its failed pod's, its device plugin's: see plugin_logs.py).

A node's verification pods ask only for the GPUs its workloads leave free; a node whose workloads
hold all of them passes unproven (gpu.in-use).
"""

from __future__ import annotations

import contextlib
import functools
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from gpuctl.core.stacks.registry import ALLOCATIONS, STACKS, allocation_of
from gpuctl.core.verify import cluster_checks as cluster
from gpuctl.core.verify import node_checks as checks
from gpuctl.core.verify.expectations import expected_globs, expected_gpus, is_glob, missing_node
from gpuctl.core.verify.levels.rounds import LevelRounds, not_run
from gpuctl.core.verify.model import (
    GpuCounts,
    NodeResult,
    OperatorView,
    PodEvaluation,
    RunFacts,
    SharingSummary,
    VerifyOptions,
    VerifyResult,
    skipped,
)
from gpuctl.core.verify.plugin_logs import PluginLogs
from gpuctl.core.verify.pod_judgement import SMI_CHECKS, evaluate
from gpuctl.core.verify.pod_manifest import CONTAINER, NAMESPACE_LABELS, new_run_id, run_selector
from gpuctl.core.verify.pod_run import PlannedPod, PodRun, merge_by_node
from gpuctl.core.verify.progress import PodProgress
from gpuctl.core.verify.snapshot import ClusterSnapshot, settled_snapshot
from gpuctl.errors import GpuctlError
from gpuctl.kube.client import pooled_client
from gpuctl.kube.nodes import NodeInfo
from gpuctl.kube.pods import PodBatch, PodOutcome, delete_namespace, ensure_namespace

if TYPE_CHECKING:
    from gpuctl.core.stacks import Stack
    from gpuctl.core.stacks.base import VerificationRun
    from gpuctl.kube.client import ApiClient

POD_CHECKS = ("pod.scheduled", "pod.image", *SMI_CHECKS)
NOT_READY_SKIP = "node not Ready (see node.ready)"
# The taint the scheduler reads a cordon as (spec.unschedulable); a pod tolerating it lands anyway.
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


def _can_run_pod(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> str:
    """Why no verification pod can run on `node`, or "" when one can. A cordoned node takes the
    pod only when it tolerates the cordon: a node-by-node upgrade proves a node before uncordoning it."""
    if not node.ready:
        return "node not Ready"
    if node.unschedulable and not any(t.key == UNSCHEDULABLE_TAINT_KEY for t in options.tolerations):
        return "node cordoned"
    return allocation_of(node, snapshot).why_no_pod(node, snapshot)


def verify(
    api_client: ApiClient, options: VerifyOptions, progress: PodProgress | None = None
) -> VerifyResult:
    """Run every check; create, follow and always delete the verification pods (counted in
    `progress` as they go, for a live display)."""
    started = time.monotonic()
    api_client = pooled_client(api_client, options.concurrency)
    snapshot = settled_snapshot(api_client, options, started, list(STACKS.values()))
    run_id = new_run_id()
    executor = ThreadPoolExecutor(max_workers=options.concurrency, thread_name_prefix="gpuctl-verify")
    batch: PodBatch | None = None
    runs: dict[Stack, VerificationRun | None] = {}  # allocation → what it created for the run
    namespace_created = False
    try:
        targets = [node for node in snapshot.gpu_nodes if not _can_run_pod(node, snapshot, options)]
        pod_run: PodRun | None = None
        if options.run_pods and targets:
            namespace_created = ensure_namespace(api_client, options.namespace, NAMESPACE_LABELS)
            batch = PodBatch(
                api_client, options.namespace, run_selector(run_id), executor, options.concurrency
            )
            for allocation in dict.fromkeys(allocation_of(node, snapshot) for node in targets):
                run = runs[allocation.stack] = allocation.verification_run(
                    api_client, snapshot, options.namespace, run_id
                )
                if run is not None:
                    run.start()
            pods = [pod for node in targets for pod in _pods_for(node, run_id, options, snapshot, runs)]
            if progress is not None:
                progress.planned(nodes=len(targets), pods=len(pods), timeout_s=options.timeout_s)
            judge = functools.partial(_judge, options=options, snapshot=snapshot)
            pod_run = PodRun(batch, pods, CONTAINER, judge, progress)
            # --timeout is the wait for the pods: listing a large cluster first does not eat it.
            started_pods = time.monotonic()
            pod_run.start()
        plugin_logs = PluginLogs(api_client, snapshot, executor)
        plugin_logs.read_first(options, targets)
        if pod_run is not None:
            by_pod = pod_run.finish_by_pod(started_pods + options.timeout_s)
            snapshot.evaluations = merge_by_node(by_pod, pod_run.node_by_pod)
            allocations = {pod: a for run in _started(runs) for pod, a in run.finish().items()}
            snapshot.claims = {
                pod_run.node_by_pod[p].name: a for p, a in allocations.items() if p in pod_run.node_by_pod
            }
            if batch is not None:
                LevelRounds(batch, snapshot, options, (run_id, runs), progress).run_all(targets)
        if options.run_pods:
            plugin_logs.read_after_pods(snapshot.evaluations)
        snapshot.plugin_checks = plugin_logs.results()
    except BaseException:
        _clean_up(api_client, executor, (batch, _started(runs)), options, namespace_created=namespace_created)
        raise
    _clean_up(api_client, executor, (batch, _started(runs)), options, namespace_created=namespace_created)
    kept = tuple(sorted(batch.created_names)) if batch is not None and options.keep_pods else ()
    run_facts = RunFacts(run_id, batch.created if batch else 0, time.monotonic() - started, kept)
    return _result(snapshot, options, run_facts)


def _started(runs: dict[Stack, VerificationRun | None]) -> list[VerificationRun]:
    return [run for run in runs.values() if run is not None]


def _clean_up(
    api_client: ApiClient,
    executor: ThreadPoolExecutor,
    run: tuple[PodBatch | None, list[VerificationRun]],
    options: VerifyOptions,
    *,
    namespace_created: bool,
) -> None:
    """Delete the pods (unless --keep-pods), what the allocations created for the run (a claim
    template and its claims), and the namespace this run created if it created no pod in it."""
    batch, runs = run
    if batch is not None:
        batch.stop.set()
    executor.shutdown(wait=True, cancel_futures=True)
    if batch is not None and not options.keep_pods:
        try:
            batch.delete_all()
        finally:
            for allocation_run in runs:
                allocation_run.clean_up()
    else:
        for allocation_run in runs:
            allocation_run.finish()
    if namespace_created and (batch is None or batch.created == 0):
        # A courtesy to a user allowed to create namespaces (gpuctl's least-privilege role does not
        # need to: its render creates the namespace, docs/rbac.md), who may not be allowed to
        # delete them: a failed cleanup must not turn a run's verdict (or its error) into another.
        with contextlib.suppress(GpuctlError):
            delete_namespace(api_client, options.namespace)


def _pods_for(
    node: NodeInfo,
    run_id: str,
    options: VerifyOptions,
    snapshot: ClusterSnapshot,
    runs: dict[Stack, VerificationRun | None],
) -> list[PlannedPod]:
    allocation = allocation_of(node, snapshot)
    return allocation.planned_pods(node, run_id, options, snapshot, runs.get(allocation.stack))


def _judge(
    outcome: PodOutcome, node: NodeInfo, *, options: VerifyOptions, snapshot: ClusterSnapshot
) -> PodEvaluation:
    """The workload's verdict (nvidia-smi's), held to the GPUs the node's allocation must hand the
    pod, with the allocation's own checks of what the pod saw."""
    allocation = allocation_of(node, snapshot)
    seen = allocation.pod_gpus(node, snapshot)
    evaluation = evaluate(outcome, node, seen, options.namespace, options.image)
    return allocation.judged(evaluation, node, snapshot)


def _node_result(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> NodeResult:
    expected = expected_gpus(options.expectations, node.name)
    allocation = allocation_of(node, snapshot)
    plugin_and_gpus = allocation.gpu_checks(node, snapshot, expected)
    if not node.ready:  # no DaemonSet pod lands on a NotReady node, so none of these can pass
        plugin_and_gpus = [skipped(c.id, NOT_READY_SKIP) if c.failed else c for c in plugin_and_gpus]
    held = allocation.held(node, snapshot)
    in_use = checks.gpus_in_use(node, held) if options.run_pods and node.ready else None
    read_only = [
        checks.node_ready(node),
        checks.node_schedulable(node),
        *plugin_and_gpus,
        *([in_use] if in_use is not None else []),
        checks.taint_toleration(node, allocation.plugins(snapshot)),
        *(check for stack in STACKS.values() for check in stack.validation_checks(node, snapshot)),
    ]
    plan = snapshot.plan(node)
    evaluation = _pod_checks(node, snapshot, options)
    handed_out = allocation.allocation_checks(node, snapshot, evaluation)
    offered, usable = allocation.gpus(node, snapshot)
    counts = GpuCounts(expected, offered, usable, evaluation.seen, held.devices)
    physical = allocation.physical_gpus(node, snapshot, evaluation)
    summary = SharingSummary(plan.mode, plan.replicas, plan.mig_strategy, physical, plan.mig_devices)
    levels = _level_evaluations(node, snapshot, options)
    return NodeResult(
        node.name,
        counts,
        (*read_only, *handed_out, *evaluation.checks, *(check for level in levels for check in level.checks)),
        evaluation.product,
        evaluation.driver_version,
        summary,
        evaluation.pod_seconds,
        allocation.stack,
        options.proof.level,
        next((level.cuda for level in levels if level.cuda is not None), None),
        next((level.nccl for level in levels if level.nccl is not None), None),
        fabric=next((level.fabric for level in levels if level.fabric is not None), None),
        device_taints=allocation.device_taints(node, snapshot),
        busy=in_use is not None and held.busy,
    )


def _level_evaluations(
    node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions
) -> tuple[PodEvaluation, ...]:
    """The deeper levels' verdicts on the node, or their checks skipped where no pod could run."""
    if not options.run_pods:
        return not_run(options, "--no-pods")
    return snapshot.levels.get(node.name) or not_run(
        options, _can_run_pod(node, snapshot, options) or "no verification pod"
    )


def _pod_checks(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> PodEvaluation:
    if not options.run_pods:
        return PodEvaluation(tuple(skipped(check_id, "--no-pods") for check_id in POD_CHECKS))
    why_not = _can_run_pod(node, snapshot, options)
    if why_not:
        return PodEvaluation(tuple(skipped(check_id, why_not) for check_id in POD_CHECKS))
    evaluation = snapshot.evaluations.get(node.name)
    if evaluation is None:
        return PodEvaluation(tuple(skipped(check_id, "no verification pod") for check_id in POD_CHECKS))
    return evaluation


def _result(snapshot: ClusterSnapshot, options: VerifyOptions, run: RunFacts) -> VerifyResult:
    nodes = [_node_result(node, snapshot, options) for node in snapshot.gpu_nodes]
    nodes += [missing_node(p, options.expectations) for p in snapshot.missing if not is_glob(p)]
    labels = {node.name: node.driver_version for node in snapshot.gpu_nodes}
    served = {
        allocation: [node for node in snapshot.gpu_nodes if allocation_of(node, snapshot) is allocation]
        for allocation in ALLOCATIONS.values()
    }
    runtime_class_users = [
        plugin
        for allocation, nodes in served.items()
        for plugin in allocation.runtime_class_users(snapshot, nodes)
    ]
    cluster_checks = [
        cluster.gpu_nodes_present(snapshot.gpu_nodes, options.allow_empty),
        *expected_globs(snapshot.missing),
        *(
            check
            for allocation, nodes in served.items()
            for check in allocation.cluster_checks(snapshot, nodes)
        ),
        cluster.daemonset_tolerations(snapshot.daemonsets, snapshot.gpu_nodes),
        cluster.runtime_class(options, runtime_class_users, snapshot.runtime_classes),
        cluster.driver_drift(nodes, labels),
        *(check for stack in STACKS.values() for check in stack.own_cluster_checks(snapshot)),
    ]
    return VerifyResult(
        tuple(nodes),
        tuple(cluster_checks),
        run.run_id,
        options.namespace,
        run.pods_created,
        run.duration_s,
        run.kept_pods,
        # the result's Operator view (verify/model.py's OperatorView), from the facts that are one
        next((facts for facts in snapshot.facts.values() if isinstance(facts, OperatorView)), None),
        ("pods", *(kind for allocation, nodes in served.items() if nodes for kind in allocation.kept_kinds)),
    )
