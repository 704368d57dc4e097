"""gpuctl.kube.drain against the simulated cluster over HTTP: which pods a drain evicts, refuses and
leaves; --force-drain; a budget that never allows the eviction ends in a timeout naming the pod and
its budget; two nodes drained one after the other under a budget of minAvailable 1 across both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from gpuctl.defaults import GPUCTL_NAMESPACE
from gpuctl.kube.drain import PodRef, cordon, drain, plan_drain, uncordon
from tests.conftest import SimCluster
from tests.polling import wait_until

NAMESPACE = "default"
# a verification pod as gpuctl creates it (gpuctl.core.verify.pod_manifest)
PROOF = "gpuctl-verify-0a1b2c3d-gpu-0"
VERIFICATION = {
    "app.kubernetes.io/managed-by": "gpuctl",
    "app.kubernetes.io/component": "verify",
    "gpuctl.io/verify-run": "0a1b2c3d",
}
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 1}],
}


class Cluster:
    """The typed clients of one simulated cluster, and the objects a test puts in it."""

    def __init__(self, sim_cluster: SimCluster) -> None:
        from kubernetes.client import AppsV1Api, CoreV1Api, PolicyV1Api

        api_client = sim_cluster.api_client()
        self.core, self.apps, self.policy = (
            CoreV1Api(api_client),
            AppsV1Api(api_client),
            PolicyV1Api(api_client),
        )

    def deployment(self, name: str, replicas: int, node: str = "", **pod_spec: Any) -> None:
        spec: dict[str, Any] = {
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}],
            **pod_spec,
        }
        if node:
            spec["nodeSelector"] = {"kubernetes.io/hostname": node}
        body = {
            "metadata": {"name": name},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}}, "spec": spec},
            },
        }
        self.apps.create_namespaced_deployment(NAMESPACE, body)

    def pod(
        self,
        name: str,
        node: str,
        *,
        labels: dict[str, str] | None = None,
        namespace: str = NAMESPACE,
        **extra: Any,
    ) -> None:
        container = {"name": "app", "image": "registry.k8s.io/pause:3.10", **extra.pop("container", {})}
        metadata = {"name": name, "labels": labels or {}, "annotations": extra.pop("annotations", {})}
        body = {"metadata": metadata, "spec": {"nodeName": node, "containers": [container], **extra}}
        self.core.create_namespaced_pod(namespace, body)

    def budget(self, name: str, app: str, min_available: int) -> None:
        body = {
            "metadata": {"name": name},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": app}}},
        }
        self.policy.create_namespaced_pod_disruption_budget(NAMESPACE, body)

    def running(self, app: str) -> list[Any]:
        pods = self.core.list_namespaced_pod(NAMESPACE, label_selector=f"app={app}").items
        return [p for p in pods if p.status.phase == "Running" and p.metadata.deletion_timestamp is None]

    def phase(self, name: str) -> str:
        return str(self.core.read_namespaced_pod(name, NAMESPACE).status.phase)

    def nodes_of(self, app: str) -> list[str]:
        return sorted(pod.spec.node_name for pod in self.running(app))

    def healthy(self, budget: str) -> int:
        status = self.policy.read_namespaced_pod_disruption_budget(budget, NAMESPACE).status
        return int(status.current_healthy) if status else 0


@pytest.fixture
def cluster(sim: Callable[..., SimCluster]) -> Cluster:
    return Cluster(sim(SCENARIO))


def ref(name: str, owner: str = "") -> PodRef:
    return PodRef(NAMESPACE, name, owner)


def test_plan_sorts_pods_into_evict_refuse_and_leave(cluster: Cluster) -> None:
    cluster.deployment("web", 1, node="gpu-0")
    cluster.deployment("cache", 1, node="gpu-0", volumes=[{"name": "scratch", "emptyDir": {}}])
    cluster.pod("bare", "gpu-0")
    cluster.core.create_namespace({"metadata": {"name": GPUCTL_NAMESPACE}})
    cluster.pod(PROOF, "gpu-0", labels=VERIFICATION, namespace=GPUCTL_NAMESPACE)
    cluster.pod("static", "gpu-0", annotations={"kubernetes.io/config.mirror": "0123"})
    cluster.pod("job", "gpu-0", restartPolicy="Never", container={"command": ["true"]})
    wait_until(lambda: cluster.running("web") and cluster.running("cache"), "deployments running")
    wait_until(lambda: cluster.phase("job") == "Succeeded", "job finished")

    plan = plan_drain(cluster.core, "gpu-0", force=False)
    (web,) = cluster.running("web")
    (cache,) = cluster.running("cache")
    assert plan.evict == (
        PodRef(NAMESPACE, web.metadata.name, f"ReplicaSet/{web.metadata.owner_references[0].name}"),
    )
    assert [(pod.name, why) for pod, why in plan.refused] == [
        ("bare", "no controller"),
        (cache.metadata.name, "uses emptyDir"),
    ]
    left = {pod.owner or pod.name: why for pod, why in plan.left}
    assert left == {
        "DaemonSet/nvidia-device-plugin-daemonset": "DaemonSet pod",
        PROOF: "gpuctl's own pod",
        "static": "mirror pod",
        "job": "finished",
    }
    forced = plan_drain(cluster.core, "gpu-0", force=True)
    assert {pod.name for pod in forced.evict} == {web.metadata.name, cache.metadata.name, "bare"}
    assert forced.refused == ()


@pytest.mark.parametrize(
    ("name", "namespace"),
    [
        ("copycat", NAMESPACE),  # gpuctl's labels on a user's pod
        (PROOF, NAMESPACE),  # and its name scheme too, in another namespace
        ("copycat", GPUCTL_NAMESPACE),  # its labels in its namespace, another name
    ],
)
def test_a_pod_that_copies_gpuctls_labels_is_drained_like_any_other(
    cluster: Cluster, name: str, namespace: str
) -> None:
    """A label is no proof: only a pod where and as gpuctl creates its own is left on the node."""
    if namespace != NAMESPACE:
        cluster.core.create_namespace({"metadata": {"name": namespace}})
    cluster.pod(name, "gpu-0", labels=VERIFICATION, namespace=namespace)

    assert plan_drain(cluster.core, "gpu-0", force=False).refused == (
        (PodRef(namespace, name, ""), "no controller"),
    )
    done = drain(cluster.core, "gpu-0", force=True, timeout_s=10)
    assert (done.error, done.evicted) == ("", (PodRef(namespace, name, ""),))


def test_drain_refuses_without_force_and_evicts_with_it(cluster: Cluster) -> None:
    cluster.deployment("web", 2)
    cluster.pod("bare", "gpu-0")
    wait_until(lambda: cluster.nodes_of("web") == ["gpu-0", "gpu-1"], "web on both nodes")

    refused = drain(cluster.core, "gpu-0", force=False, timeout_s=10)
    assert refused.evicted == ()
    assert "default/bare (no controller)" in refused.error
    assert "--force-drain" in refused.error
    assert cluster.core.read_namespaced_pod("bare", NAMESPACE).metadata.deletion_timestamp is None

    assert cordon(cluster.core, "gpu-0") is False, "the refused drain had cordoned it"
    done = drain(cluster.core, "gpu-0", force=True, timeout_s=10)
    assert done.error == ""
    assert {pod.name for pod in done.evicted} >= {"bare"}
    assert len(done.evicted) == 2
    pods_left = cluster.core.list_namespaced_pod(NAMESPACE, field_selector="spec.nodeName=gpu-0").items
    assert pods_left == []
    wait_until(lambda: cluster.nodes_of("web") == ["gpu-1", "gpu-1"], "the replica recreated on gpu-1")
    uncordon(cluster.core, "gpu-0")
    assert cluster.core.read_node("gpu-0").spec.unschedulable is None
    assert cordon(cluster.core, "gpu-0") is True


def test_drain_times_out_naming_the_pod_and_its_budget(cluster: Cluster) -> None:
    cluster.deployment("db", 1, node="gpu-0")
    cluster.budget("db", "db", 1)
    (pod,) = wait_until(lambda: cluster.running("db"), "db running")
    wait_until(lambda: cluster.healthy("db") == 1, "budget counted")

    result = drain(cluster.core, "gpu-0", force=False, timeout_s=1.5)
    assert result.error == (
        f"drain gpu-0: pod default/{pod.metadata.name} could not be evicted in time: "
        "The disruption budget db needs 1 healthy pods and has 1 currently"
    )
    assert result.evicted == ()
    assert 1.5 <= result.seconds < 5
    assert [p.metadata.name for p in cluster.running("db")] == [pod.metadata.name]


def test_two_nodes_drained_in_turn_keep_the_budget(cluster: Cluster) -> None:
    """minAvailable 1 across both nodes: each drain waits for the replacement before the next eviction."""
    cluster.deployment("web", 2)
    cluster.budget("web", "web", 1)
    wait_until(lambda: cluster.nodes_of("web") == ["gpu-0", "gpu-1"], "web on both nodes")
    wait_until(lambda: cluster.healthy("web") == 2, "budget counted")

    first = drain(cluster.core, "gpu-0", force=False, timeout_s=20)
    assert (first.error, len(first.evicted)) == ("", 1)
    wait_until(lambda: cluster.nodes_of("web") == ["gpu-1", "gpu-1"], "both replicas on gpu-1")
    uncordon(cluster.core, "gpu-0")

    second = drain(cluster.core, "gpu-1", force=False, timeout_s=20)
    assert (second.error, len(second.evicted)) == ("", 2)
    wait_until(lambda: cluster.nodes_of("web") == ["gpu-0", "gpu-0"], "both replicas on gpu-0")
    assert cluster.healthy("web") == 2
