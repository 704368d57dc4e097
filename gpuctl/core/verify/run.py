"""`gpuctl verify`: prove or diagnose every GPU node.

Requests: a constant handful (nodes, DaemonSets, device plugin pods, RuntimeClasses, namespace,
one pod list, one watch on the pods and one on their Warning events, one deletecollection) plus
one per GPU node (create the verification pod: nvidia-smi's answer comes back in its status), and
one log read per node with a problem to explain (its failed pod's, its device plugin's: see
plugin_logs.py).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuctl.core.verify import cluster_checks as cluster
from gpuctl.core.verify import dra
from gpuctl.core.verify import node_checks as checks
from gpuctl.core.verify.dra_run import DraRun
from gpuctl.core.verify.expectations import (
    all_patterns,
    expected_globs,
    expected_gpus,
    is_expected,
    is_glob,
    matches,
    missing_node,
)
from gpuctl.core.verify.model import (
    Check,
    GpuCounts,
    NodeResult,
    PodEvaluation,
    RunFacts,
    SharingSummary,
    VerifyOptions,
    VerifyResult,
    skipped,
)
from gpuctl.core.verify.operator_checks import OperatorView, operator_validation, read_operator
from gpuctl.core.verify.plugin_logs import PluginLogs
from gpuctl.core.verify.pod_judgement import SMI_CHECKS, evaluate
from gpuctl.core.verify.pod_manifest import (
    CONTAINER,
    NAMESPACE_LABELS,
    new_run_id,
    run_selector,
    verification_pod,
    verification_pod_name,
)
from gpuctl.core.verify.pod_run import PlannedPod, PodRun, merge_by_node
from gpuctl.core.verify.progress import PodProgress
from gpuctl.core.verify.sharing import SharingPlan, expected_seen, physical_checks, plan_for, sharing_check
from gpuctl.errors import GpuctlError
from gpuctl.kube.claims import ClaimAllocation
from gpuctl.kube.client import pooled_client
from gpuctl.kube.daemonsets import DaemonSetInfo, PluginPod, device_plugin_pods, list_gpu_daemonsets
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.kube.pods import PodBatch, PodOutcome, delete_namespace, ensure_namespace
from gpuctl.kube.runtime_classes import list_runtime_classes

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient
    from gpuctl.kube.raw import JsonDict

POD_CHECKS = ("pod.scheduled", "pod.image", *SMI_CHECKS)
NOT_READY_SKIP = "node not Ready (see node.ready)"
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
    dra: dra.DraFacts = field(default_factory=dra.DraFacts)
    plugin_checks: dict[str, Check] = field(default_factory=dict)
    evaluations: dict[str, PodEvaluation] = field(default_factory=dict)
    claims: dict[str, ClaimAllocation] = field(default_factory=dict)  # node name → its claim's allocation
    operator: OperatorView | None = None  # the GPU Operator's own validation, where it runs
    _sharing: list[tuple[str, SharingPlan]] | None = None
    _plans: dict[str, SharingPlan] = field(default_factory=dict)

    def through_dra(self, node: NodeInfo) -> bool:
        return self.dra.uses_dra(node)

    def plan(self, node: NodeInfo) -> SharingPlan:
        """The node's sharing plan, worked out once (every phase of a run asks for it)."""
        plan = self._plans.get(node.name)
        if plan is None:
            plan = self._plans[node.name] = plan_for(node)
        return plan

    def sharing_besides(self, name: str) -> list[SharingPlan]:
        """The first other GPU node's plan that shares its GPUs: all that gpu.sharing reads of
        the other nodes. Found once, not once per node (quadratic at thousands of nodes)."""
        if self._sharing is None:
            plans = ((node.name, self.plan(node)) for node in self.gpu_nodes)
            self._sharing = list(itertools.islice(((n, p) for n, p in plans if p.mode != "exclusive"), 2))
        return [plan for other, plan in self._sharing if other != name][:1]


def _select_gpu_nodes(
    nodes: list[NodeInfo], options: VerifyOptions, published: dict[str, object]
) -> tuple[list[NodeInfo], list[str]]:
    expectations = options.expectations
    selected = [n for n in nodes if n.is_gpu_node or n.name in published or is_expected(expectations, n.name)]
    names = [node.name for node in nodes]
    missing = [
        pattern for pattern in all_patterns(expectations) if not any(matches(pattern, name) for name in names)
    ]
    return sorted(selected, key=lambda node: node.name), missing


