"""`gpuctl verify`: prove or diagnose every GPU node.

Requests: a constant handful (nodes, DaemonSets, device plugin pods, RuntimeClasses, namespace,
one pod list, one watch on the pods and one on their Warning events, one deletecollection) plus
three per GPU node (create the verification pod, read its log, read the device plugin's log).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuctl.core.verify import cluster_checks as cluster
from gpuctl.core.verify import node_checks as checks
from gpuctl.core.verify.expectations import all_patterns, expected_gpus, is_expected, is_glob, matches
from gpuctl.core.verify.model import (
    Check,
    GpuCounts,
    NodeResult,
    PodEvaluation,
    RunFacts,
    SharingSummary,
    VerifyOptions,
    VerifyResult,
    failed,
    passed,
    skipped,
)
from gpuctl.core.verify.pod_judgement import SMI_CHECKS, evaluate
from gpuctl.core.verify.pod_manifest import (
    CONTAINER,
    NAMESPACE_LABELS,
    new_run_id,
    run_selector,
    verification_pod,
)
from gpuctl.core.verify.pod_run import PodRun
from gpuctl.core.verify.progress import PodProgress
from gpuctl.core.verify.sharing import SharingPlan, expected_seen, plan_for, sharing_check
from gpuctl.errors import GpuctlError
from gpuctl.kube.client import pooled_client
from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod, device_plugin_pods, list_gpu_daemonsets
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.kube.pods import PodBatch, PodOutcome, delete_namespace, ensure_namespace, read_pod_log
from gpuctl.kube.runtime_classes import list_runtime_classes

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.raw import JsonDict

POD_CHECKS = ("pod.scheduled", "pod.image", *SMI_CHECKS)
NOT_READY_SKIP = "node not Ready (see node.ready)"
PLUGIN_LOG_TAIL_LINES = 200
PLUGIN_START_WAIT_S = 30.0
PLUGIN_START_POLL_S = 1.0


@dataclass
class ClusterSnapshot:
    """What the read-only phase learnt about the cluster, and later what the pods proved."""

    nodes: list[NodeInfo]
    gpu_nodes: list[NodeInfo]
    missing: list[str]
    daemonsets: list[DaemonSetInfo]
    plugins: list[DaemonSetInfo]
    plugin_pods: dict[str, PluginPod]
    runtime_classes: set[str]
    plugin_checks: dict[str, Check] = field(default_factory=dict)
    evaluations: dict[str, PodEvaluation] = field(default_factory=dict)
    _sharing: list[tuple[str, SharingPlan]] | None = None

    def sharing_besides(self, name: str) -> list[SharingPlan]:
        """The first other GPU node's plan that shares its GPUs: all that gpu.sharing reads of
        the other nodes. Found once, not once per node (quadratic at thousands of nodes)."""
        if self._sharing is None:
            plans = ((node.name, plan_for(node)) for node in self.gpu_nodes)
            self._sharing = list(itertools.islice(((n, p) for n, p in plans if p.mode != "exclusive"), 2))
        return [plan for other, plan in self._sharing if other != name][:1]


def _select_gpu_nodes(nodes: list[NodeInfo], options: VerifyOptions) -> tuple[list[NodeInfo], list[str]]:
    expectations = options.expectations
    selected = [node for node in nodes if node.is_gpu_node or is_expected(expectations, node.name)]
    names = [node.name for node in nodes]
    missing = [
        pattern for pattern in all_patterns(expectations) if not any(matches(pattern, name) for name in names)
    ]
    return sorted(selected, key=lambda node: node.name), missing


def _snapshot(api_client: ApiClient, options: VerifyOptions) -> ClusterSnapshot:
    nodes = list_nodes(api_client)
    gpu_nodes, missing = _select_gpu_nodes(nodes, options)
    daemonsets = list_gpu_daemonsets(api_client)
    plugins = [ds for ds in daemonsets if ds.is_device_plugin]
    plugin_pods = device_plugin_pods(api_client, plugins) if gpu_nodes else {}
    runtime_classes = list_runtime_classes(api_client) if gpu_nodes or options.runtime_class else set()
    return ClusterSnapshot(nodes, gpu_nodes, missing, daemonsets, plugins, plugin_pods, runtime_classes)


def _plugin_starting(snapshot: ClusterSnapshot) -> list[str]:
    """GPU nodes whose device plugin pod is still starting: they advertise nothing yet, and are
    not broken for that (a cluster verified right after the plugin was deployed)."""
    starting = []
    rolling_out = any(plugin.rolling_out for plugin in snapshot.plugins)
    for node in snapshot.gpu_nodes:
        pod = snapshot.plugin_pods.get(node.name)
        if pod is None:
            if rolling_out:  # its pod is not created yet
                starting.append(node.name)
            continue
        if pod.ready or pod.restarts:
            continue
        if pod.phase == "Pending" or pod.waiting_reason in checks.STARTING:
            starting.append(node.name)
    return starting


def _settled_snapshot(api_client: ApiClient, options: VerifyOptions, started: float) -> ClusterSnapshot:
    """The read-only snapshot, re-read while device plugin pods are starting (at most
    PLUGIN_START_WAIT_S, within --timeout)."""
    snapshot = _snapshot(api_client, options)
    deadline = started + min(PLUGIN_START_WAIT_S, options.timeout_s / 2)
    while _plugin_starting(snapshot) and time.monotonic() < deadline:
        time.sleep(PLUGIN_START_POLL_S)
        snapshot = _snapshot(api_client, options)
    return snapshot


def _can_run_pod(node: NodeInfo) -> str:
    """Why no verification pod can run on `node`, or "" when one can."""
    if not node.ready:
        return "node not Ready"
    if node.unschedulable:
        return "node cordoned"
    if plan_for(node).advertised <= 0:
        return "no allocatable GPU to request"
    return ""


def verify(
    api_client: ApiClient, options: VerifyOptions, progress: PodProgress | None = None
) -> VerifyResult:
    """Run every check; create, follow and always delete the verification pods (counted in
    `progress` as they go, for a live display)."""
    started = time.monotonic()
    api_client = pooled_client(api_client, options.concurrency)
    snapshot = _settled_snapshot(api_client, options, started)
    run_id = new_run_id()
    executor = ThreadPoolExecutor(max_workers=options.concurrency, thread_name_prefix="gpuctl-verify")
    batch: PodBatch | None = None
    namespace_created = False
    try:
        targets = [node for node in snapshot.gpu_nodes if not _can_run_pod(node)]
        pod_run: PodRun | None = None
        if options.run_pods and targets:
            namespace_created = ensure_namespace(api_client, options.namespace, NAMESPACE_LABELS)
            batch = PodBatch(api_client, options.namespace, run_selector(run_id), executor)
            pods = [pod for node in targets for pod in _pods_for(node, run_id, options)]
            if progress is not None:
                progress.planned(nodes=len(targets), pods=len(pods), timeout_s=options.timeout_s)
            pod_run = PodRun(batch, pods, CONTAINER, functools.partial(_judge, options=options), progress)
            # --timeout is the wait for the pods: listing a large cluster first does not eat it.
            started_pods = time.monotonic()
            pod_run.start()
        log_checks = _plugin_log_checks(api_client, snapshot.gpu_nodes, snapshot.plugin_pods, executor)
        if pod_run is not None:
            by_pod = pod_run.finish_by_pod(started_pods + options.timeout_s)
            snapshot.evaluations = _merge_by_node(by_pod, pod_run.node_by_pod)
        snapshot.plugin_checks = {node: future.result() for node, future in log_checks.items()}
    except BaseException:
        _clean_up(api_client, executor, batch, options, namespace_created=namespace_created)
        raise
    _clean_up(api_client, executor, batch, options, namespace_created=namespace_created)
    kept = tuple(sorted(batch.created_names)) if batch is not None and options.keep_pods else ()
    run = RunFacts(run_id, batch.created if batch else 0, time.monotonic() - started, kept)
    return _result(snapshot, options, run)


def _clean_up(
    api_client: ApiClient,
    executor: ThreadPoolExecutor,
    batch: PodBatch | None,
    options: VerifyOptions,
    *,
    namespace_created: bool,
) -> None:
    """Delete the pods (unless --keep-pods), and the namespace this run created if it created no
    pod in it."""
    if batch is not None:
        batch.stop.set()
    executor.shutdown(wait=True, cancel_futures=True)
    if batch is not None and not options.keep_pods:
        batch.delete_all()
    if namespace_created and (batch is None or batch.created == 0):
        # A courtesy: gpuctl's least-privilege role (docs/rbac.md) may create namespaces but not
        # delete them, and a failed cleanup must not turn a run's verdict (or its error) into another.
        with contextlib.suppress(GpuctlError):
            delete_namespace(api_client, options.namespace)


def _pods_for(node: NodeInfo, run_id: str, options: VerifyOptions) -> list[tuple[JsonDict, NodeInfo]]:
    """What the node's sharing allows: one pod with all its devices, or (MPS) one per GPU."""
    plan = plan_for(node)
    return [
        (verification_pod(node, plan.requests, run_id, options, part=part, mig=plan.mig), node)
        for part in range(plan.pods)
    ]


