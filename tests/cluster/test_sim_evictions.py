"""What draining a node needs of the simulated cluster, as a real one does it: PodDisruptionBudget
status from the disruption controller, the Eviction API (429 in the API server's words when a
budget forbids), Deployments whose ReplicaSets recreate evicted pods on nodes that take pods, and
real `kubectl cordon` / `kubectl drain` against all of it."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SimCluster
from tests.kubectl import Kubectl, needs_kubectl
from tests.polling import wait_until

SCENARIO = {"podStartSeconds": 0.05, "nodes": [{"name": "cpu-{i}", "count": 3}]}
JSON_BODY = {"Content-Type": "application/json"}


def deployment(name: str, replicas: int) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "web", "image": "registry.k8s.io/pause:3.10"}]},
            },
        },
    }


def budget(name: str, app: str, **rule: int | str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}, **rule},
    }


def post(cluster: SimCluster, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    try:
        with cluster.open(path, data=json.dumps(body).encode(), method="POST", **JSON_BODY) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def get(cluster: SimCluster, path: str) -> dict[str, Any]:
    with cluster.open(path) as answer:
        result: dict[str, Any] = json.loads(answer.read())
        return result


def running_pods(cluster: SimCluster, app: str) -> list[dict[str, Any]]:
    pods = get(cluster, f"/api/v1/namespaces/default/pods?labelSelector=app%3D{app}")["items"]
    return [
        pod
        for pod in pods
        if pod.get("status", {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")
    ]


def eviction(name: str) -> dict[str, Any]:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": "default"}}


def pdb_status(cluster: SimCluster, name: str) -> dict[str, Any]:
    path = f"/apis/policy/v1/namespaces/default/poddisruptionbudgets/{name}"
    status: dict[str, Any] = get(cluster, path).get("status") or {}
    return status


@pytest.fixture
def cluster(sim: Callable[..., SimCluster]) -> SimCluster:
    return sim(SCENARIO)


def create(cluster: SimCluster, obj: dict[str, Any]) -> None:
    group = obj["apiVersion"]
    plural = {"Deployment": "deployments", "PodDisruptionBudget": "poddisruptionbudgets"}[obj["kind"]]
    status, answer = post(cluster, f"/apis/{group}/namespaces/default/{plural}", obj)
    assert status == 201, answer


def test_deployment_gets_a_replica_set_and_ready_pods(cluster: SimCluster) -> None:
    create(cluster, deployment("web", 2))
    pods = wait_until(
        lambda: len(running_pods(cluster, "web")) == 2 and running_pods(cluster, "web"), "2 pods"
    )
    replica_sets = get(cluster, "/apis/apps/v1/namespaces/default/replicasets")["items"]
    assert len(replica_sets) == 1
    template_hash = replica_sets[0]["metadata"]["labels"]["pod-template-hash"]
    assert replica_sets[0]["metadata"]["name"] == f"web-{template_hash}"
    for pod in pods:
        assert pod["metadata"]["labels"]["pod-template-hash"] == template_hash
        (owner,) = pod["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"]) == (
            "ReplicaSet",
            f"web-{template_hash}",
            True,
        )
    assert len({pod["spec"]["nodeName"] for pod in pods}) == 2, "the scheduler spreads the replicas"
    status = wait_until(
        lambda: (
            (s := get(cluster, "/apis/apps/v1/namespaces/default/deployments/web")["status"]).get(
                "availableReplicas"
            )
            == 2
            and s
        ),
        "deployment available",
    )
    assert (status["replicas"], status["readyReplicas"], status["updatedReplicas"]) == (2, 2, 2)


@pytest.mark.parametrize(
    ("rule", "desired"),
    [
        ({"minAvailable": 1}, 1),
        ({"minAvailable": "50%"}, 2),
        ({"maxUnavailable": 1}, 2),
        ({"maxUnavailable": "30%"}, 2),
    ],
)
def test_budget_status(cluster: SimCluster, rule: dict[str, int | str], desired: int) -> None:
    """3 replicas: minAvailable 50% of 3 rounds up to 2, maxUnavailable 30% of 3 rounds up to 1."""
    create(cluster, deployment("web", 3))
    create(cluster, budget("web", "web", **rule))
    status = wait_until(lambda: (s := pdb_status(cluster, "web")).get("currentHealthy") == 3 and s, "budget")
    assert status["desiredHealthy"] == desired
    assert status["expectedPods"] == 3
    assert status["disruptionsAllowed"] == 3 - desired
    assert status["observedGeneration"] == 1
    (condition,) = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "DisruptionAllowed",
        "True",
        "SufficientPods",
    )


def test_eviction_a_budget_forbids_is_429_in_the_servers_words(cluster: SimCluster) -> None:
    create(cluster, deployment("db", 1))
    create(cluster, budget("db", "db", minAvailable=1))
    (pod,) = wait_until(lambda: running_pods(cluster, "db"), "db running")
    wait_until(lambda: pdb_status(cluster, "db").get("currentHealthy") == 1, "budget counted")
    name = pod["metadata"]["name"]
    status, answer = post(cluster, f"/api/v1/namespaces/default/pods/{name}/eviction", eviction(name))
    assert status == 429
    assert answer == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget db needs 1 healthy pods and has 1 currently",
                }
            ]
        },
        "code": 429,
    }
    assert [p["metadata"]["name"] for p in running_pods(cluster, "db")] == [name], "the pod stays"


def test_eviction_without_budget_deletes_and_the_replica_set_recreates_elsewhere(cluster: SimCluster) -> None:
    create(cluster, deployment("web", 1))
    (pod,) = wait_until(lambda: running_pods(cluster, "web"), "web running")
    name, node = pod["metadata"]["name"], pod["spec"]["nodeName"]
    cordon = json.dumps({"spec": {"unschedulable": True}}).encode()
    patch = {"Content-Type": "application/strategic-merge-patch+json"}
    with cluster.open(f"/api/v1/nodes/{node}", data=cordon, method="PATCH", **patch) as answer:
        assert json.loads(answer.read())["spec"]["unschedulable"] is True
    status, answer = post(cluster, f"/api/v1/namespaces/default/pods/{name}/eviction", eviction(name))
    assert (status, answer) == (
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )
    (replacement,) = wait_until(
        lambda: [p for p in running_pods(cluster, "web") if p["metadata"]["name"] != name], "replacement"
    )
    assert replacement["spec"]["nodeName"] != node, "a cordoned node gets no new pods"
    wait_until(
        lambda: name not in {p["metadata"]["name"] for p in get(cluster, "/api/v1/pods")["items"]}, "gone"
    )


def test_budget_counts_an_evicted_pod_as_disrupted(cluster: SimCluster) -> None:
    """Two evictions in a row under minAvailable 1 of 2: the first goes, the second is refused
    even before the first pod's replacement is ready (the budget recorded the first)."""
    create(cluster, deployment("web", 2))
    create(cluster, budget("web", "web", minAvailable=1))
    first, second = wait_until(lambda: len(pods := running_pods(cluster, "web")) == 2 and pods, "2 pods")
    wait_until(lambda: pdb_status(cluster, "web").get("disruptionsAllowed") == 1, "budget allows one")
    path = "/api/v1/namespaces/default/pods/{}/eviction"
    name = first["metadata"]["name"]
    assert post(cluster, path.format(name), eviction(name))[0] == 201
    name = second["metadata"]["name"]
    assert post(cluster, path.format(name), eviction(name))[0] == 429