def _snapshot(api_client: ApiClient, options: VerifyOptions) -> ClusterSnapshot:
    nodes = list_nodes(api_client)
    daemonsets = list_gpu_daemonsets(api_client)
    dra_facts = dra.read_facts(api_client, daemonsets)
    gpu_nodes, missing = _select_gpu_nodes(nodes, options, dict(dra_facts.inventory.nodes))
    plugins = [ds for ds in daemonsets if ds.is_device_plugin]
    plugin_pods = device_plugin_pods(api_client, plugins) if gpu_nodes else {}
    runtime_classes = list_runtime_classes(api_client) if gpu_nodes or options.runtime_class else set()
    operator = read_operator(api_client, daemonsets, [node.name for node in gpu_nodes]) if gpu_nodes else None
    snapshot = ClusterSnapshot(nodes, gpu_nodes, missing, daemonsets, plugins, plugin_pods, runtime_classes)
    snapshot.dra, snapshot.operator = dra_facts, operator
    return snapshot


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


def _can_run_pod(node: NodeInfo, snapshot: ClusterSnapshot) -> str:
    """Why no verification pod can run on `node`, or "" when one can."""
    if not node.ready:
        return "node not Ready"
    if node.unschedulable:
        return "node cordoned"
    if snapshot.through_dra(node):
        return dra.why_no_pod(node, snapshot.dra)
    if snapshot.plan(node).advertised <= 0:
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
    dra_run: DraRun | None = None
    namespace_created = False
    try:
        targets = [node for node in snapshot.gpu_nodes if not _can_run_pod(node, snapshot)]
        pod_run: PodRun | None = None
        if options.run_pods and targets:
            namespace_created = ensure_namespace(api_client, options.namespace, NAMESPACE_LABELS)
            batch = PodBatch(
                api_client, options.namespace, run_selector(run_id), executor, options.concurrency
            )
            if any(snapshot.through_dra(node) for node in targets):
                dra_run = DraRun(api_client, snapshot.dra.inventory.version, options.namespace, run_id)
                dra_run.start()
            pods = [pod for node in targets for pod in _pods_for(node, run_id, options, snapshot, dra_run)]
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
            allocations = dra_run.finish() if dra_run is not None else {}
            snapshot.claims = {
                pod_run.node_by_pod[p].name: a for p, a in allocations.items() if p in pod_run.node_by_pod
            }
        if options.run_pods:
            plugin_logs.read_after_pods(snapshot.evaluations)
        snapshot.plugin_checks = plugin_logs.results()
    except BaseException:
        _clean_up(api_client, executor, (batch, dra_run), options, namespace_created=namespace_created)
        raise
    _clean_up(api_client, executor, (batch, dra_run), options, namespace_created=namespace_created)
    kept = tuple(sorted(batch.created_names)) if batch is not None and options.keep_pods else ()
    run = RunFacts(run_id, batch.created if batch else 0, time.monotonic() - started, kept)
    return _result(snapshot, options, run)


def _clean_up(
    api_client: ApiClient,
    executor: ThreadPoolExecutor,
    run: tuple[PodBatch | None, DraRun | None],
    options: VerifyOptions,
    *,
    namespace_created: bool,
) -> None:
    """Delete the pods (unless --keep-pods), the DRA claim template and claims, and the namespace
    this run created if it created no pod in it."""
    batch, dra_run = run
    if batch is not None:
        batch.stop.set()
    executor.shutdown(wait=True, cancel_futures=True)
    if batch is not None and not options.keep_pods:
        try:
            batch.delete_all()
        finally:
            if dra_run is not None:
                dra_run.clean_up()
    elif dra_run is not None:
        dra_run.finish()
    if namespace_created and (batch is None or batch.created == 0):
        # A courtesy to a user allowed to create namespaces (gpuctl's least-privilege role does not
        # need to: its render creates the namespace, docs/rbac.md), who may not be allowed to
        # delete them: a failed cleanup must not turn a run's verdict (or its error) into another.
        with contextlib.suppress(GpuctlError):
            delete_namespace(api_client, options.namespace)


def _pods_for(
    node: NodeInfo, run_id: str, options: VerifyOptions, snapshot: ClusterSnapshot, dra_run: DraRun | None
) -> list[PlannedPod]:
    """What the node's sharing allows: one pod with all its devices, or (MPS) one per GPU; on a
    DRA node one pod that claims all its GPUs."""
    if dra_run is not None and snapshot.through_dra(node):
        template = dra_run.template

        def claiming() -> JsonDict:
            return dra.claim_pod(verification_pod(node, 0, run_id, options), template)

        return [PlannedPod(verification_pod_name(node, run_id), node, claiming)]
    plan = snapshot.plan(node)
    build = functools.partial(verification_pod, node, plan.requests, run_id, options, mig=plan.mig)
    return [
        PlannedPod(verification_pod_name(node, run_id, part), node, functools.partial(build, part=part))
        for part in range(plan.pods)
    ]


