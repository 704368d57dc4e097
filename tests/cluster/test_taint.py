"""`gpuctl taint-gpu-nodes` against the simulated cluster, through the real client over HTTP."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from gpuctl.core.taint import taint_gpu_nodes
from gpuctl.kube.nodes import Taint
from tests.kubectl import KUBECTL, needs_kubectl

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
SCENARIO: dict[str, Any] = {
    "devicePlugin": "installed",
    "podStartSeconds": 0.05,
    "nodes": [
        {"name": "cpu-{i}", "count": 2},
        {"name": "gpu-{i}", "count": 3, "gpus": 8},
        {
            "name": "gpu-old-0",
            "gpus": 4,
            "taints": [
                {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"},
                {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
            ],
        },
    ],
}


def _taints(cluster: Any, name: str) -> list[dict[str, Any]]:
    from kubernetes.client import CoreV1Api

    node = CoreV1Api(cluster.api_client()).read_node(name)
    return [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.spec.taints or []]


def _writes(cluster: Any) -> int:
    counts = cluster.server.requests_by_verb()
    return sum(counts.get(verb, 0) for verb in WRITE_VERBS)


def _json(output: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(output)
    return data


@pytest.fixture
def cluster(sim: Callable[..., Any]) -> Any:
    return sim(SCENARIO)


def test_apply_then_reapply_makes_no_write(cluster: Any, cli: Callable[..., Any]) -> None:
    first = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "-o", "json")
    assert first.exit_code == 0, first.output
    report = _json(first.stdout)
    assert report["schema"] == "gpuctl.taint/v1"
    actions = {node["name"]: node["action"] for node in report["nodes"]}
    assert actions == {"gpu-0": "added", "gpu-1": "added", "gpu-2": "added", "gpu-old-0": "updated"}
    assert report["writes"] == 4
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in _taints(cluster, "gpu-0")
    assert _taints(cluster, "cpu-0") == []
    # The value update keeps the node's other taint and does not duplicate the GPU one.
    assert _taints(cluster, "gpu-old-0") == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
    ]

    writes_before = _writes(cluster)
    second = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "-o", "json")
    assert second.exit_code == 0, second.output
    assert {node["action"] for node in _json(second.stdout)["nodes"]} == {"unchanged"}
    assert _json(second.stdout)["writes"] == 0
    assert _writes(cluster) == writes_before  # the server saw no write at all


def test_dry_run_persists_nothing_but_says_what_would_change(cluster: Any, cli: Callable[..., Any]) -> None:
    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would add" in result.stdout
    assert "would update" in result.stdout
    assert "dry run" in result.stdout
    assert all(taint["key"] != "nvidia.com/gpu" for taint in _taints(cluster, "gpu-0"))
    assert {"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"} in _taints(cluster, "gpu-old-0")


def test_remove_keeps_other_taints_and_is_idempotent(cluster: Any, cli: Callable[..., Any]) -> None:
    assert cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig).exit_code == 0
    dry = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--remove", "--dry-run", "-o", "json")
    assert {node["action"] for node in _json(dry.stdout)["nodes"]} == {"would remove"}
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in _taints(cluster, "gpu-0")
    removed = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--remove", "-o", "json")
    assert removed.exit_code == 0, removed.output
    assert {node["action"] for node in _json(removed.stdout)["nodes"]} == {"removed"}
    assert _taints(cluster, "gpu-0") == []
    assert _taints(cluster, "gpu-old-0") == [{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}]
    writes_before = _writes(cluster)
    again = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--remove", "-o", "json")
    assert {node["action"] for node in _json(again.stdout)["nodes"]} == {"unchanged"}
    assert _writes(cluster) == writes_before


def test_selector_and_nodes_choose_the_nodes(cluster: Any, cli: Callable[..., Any]) -> None:
    selector = "kubernetes.io/hostname in (gpu-1,cpu-0)"
    by_selector = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "-l", selector, "-o", "json")
    assert by_selector.exit_code == 0, by_selector.output
    assert [node["name"] for node in _json(by_selector.stdout)["nodes"]] == ["cpu-0", "gpu-1"]
    by_name = cli(
        "taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--nodes", "gpu-2",
        "--key", "example.com/pool", "--value", "", "--effect", "NoExecute", "--yes",
    )  # fmt: skip
    assert by_name.exit_code == 0, by_name.output
    assert {"key": "example.com/pool", "value": None, "effect": "NoExecute"} in _taints(cluster, "gpu-2")
    assert all(taint["key"] != "example.com/pool" for taint in _taints(cluster, "gpu-0"))


def test_selector_matching_nothing_exits_1(cluster: Any, cli: Callable[..., Any]) -> None:
    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "-l", "pool=none")
    assert result.exit_code == 1
    assert "error: no node matched" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nodes", "gpu-0,gpu-9"], "unknown node(s): gpu-9"),
        (["--effect", "Sometimes"], "--effect"),
        (["--key", "bad key"], "--key"),
        (["--selector", "pool in gpu"], "--selector"),
        (["--nodes", ","], "--nodes"),
    ],
)
def test_bad_input_exit_2_without_traceback(
    cluster: Any, cli: Callable[..., Any], args: list[str], message: str
) -> None:
    writes_before = _writes(cluster)
    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert _writes(cluster) == writes_before


def test_unreachable_cluster_exits_3(cluster: Any, cli: Callable[..., Any]) -> None:
    cluster.server.stop()
    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig)
    assert result.exit_code == 3
    assert "list nodes" in result.stderr
    assert "Traceback" not in result.output


def test_forbidden_patch_exits_3_naming_verb_and_node(
    sim: Callable[..., Any], cli: Callable[..., Any]
) -> None:
    cluster = sim({**SCENARIO, "forbidden": ["patch nodes"]})
    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig)
    assert result.exit_code == 3
    assert "patch node gpu-0" in result.stderr
    assert "403" in result.stderr


def test_conflict_is_retried_without_losing_the_other_writer(cluster: Any) -> None:
    """A concurrent writer adds its own taint between our read and our write: our patch gets a
    409 (stale resourceVersion), we re-read and keep their taint next to ours."""
    from kubernetes.client import CoreV1Api

    other_writer = CoreV1Api(cluster.api_client())
    interfered: list[str] = []

    def concurrent_write(node_name: str) -> None:
        if node_name == "gpu-1" and not interfered:
            interfered.append(node_name)
            node = other_writer.read_node(node_name)
            taints = [
                *(node.spec.taints or []),
                {"key": "maintenance", "value": "soon", "effect": "NoSchedule"},
            ]
            other_writer.patch_node(node_name, {"spec": {"taints": taints}},
                                    _content_type="application/strategic-merge-patch+json")  # fmt: skip

    result = taint_gpu_nodes(cluster.api_client(), taint=GPU_TAINT, after_read=concurrent_write)
    change = next(change for change in result.nodes if change.node == "gpu-1")
    assert change.action == "added"
    # At least our writer's conflict (the simulated kubelet may be another concurrent writer).
    assert change.conflicts_retried >= 1, result
    assert result.writes == 4 + sum(node.conflicts_retried for node in result.nodes)
    taints = _taints(cluster, "gpu-1")
    assert {"key": "maintenance", "value": "soon", "effect": "NoSchedule"} in taints
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in taints


def _create_daemonset(cluster: Any, name: str, image: str, tolerations: list[dict[str, str]]) -> None:
    from kubernetes.client import AppsV1Api

    labels = {"app": name}
    body = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "kube-system", "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "main", "image": image}], "tolerations": tolerations},
            },
        },
    }
    AppsV1Api(cluster.api_client()).create_namespaced_daemon_set("kube-system", body)


def test_warns_about_gpu_daemonsets_that_do_not_tolerate(cluster: Any, cli: Callable[..., Any]) -> None:
    equal_present = [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}
    ]
    _create_daemonset(
        cluster, "nfd-worker", "registry.k8s.io/nfd/node-feature-discovery:v0.16.4", equal_present
    )
    _create_daemonset(
        cluster, "nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04", []
    )
    _create_daemonset(cluster, "log-shipper", "fluent/fluent-bit:3.1", [])

    result = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--value", "true", "-o", "json")
    assert result.exit_code == 0, result.output  # warnings do not fail the command
    warnings = {warning["daemonset"]: warning for warning in _json(result.stdout)["warnings"]}
    assert set(warnings) == {"nfd-worker", "nvidia-dcgm-exporter"}  # the device plugin tolerates Exists
    assert "nvidia.com/gpu=present:NoSchedule (Equal)" in warnings["nfd-worker"]["message"]
    assert warnings["nfd-worker"]["component"] == "NFD worker"

    table = cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "--dry-run")
    assert "warning: DaemonSet kube-system/nvidia-dcgm-exporter (dcgm-exporter)" in table.stdout
    assert "nfd-worker" not in table.stdout  # Equal present matches the default value
    assert "ExtendedResourceToleration" in table.stdout


@needs_kubectl
def test_kubectl_sees_the_same_taints(cluster: Any, cli: Callable[..., Any]) -> None:
    assert cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig).exit_code == 0
    kubectl = subprocess.run(
        [KUBECTL, "--kubeconfig", str(cluster.kubeconfig), "get", "node", "gpu-old-0",
         "-o", "jsonpath={.spec.taints}"],
        capture_output=True, text=True, check=True, timeout=30,
    )  # fmt: skip
    assert json.loads(kubectl.stdout) == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
        {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
    ]


def test_json_contract(cluster: Any, cli: Callable[..., Any]) -> None:
    """Pin the `gpuctl.taint/v1` keys: add fields freely, never rename or remove them."""
    _create_daemonset(
        cluster, "nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04", []
    )
    report = _json(cli("taint-gpu-nodes", "--kubeconfig", cluster.kubeconfig, "-o", "json").stdout)
    assert {
        "schema",
        "ok",
        "taint",
        "mode",
        "dry_run",
        "selection",
        "writes",
        "nodes",
        "warnings",
        "notes",
    } <= set(report)
    assert set(report["taint"]) == {"key", "value", "effect"}
    assert {"name", "action", "before", "after", "conflicts_retried", "message"} <= set(report["nodes"][0])
    assert {"namespace", "daemonset", "component", "message", "hint"} <= set(report["warnings"][0])
    assert report["ok"] is True
    assert report["mode"] == "apply"


def test_a_node_that_keeps_changing_gives_up_after_the_retry_limit(cluster: Any) -> None:
    """Another writer changes gpu-1 between every read and write: each patch gets a 409; after
    MAX_ATTEMPTS the node fails with a message and the others are still tainted."""
    from kubernetes.client import CoreV1Api

    from gpuctl.kube.taints import MAX_ATTEMPTS

    other_writer = CoreV1Api(cluster.api_client())
    interfered: list[str] = []

    def always_interfere(node_name: str) -> None:
        if node_name == "gpu-1":
            interfered.append(node_name)
            other_writer.patch_node(node_name, {"metadata": {"labels": {"churn": str(len(interfered))}}})

    result = taint_gpu_nodes(cluster.api_client(), taint=GPU_TAINT, after_read=always_interfere)
    change = next(change for change in result.nodes if change.node == "gpu-1")
    assert change.action == "failed", change
    assert (
        change.message
        == f"node gpu-1 kept changing: {MAX_ATTEMPTS} conflicting writes in a row; rerun the command"
    )
    assert len(interfered) == MAX_ATTEMPTS
    assert result.exit_code == 1
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} not in _taints(
        cluster, "gpu-1"
    )
    assert {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"} in _taints(cluster, "gpu-0")
