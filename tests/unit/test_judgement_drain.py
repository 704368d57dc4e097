"""Which pods a drain evicts, refuses and leaves (gpuctl.kube.drain), decided pod by pod on pods in
the shape the API server lists them, and the words a refused eviction is reported with: the 429
Status body the API server sends when a PodDisruptionBudget allows no disruption (its causes carry
the budget's own words, as pkg/registry/core/pod/storage/eviction.go in
https://github.com/kubernetes/kubernetes writes them). The drain itself, against the simulated API
server, is tests/cluster/test_drain.py; these take milliseconds each."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from gpuctl.core.verify.pod_manifest import pod_name, run_selector
from gpuctl.defaults import GPUCTL_NAMESPACE
from gpuctl.kube import drain
from gpuctl.kube.drain import DrainPlan, PodRef
from tests.polling import wait_until

RUN = "0a1b2c3d"
# a verification pod's name and labels as gpuctl.core.verify.pod_manifest gives them
PROOF = pod_name(RUN, "gpu-0")
LABELS = dict(pair.split("=", 1) for pair in run_selector(RUN).split(","))
VIOLATION = "Cannot evict pod as it would violate the pod's disruption budget."
NEEDS = "The disruption budget db needs 1 healthy pods and has 1 currently"


def pod(
    name: str,
    *,
    namespace: str = "default",
    owners: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    volumes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A pod as `list_namespaced_pod` serialises it (keys absent where the server leaves them out)."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "uid": f"uid-{name}"}
    if owners is not None:
        metadata["ownerReferences"] = owners
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    spec: dict[str, Any] = {"nodeName": "gpu-0", "containers": [{"name": "app", "image": "pause:3.10"}]}
    if volumes is not None:
        spec["volumes"] = volumes
    return {"metadata": metadata, "spec": spec, "status": {"phase": phase}}


def owner(kind: str, name: str, *, controller: bool | None = True) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": f"uid-{name}"}
    if controller is not None:
        ref["controller"] = controller
        ref["blockOwnerDeletion"] = True
    return ref


def decide(item: dict[str, Any]) -> tuple[str, str]:
    """What plan_drain decides for one pod: ("left"|"refused"|"evict", why)."""
    ref = drain._pod_ref(item)
    if why := drain._left_because(item, ref):
        return "left", why
    if why := drain._refused_because(item, ref):
        return "refused", why
    return "evict", ""


def test_the_owner_is_the_controller_reference_only() -> None:
    replica = pod("web-7d4f-abcde", owners=[owner("ReplicaSet", "web-7d4f")])
    assert drain._pod_ref(replica) == PodRef("default", "web-7d4f-abcde", "ReplicaSet/web-7d4f")
    assert str(drain._pod_ref(replica)) == "default/web-7d4f-abcde"
    # an owner that is not the controller (a garbage-collection link only) makes no controller
    linked = pod("linked", owners=[owner("ConfigMap", "cfg", controller=False)])
    assert drain._pod_ref(linked) == PodRef("default", "linked", "")
    unset = pod("unset", owners=[owner("ConfigMap", "cfg", controller=None)])
    assert drain._pod_ref(unset).owner == ""
    # the controller is found after a reference that is not one
    both = pod("both", owners=[owner("ConfigMap", "cfg", controller=False), owner("Job", "nightly")])
    assert drain._pod_ref(both).owner == "Job/nightly"
    assert drain._pod_ref(pod("bare")) == PodRef("default", "bare", "")
    assert drain._pod_ref(pod("empty", owners=[])).owner == ""


def test_a_pod_without_a_namespace_in_its_metadata_has_an_empty_one() -> None:
    item = pod("x")
    del item["metadata"]["namespace"]
    assert drain._pod_ref(item) == PodRef("", "x", "")


@pytest.mark.parametrize(
    ("item", "decision"),
    [
        (pod("web-1", owners=[owner("ReplicaSet", "web")]), ("evict", "")),
        (pod("done", owners=[owner("Job", "nightly")], phase="Succeeded"), ("left", "finished")),
        (pod("crashed", phase="Failed"), ("left", "finished")),
        (pod("starting", phase="Pending"), ("refused", "no controller")),
        (pod("static-gpu-0", annotations={"kubernetes.io/config.mirror": "0123"}), ("left", "mirror pod")),
        (pod("annotated", annotations={"other": "x"}), ("refused", "no controller")),
        (
            pod("plugin-x", namespace="kube-system", owners=[owner("DaemonSet", "nvidia-device-plugin")]),
            ("left", "DaemonSet pod"),
        ),
        (pod("agent", owners=[owner("StatefulSet", "DaemonSet")]), ("evict", "")),
        (pod("bare"), ("refused", "no controller")),
        (
            pod("cache-1", owners=[owner("ReplicaSet", "cache")], volumes=[{"name": "s", "emptyDir": {}}]),
            ("refused", "uses emptyDir"),
        ),
        (
            pod(
                "cache-2",
                owners=[owner("ReplicaSet", "cache")],
                volumes=[{"name": "cfg", "configMap": {"name": "c"}}, {"name": "s", "emptyDir": {}}],
            ),
            ("refused", "uses emptyDir"),
        ),
        (
            pod(
                "conf",
                owners=[owner("ReplicaSet", "c")],
                volumes=[{"name": "cfg", "configMap": {"name": "c"}}],
            ),
            ("evict", ""),
        ),
        # no controller and emptyDir: the controller is named first
        (pod("scratch", volumes=[{"name": "s", "emptyDir": {}}]), ("refused", "no controller")),
        # finished before mirror, mirror before DaemonSet
        (
            pod("old", phase="Succeeded", annotations={"kubernetes.io/config.mirror": "1"}),
            ("left", "finished"),
        ),
        (
            pod(
                "ds-mirror",
                owners=[owner("DaemonSet", "d")],
                annotations={"kubernetes.io/config.mirror": "1"},
            ),
            ("left", "mirror pod"),
        ),
    ],
    ids=lambda value: value[0] if isinstance(value, tuple) else value["metadata"]["name"],
)
def test_each_pod_is_evicted_refused_or_left(item: dict[str, Any], decision: tuple[str, str]) -> None:
    assert decide(item) == decision


def test_annotations_and_volumes_the_server_sends_as_null() -> None:
    item = pod("nulls", owners=[owner("ReplicaSet", "r")])
    item["metadata"]["annotations"] = None
    item["spec"]["volumes"] = None
    assert decide(item) == ("evict", "")


def test_gpuctls_own_verification_pod_is_left_and_only_it() -> None:
    labels = LABELS
    assert decide(pod(PROOF, namespace=GPUCTL_NAMESPACE, labels=labels)) == ("left", "gpuctl's own pod")
    extra = {**labels, "team": "ml"}
    assert decide(pod(PROOF, namespace=GPUCTL_NAMESPACE, labels=extra)) == ("left", "gpuctl's own pod")
    # each of the four marks missing: drained like any other pod
    assert decide(pod(PROOF, labels=labels)) == ("refused", "no controller")
    assert decide(pod("copycat", namespace=GPUCTL_NAMESPACE, labels=labels)) == ("refused", "no controller")
    owned = pod(PROOF, namespace=GPUCTL_NAMESPACE, labels=labels, owners=[owner("Job", "j")])
    assert decide(owned) == ("evict", "")
    for key in ("app.kubernetes.io/managed-by", "app.kubernetes.io/component"):
        less = {k: v for k, v in labels.items() if k != key}
        assert decide(pod(PROOF, namespace=GPUCTL_NAMESPACE, labels=less)) == ("refused", "no controller")
        other = {**labels, key: "someone-else"}
        assert decide(pod(PROOF, namespace=GPUCTL_NAMESPACE, labels=other)) == ("refused", "no controller")
    assert decide(pod(PROOF, namespace=GPUCTL_NAMESPACE)) == ("refused", "no controller")


def too_many_requests(body: str | None) -> ApiException:
    error = ApiException(status=429, reason="Too Many Requests")
    error.body = body
    return error


def status_body(message: str, causes: list[dict[str, str]] | None) -> str:
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "TooManyRequests",
        "code": 429,
    }
    if causes is not None:
        status["details"] = {"causes": causes}
    return json.dumps(status)


def test_a_refused_eviction_is_reported_in_the_budgets_own_words() -> None:
    one = status_body(VIOLATION, [{"reason": "DisruptionBudget", "message": NEEDS}])
    assert drain._budget_cause(too_many_requests(one)) == NEEDS
    other = "The disruption budget web needs 2 healthy pods and has 2 currently"
    two = status_body(
        VIOLATION,
        [
            {"reason": "DisruptionBudget", "message": NEEDS},
            {"reason": "DisruptionBudget"},
            {"reason": "DisruptionBudget", "message": other},
        ],
    )
    assert drain._budget_cause(too_many_requests(two)) == f"{NEEDS}; {other}"


def test_a_refusal_without_causes_gives_the_servers_message_else_a_fixed_line() -> None:
    processing = "The disruption budget db is still being processed by the server."
    assert drain._budget_cause(too_many_requests(status_body(processing, None))) == processing
    assert drain._budget_cause(too_many_requests(status_body(processing, []))) == processing
    no_words = status_body("", [{"reason": "DisruptionBudget"}])
    fixed = "the API server refused the eviction (429)"
    assert drain._budget_cause(too_many_requests(no_words)) == fixed
    assert drain._budget_cause(too_many_requests("<html>Too Many Requests</html>")) == fixed
    assert drain._budget_cause(too_many_requests(None)) == fixed
    assert drain._budget_cause(too_many_requests("")) == fixed
    assert drain._budget_cause(object()) == fixed
    details_null = json.dumps({"kind": "Status", "message": processing, "details": {"causes": None}})
    assert drain._budget_cause(too_many_requests(details_null)) == processing


def test_the_refusal_names_every_refused_pod_with_its_reason_and_the_flag() -> None:
    plan = DrainPlan(
        "gpu-0",
        evict=(PodRef("default", "web-1", "ReplicaSet/web"),),
        refused=(
            (PodRef("default", "bare", ""), "no controller"),
            (PodRef("ml", "cache-1", "ReplicaSet/cache"), "uses emptyDir"),
        ),
        left=(),
    )
    assert drain._refusal_error(plan) == (
        "drain gpu-0: refusing to evict default/bare (no controller), ml/cache-1 (uses emptyDir); "
        "pass --force-drain to evict them anyway"
    )


def test_a_refusal_keeps_the_budgets_words() -> None:
    refusal = drain._Refusal(NEEDS)
    assert (refusal.cause, str(refusal)) == (NEEDS, NEEDS)


def test_the_wait_between_refused_evictions_lasts_its_time_unless_stopped() -> None:
    started = time.monotonic()
    drain._sleep(0.3, lambda: False)
    assert 0.3 <= time.monotonic() - started < 0.6
    started = time.monotonic()
    drain._sleep(5.0, lambda: True)
    assert time.monotonic() - started < 0.05
    looks: list[float] = []

    def stop_on_third_look() -> bool:
        looks.append(time.monotonic())
        return len(looks) >= 3

    started = time.monotonic()
    drain._sleep(5.0, stop_on_third_look)
    # it looks at least every 0.1 s: the third look comes after two naps
    assert 0.15 <= time.monotonic() - started < 0.5
    assert len(looks) == 3


# -- against the simulated API server (started in-process, a fraction of a second) ---------------
SCENARIO = {"podStartSeconds": 0.05, "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 1}]}


def core_of(sim: Any) -> Any:
    from kubernetes.client import CoreV1Api

    return CoreV1Api(sim(SCENARIO).api_client())


def bare_pod(core: Any, name: str, node: str = "gpu-0", **metadata: Any) -> None:
    container = {"name": "app", "image": "registry.k8s.io/pause:3.10"}
    body = {"metadata": {"name": name, **metadata}, "spec": {"nodeName": node, "containers": [container]}}
    core.create_namespaced_pod("default", body)


def test_the_plan_lists_the_nodes_pods_in_name_order(sim: Any) -> None:
    core = core_of(sim)
    for name in ("zeta", "alpha", "mid"):
        bare_pod(core, name)
    bare_pod(core, "elsewhere", node="gpu-1")
    bare_pod(core, "static-gpu-0", annotations={"kubernetes.io/config.mirror": "0123"})
    plan = drain.plan_drain(core, "gpu-0", force=False)
    assert (plan.node, plan.evict) == ("gpu-0", ())
    assert [(str(ref), why) for ref, why in plan.refused] == [
        ("default/alpha", "no controller"),
        ("default/mid", "no controller"),
        ("default/zeta", "no controller"),
    ]
    assert [(str(ref), why) for ref, why in plan.left] == [("default/static-gpu-0", "mirror pod")]
    forced = drain.plan_drain(core, "gpu-0", force=True)
    assert [str(ref) for ref in forced.evict] == ["default/alpha", "default/mid", "default/zeta"]
    assert (forced.refused, forced.left) == ((), plan.left)


def test_a_refused_drain_cordons_and_evicts_nothing(sim: Any) -> None:
    core = core_of(sim)
    bare_pod(core, "bare")
    refused = drain.drain(core, "gpu-0", force=False, timeout_s=10)
    assert refused.node == "gpu-0"
    assert refused.error == (
        "drain gpu-0: refusing to evict default/bare (no controller); pass --force-drain to evict them anyway"
    )
    assert refused.evicted == ()
    assert 0 <= refused.seconds < 5
    assert core.read_node("gpu-0").spec.unschedulable is True
    assert core.read_namespaced_pod("bare", "default").metadata.deletion_timestamp is None
    assert drain.cordon(core, "gpu-0") is False
    drain.uncordon(core, "gpu-0")
    assert not core.read_node("gpu-0").spec.unschedulable
    assert drain.cordon(core, "gpu-0") is True


def test_a_forced_drain_evicts_in_name_order_and_waits_until_they_are_gone(sim: Any) -> None:
    core = core_of(sim)
    for name in ("b-pod", "a-pod"):
        bare_pod(core, name)
    bare_pod(core, "other", node="gpu-1")
    done = drain.drain(core, "gpu-0", force=True, timeout_s=10)
    assert (done.error, [str(pod) for pod in done.evicted]) == ("", ["default/a-pod", "default/b-pod"])
    assert core.list_namespaced_pod("default", field_selector="spec.nodeName=gpu-0").items == []
    assert [pod.metadata.name for pod in core.list_namespaced_pod("default").items] == ["other"]


def test_a_drain_stopped_before_its_first_eviction_says_so(sim: Any) -> None:
    core = core_of(sim)
    bare_pod(core, "bare")
    stopped = drain.drain(core, "gpu-0", force=True, timeout_s=10, should_stop=lambda: True)
    assert (stopped.error, stopped.evicted) == ("drain gpu-0: stopped before evicting pod default/bare", ())
    assert core.read_namespaced_pod("bare", "default").metadata.deletion_timestamp is None


def test_the_wait_names_the_pods_still_on_the_node_at_the_deadline(sim: Any) -> None:
    core = core_of(sim)
    for name in ("slow-b", "slow-a", "kept"):
        bare_pod(core, name)
    waited = [PodRef("default", "slow-b", ""), PodRef("default", "slow-a", ""), PodRef("default", "gone", "")]
    started = time.monotonic()
    assert drain._wait_gone(core, "gpu-0", waited, started) == (
        "drain gpu-0: pod default/slow-a, default/slow-b still terminating when the drain timed out"
    )
    assert time.monotonic() - started < 1.0
    # on another node, or gone: nothing to wait for
    assert drain._wait_gone(core, "gpu-1", waited, started) == ""
    assert drain._wait_gone(core, "gpu-0", [PodRef("default", "gone", "")], started) == ""


def guarded_pod(sim: Any) -> Any:
    """A pod a budget of minAvailable 1 guards alone: every eviction of it is answered 429."""
    from kubernetes.client import CoreV1Api, PolicyV1Api

    api_client = sim(SCENARIO).api_client()
    core, policy = CoreV1Api(api_client), PolicyV1Api(api_client)
    bare_pod(core, "db-0", labels={"app": "db"})
    budget: Any = {
        "metadata": {"name": "db"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}},
    }
    policy.create_namespaced_pod_disruption_budget("default", budget)

    def healthy() -> int:
        status = policy.read_namespaced_pod_disruption_budget("db", "default").status
        return int(status.current_healthy or 0) if status else 0

    wait_until(lambda: healthy() == 1, "budget counted")
    return core


def test_an_eviction_the_budget_refuses_is_retried_until_the_deadline(sim: Any) -> None:
    core = guarded_pod(sim)
    result = drain.drain(core, "gpu-0", force=True, timeout_s=1.2)
    assert result.error == (
        "drain gpu-0: pod default/db-0 could not be evicted in time: "
        "The disruption budget db needs 1 healthy pods and has 1 currently"
    )
    assert result.evicted == ()
    assert 1.2 <= result.seconds < 3
    assert core.read_namespaced_pod("db-0", "default").metadata.deletion_timestamp is None


def test_a_stop_while_the_budget_refuses_ends_the_wait(sim: Any) -> None:
    core = guarded_pod(sim)
    looks: list[int] = []

    def stop_after_the_first_eviction() -> bool:
        looks.append(1)
        return len(looks) > 1  # the first look is before the eviction

    result = drain.drain(core, "gpu-0", force=True, timeout_s=30, should_stop=stop_after_the_first_eviction)
    assert result.error == (
        "drain gpu-0: stopped while pod default/db-0 waited for its budget "
        "(The disruption budget db needs 1 healthy pods and has 1 currently)"
    )
    assert result.seconds < 15  # well before its 30 s deadline


def test_a_pod_already_gone_counts_as_evicted(sim: Any) -> None:
    core = core_of(sim)
    drain._evict_once(core, PodRef("default", "never-there", ""), 5.0)  # the API's 404 is no error


def test_cordoning_a_node_the_cluster_lacks_names_it_with_a_hint(sim: Any) -> None:
    from gpuctl.errors import UnreachableError

    core = core_of(sim)
    with pytest.raises(UnreachableError) as raised:
        drain.cordon(core, "gpu-9")
    assert str(raised.value) == "node gpu-9 not found"
    assert raised.value.hint == "`kubectl get nodes` lists the cluster's nodes"