def _judge(
    outcome: PodOutcome, node: NodeInfo, *, options: VerifyOptions, snapshot: ClusterSnapshot
) -> PodEvaluation:
    if snapshot.through_dra(node):
        return dra.judge(outcome, node, snapshot.dra, options.namespace, options.image)
    return evaluate(outcome, node, expected_seen(snapshot.plan(node)), options.namespace, options.image)


def _plugin_checks(node: NodeInfo, snapshot: ClusterSnapshot, expected: int | None) -> list[Check]:
    """GPU counts, plugin pod and log: the device plugin's, or the DRA driver's on a DRA node."""
    if snapshot.through_dra(node):
        return dra.node_checks(node, snapshot.dra, expected, snapshot.plugin_checks.get(node.name))
    plugin_pod = snapshot.plugin_pods.get(node.name)
    plugin_log = snapshot.plugin_checks.get(node.name) or checks.device_plugin_log(node, plugin_pod, None)
    return [
        checks.gpu_capacity(node, expected, plugin_log),
        checks.gpu_allocatable(node),
        checks.device_plugin_pod(node, plugin_pod, bool(snapshot.plugins)),
        plugin_log,
    ]


def _node_result(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> NodeResult:
    expected = expected_gpus(options.expectations, node.name)
    through_dra = snapshot.through_dra(node)
    plugin_and_gpus = _plugin_checks(node, snapshot, expected)
    if not node.ready:  # no DaemonSet pod lands on a NotReady node, so none of these can pass
        plugin_and_gpus = [skipped(c.id, NOT_READY_SKIP) if c.failed else c for c in plugin_and_gpus]
    read_only = [
        checks.node_ready(node),
        checks.node_schedulable(node),
        *plugin_and_gpus,
        checks.taint_toleration(node, list(snapshot.dra.plugins) if through_dra else snapshot.plugins),
        *([operator_validation(node.name, snapshot.operator)] if snapshot.operator else []),
    ]
    plan = snapshot.plan(node)
    others = snapshot.sharing_besides(node.name)
    evaluation = _pod_checks(node, snapshot, options)
    sharing = (sharing_check(node, plan, others), *physical_checks(plan, evaluation))
    counts = GpuCounts(expected, node.gpu_capacity, node.gpu_allocatable, evaluation.seen)
    if through_dra:
        published = snapshot.dra.published(node)
        ran = snapshot.evaluations.get(node.name)
        sharing = (dra.claim_check(node, snapshot.dra, snapshot.claims.get(node.name), ran),)
        counts = GpuCounts(
            expected, published.gpus or published.mig_devices, dra.claimable(published), evaluation.seen
        )
    physical = plan.physical if plan.physical is not None else (evaluation.seen if plan.mig else None)
    physical = counts.capacity if through_dra else physical
    summary = SharingSummary(plan.mode, plan.replicas, plan.mig_strategy, physical, plan.mig_devices)
    return NodeResult(
        node.name,
        counts,
        (*read_only, *sharing, *evaluation.checks),
        evaluation.product,
        evaluation.driver_version,
        summary,
        evaluation.pod_seconds,
        "dra" if through_dra else "device-plugin",
    )


def _pod_checks(node: NodeInfo, snapshot: ClusterSnapshot, options: VerifyOptions) -> PodEvaluation:
    if not options.run_pods:
        return PodEvaluation(tuple(skipped(check_id, "--no-pods") for check_id in POD_CHECKS))
    why_not = _can_run_pod(node, snapshot)
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
    dra_nodes = [node for node in snapshot.gpu_nodes if snapshot.through_dra(node)]
    plugin_nodes = [node for node in snapshot.gpu_nodes if not snapshot.through_dra(node)]
    cluster_checks = [
        cluster.gpu_nodes_present(snapshot.gpu_nodes, options.allow_empty),
        *expected_globs(snapshot.missing),
        cluster.device_plugin_present(snapshot.plugins, plugin_nodes),
        *dra.cluster_checks(snapshot.dra, dra_nodes),
        cluster.daemonset_tolerations(snapshot.daemonsets, snapshot.gpu_nodes),
        cluster.runtime_class(options, snapshot.plugins if plugin_nodes else [], snapshot.runtime_classes),
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
        snapshot.operator,
    )