def _merge_by_node(by_pod: dict[str, PodEvaluation], nodes: dict[str, NodeInfo]) -> dict[str, PodEvaluation]:
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
        merged[node] = PodEvaluation(first.checks, seen, first.product, first.driver_version, uuids, mig)
    return merged


def _judge(outcome: PodOutcome, node: NodeInfo, *, options: VerifyOptions) -> PodEvaluation:
    return evaluate(outcome, node, expected_seen(plan_for(node)), options.namespace, options.image)


def _plugin_log_checks(
    api_client: ApiClient,
    nodes: list[NodeInfo],
    plugin_pods: dict[str, PluginPod],
    executor: ThreadPoolExecutor,
) -> dict[str, Future[Check]]:
    """node name → future device-plugin.log check (one log read per node with a plugin pod)."""

    def read(node: NodeInfo, pod: PluginPod) -> Check:
        log = read_pod_log(api_client, pod.namespace, pod.name, pod.container, PLUGIN_LOG_TAIL_LINES)
        # A pod that never started has no log; device-plugin.pod says why.
        return checks.device_plugin_log(node, pod, log if isinstance(log, str) else "")

    return {
        node.name: executor.submit(read, node, plugin_pods[node.name])
        for node in nodes
        if node.name in plugin_pods
    }