@needs_kubectl
def test_kubectl_drain_honours_the_budget(cluster: SimCluster, tmp_path: Path) -> None:
    kubectl = Kubectl(cluster, tmp_path)
    create(cluster, deployment("db", 1))
    create(cluster, budget("db", "db", minAvailable=1))
    create(cluster, deployment("web", 2))
    (db,) = wait_until(lambda: running_pods(cluster, "db"), "db running")
    wait_until(lambda: len(running_pods(cluster, "web")) == 2, "web running")
    wait_until(lambda: pdb_status(cluster, "db").get("currentHealthy") == 1, "budget counted")
    node = db["spec"]["nodeName"]
    refused = kubectl("drain", node, "--ignore-daemonsets", "--timeout=2s")
    assert refused.returncode != 0
    assert f"node/{node} cordoned" in refused.stdout
    assert "Cannot evict pod as it would violate the pod's disruption budget." in refused.stderr
    assert [p["metadata"]["name"] for p in running_pods(cluster, "db")] == [db["metadata"]["name"]]
    kubectl.ok("uncordon", node)
    assert not get(cluster, f"/api/v1/nodes/{node}")["spec"].get("unschedulable")
    kubectl.ok("patch", "deployment", "db", "-p", '{"spec":{"replicas":2}}')
    wait_until(lambda: pdb_status(cluster, "db").get("disruptionsAllowed") == 1, "budget allows one")
    drained = kubectl.ok("drain", node, "--ignore-daemonsets", "--timeout=20s")
    assert f"node/{node} drained" in drained
    left = [p for p in get(cluster, "/api/v1/pods")["items"] if p["spec"].get("nodeName") == node]
    assert left == []
    assert get(cluster, f"/api/v1/nodes/{node}")["spec"]["unschedulable"] is True
    wait_until(lambda: len(running_pods(cluster, "db")) == 2, "db back to 2 elsewhere")
    assert node not in {
        p["spec"]["nodeName"] for p in running_pods(cluster, "db") + running_pods(cluster, "web")
    }