def _node_result(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> NodeResult:
    expected = expected_gpus(options.expectations, node.name)
    plugin_pod = snapshot.plugin_pods.get(node.name)
    plugin_log = snapshot.plugin_checks.get(node.name) or checks.device_plugin_log(node, plugin_pod, None)
    plugin_and_gpus = [
        checks.gpu_capacity(node, expected, plugin_log),
        checks.gpu_allocatable(node),
        checks.device_plugin_pod(node, plugin_pod, bool(snapshot.plugins)),
        plugin_log,
    ]
    if not node.ready:  # no DaemonSet pod lands on a NotReady node, so none of these can pass
        plugin_and_gpus = [skipped(c.id, NOT_READY_SKIP) if c.failed else c for c in plugin_and_gpus]
    read_only = [
        checks.node_ready(node),
        checks.node_schedulable(node),
        *plugin_and_gpus,
        checks.taint_toleration(node, snapshot.plugins),
    ]
    plan = plan_for(node)
    others = snapshot.sharing_besides(node.name)
    evaluation = _pod_checks(node, snapshot, options)
    sharing = (sharing_check(node, plan, others), *_physical_checks(plan, evaluation))
    counts = GpuCounts(expected, node.gpu_capacity, node.gpu_allocatable, evaluation.seen)
    physical = plan.physical if plan.physical is not None else (evaluation.seen if plan.mig else None)
    summary = SharingSummary(plan.mode, plan.replicas, plan.mig_strategy, physical, plan.mig_devices)
    return NodeResult(
        node.name,
        counts,
        (*read_only, *sharing, *evaluation.checks),
        evaluation.product,
        evaluation.driver_version,
        summary,
    )


def _physical_checks(plan: SharingPlan, evaluation: PodEvaluation) -> list[Check]:
    """Shared or MIG nodes: every physical GPU (or MIG device) was reached from a pod."""
    if plan.mode == "exclusive" and not plan.mig:
        return []
    if not evaluation.uuids:
        return [skipped("gpu.physical", "no verification pod output")]
    if plan.mig:
        wanted = sum(count for _, count in plan.requests)
        if evaluation.mig_devices != wanted:
            return [
                failed(
                    "gpu.physical",
                    f"{evaluation.mig_devices} MIG device(s) seen, {wanted} requested",
                    "`nvidia-smi -L` on the node; the plugin advertises MIG devices the pod did not get",
                )
            ]
        return [passed("gpu.physical", f"{wanted} MIG device(s) seen on {len(evaluation.uuids)} GPU(s)")]
    if len(evaluation.uuids) != plan.physical:
        return [
            failed(
                "gpu.physical",
                f"{len(evaluation.uuids)} of {plan.physical} physical GPU(s) reached",
                "the plugin's replicas do not cover every GPU: check its log and the sharing config",
            )
        ]
    return [
        passed("gpu.physical", f"all {plan.physical} physical GPU(s) reached ({plan.replicas} replicas each)")
    ]


def _pod_checks(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> PodEvaluation:
    if not options.run_pods:
        return PodEvaluation(tuple(skipped(check_id, "--no-pods") for check_id in POD_CHECKS))
    why_not = _can_run_pod(node)
    if why_not:
        return PodEvaluation(tuple(skipped(check_id, why_not) for check_id in POD_CHECKS))
    evaluation = snapshot.evaluations.get(node.name)
    if evaluation is None:
        return PodEvaluation(tuple(skipped(check_id, "no verification pod") for check_id in POD_CHECKS))
    return evaluation


def _missing_node(pattern: str, options: VerifyOptions) -> NodeResult:
    check = failed(
        "node.exists",
        f"expected node {pattern} is not in the cluster",
        "`kubectl get nodes` — is the node joined, and is the name in --expect-nodes/--expect-gpus right?",
    )
    counts = GpuCounts(expected_gpus(options.expectations, pattern), 0, 0, None)
    return NodeResult(pattern, counts, (check,))


def _expected_globs(missing: list[str]) -> list[Check]:
    globs = [pattern for pattern in missing if is_glob(pattern)]
    if not globs:
        return []
    return [
        failed(
            "cluster.expected-nodes",
            f"no node matches {', '.join(globs)}",
            "`kubectl get nodes` and check the globs passed to --expect-nodes/--expect-gpus",
        )
    ]


def _result(snapshot: ClusterSnapshot, options: VerifyOptions, run: RunFacts) -> VerifyResult:
    nodes = [_node_result(node, snapshot, options) for node in snapshot.gpu_nodes]
    nodes += [_missing_node(p, options) for p in snapshot.missing if not is_glob(p)]
    labels = {node.name: node.driver_version for node in snapshot.gpu_nodes}
    cluster_checks = [
        cluster.gpu_nodes_present(snapshot.gpu_nodes, options.allow_empty),
        *_expected_globs(snapshot.missing),
        cluster.device_plugin_present(snapshot.plugins, snapshot.gpu_nodes),
        cluster.daemonset_tolerations(snapshot.daemonsets, snapshot.gpu_nodes),
        cluster.runtime_class(options, snapshot.plugins, snapshot.runtime_classes),
        cluster.driver_drift(nodes, labels),
    ]
    return VerifyResult(
        tuple(nodes),
        tuple(cluster_checks),
        run.run_id,
        options.namespace,
        run.pods_created,
        run.duration_s,
        run.kept_pods,
    )
