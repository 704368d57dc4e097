"""`gpuctl bootstrap --phase cluster|verify|all` against the simulated cluster (no inventory: GPU
nodes found by their labels, each held to its nvidia.com/gpu.count label)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")
COUNT = "nvidia.com/gpu.count"


def gpu_nodes(count: int = 2, gpus: int = 4, **extra: Any) -> dict[str, Any]:
    return {"name": "gpu-{i}", "count": count, "gpus": gpus, "labels": {COUNT: str(gpus)}, **extra}


def scenario(*nodes: dict[str, Any]) -> dict[str, Any]:
    return {"podStartSeconds": 0.05, "devicePlugin": "absent", "nodes": [{"name": "cpu-0"}, *nodes]}


def writes(cluster: Any) -> int:
    counts = cluster.server.requests_by_verb()
    return sum(counts.get(verb, 0) for verb in WRITE_VERBS)


def bootstrap(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(
        ["bootstrap", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "30", *args]
    )
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout)


def test_cluster_phase_brings_the_gpus_up_and_a_second_run_writes_nothing(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes()))
    code, first = bootstrap(cli, cluster, "--phase", "cluster")
    assert code == 0, first
    assert [p["name"] for p in first["phases"]] == ["cluster"]
    actions = {(o["kind"], o["action"]) for o in first["cluster"]["objects"]}
    assert actions == {("DaemonSet", "created"), ("RuntimeClass", "created")}
    assert [(n["name"], n["allocatable"], n["ready"]) for n in first["cluster"]["nodes"]] == [
        ("gpu-0", 4, True),
        ("gpu-1", 4, True),
    ]
    taints = {name: list(node.spec.taints or []) for name, node in _nodes(cluster).items()}
    # the GPU taint, and the gate on nodes never proven (lifted by the verify phase)
    assert [(t.key, t.value) for t in taints["gpu-0"]] == [
        ("nvidia.com/gpu", "present"),
        ("gpuctl.io/unproven", "smi"),
    ]
    assert taints["cpu-0"] == []

    before = writes(cluster)
    code, second = bootstrap(cli, cluster, "--phase", "cluster")
    assert code == 0
    assert second["cluster"]["writes"] == 0
    assert {o["action"] for o in second["cluster"]["objects"]} == {"unchanged"}
    assert writes(cluster) == before  # not one PATCH, apply or create


def test_objects_are_applied_server_side_by_gpuctl(sim: Any, cli: Any) -> None:
    from kubernetes.client import AppsV1Api

    cluster = sim(scenario(gpu_nodes(count=1)))
    assert (
        bootstrap(cli, cluster, "--phase", "cluster", "--sharing", "time-slicing", "--replicas", "2")[0] == 0
    )
    apps = AppsV1Api(cluster.api_client())
    daemonset = apps.read_namespaced_daemon_set("nvidia-device-plugin-daemonset", "kube-system")
    managers = {(entry.manager, entry.operation) for entry in daemonset.metadata.managed_fields}
    assert ("gpuctl", "Apply") in managers
    config = cluster.api_client()
    from kubernetes.client import CoreV1Api

    maps = CoreV1Api(config).list_namespaced_config_map("kube-system").items
    assert "nvidia-device-plugin-config" in {item.metadata.name for item in maps}


def test_check_is_a_server_side_dry_run_with_a_diff(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    result = cli(["bootstrap", "--phase", "cluster", "--check", "--kubeconfig", str(cluster.kubeconfig)])
    assert result.exit_code == 0, result.output
    assert "would create" in result.stdout
    assert "+kind: DaemonSet" in result.stdout
    assert "nothing written" in result.stdout
    assert cluster.server.requests_by_verb().get("create", 0) == 0
    from kubernetes.client import AppsV1Api

    assert AppsV1Api(cluster.api_client()).list_daemon_set_for_all_namespaces().items == []
    assert list(_nodes(cluster)["gpu-0"].spec.taints or []) == []


def test_a_node_that_never_gets_its_gpus_is_diagnosed_not_timed_out_bare(sim: Any, cli: Any) -> None:
    broken = gpu_nodes(count=1, name="gpu-notoolkit", host={"driver": "installed", "toolkit": "missing"})
    cluster = sim(scenario(gpu_nodes(count=1), broken))
    code, data = bootstrap(cli, cluster, "--phase", "cluster", "--timeout", "3")
    assert code == 1
    nodes = {node["name"]: node for node in data["cluster"]["nodes"]}
    assert nodes["gpu-0"]["ready"] is True
    problem = nodes["gpu-notoolkit"]["problem"]
    assert nodes["gpu-notoolkit"]["ready"] is False
    assert problem["diagnosis"] == "plugin.nvml-library-missing"
    assert "nvidia-ctk runtime configure" in problem["hint"]
    assert nodes["gpu-notoolkit"]["terminal"] is True
    assert data["cluster"]["timed_out"] is False  # not waited for: the host layer is at fault
    assert data["resume"] == (
        "gpuctl bootstrap --phase host -i INVENTORY --limit gpu-notoolkit && gpuctl bootstrap --phase cluster"
    )


def test_a_node_without_its_driver_ends_the_wait_in_seconds_not_at_the_timeout(sim: Any, cli: Any) -> None:
    nodriver = gpu_nodes(count=1, name="gpu-nodriver", host={"driver": "missing", "toolkit": "configured"})
    cluster = sim(scenario(gpu_nodes(count=1), nodriver))
    started = time.monotonic()
    result = cli("bootstrap", "--phase", "cluster", "--kubeconfig", cluster.kubeconfig, "--timeout", "300")
    elapsed = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert elapsed < 20, f"waited {elapsed:.0f} s for a node diagnosed as terminal"
    assert "gpu-nodriver: gpu.capacity: " in result.stdout
    assert "the device plugin cannot load libnvidia-ml.so" in result.stdout
    assert "stopped waiting: 1 node(s) cannot get their GPUs" in result.stdout
    assert "timed out" not in result.stdout
    # The hint names the host phase for that host, and preflight; not a rerun of this phase alone.
    assert (
        "resume with: gpuctl bootstrap --phase host -i INVENTORY --limit gpu-nodriver && "
        "gpuctl bootstrap --phase cluster"
    ) in result.stdout
    assert "`gpuctl preflight -i INVENTORY --limit gpu-nodriver`" in result.stdout
    # Not a terminal (captured): the wait said what it waited for, in plain lines on stderr.
    progress = result.stderr.splitlines()
    assert progress, "no progress line while waiting"
    assert all(line.startswith(("waiting for ", "1 of 2 GPU node(s) ready")) for line in progress), progress
    assert progress[-1] == (
        "1 of 2 GPU node(s) ready; not waiting for gpu-nodriver (cannot get their GPUs, see the report)"
    )


def test_the_wait_still_runs_to_the_timeout_for_a_node_that_may_come_up(sim: Any, cli: Any) -> None:
    """A NotReady node is no host-layer diagnosis: it may come back, so it is waited for."""
    cluster = sim(scenario(gpu_nodes(count=1), gpu_nodes(count=1, name="gpu-down", ready=False)))
    started = time.monotonic()
    code, data = bootstrap(cli, cluster, "--phase", "cluster", "--timeout", "4")
    assert code == 1
    assert time.monotonic() - started >= 4
    assert data["cluster"]["timed_out"] is True
    down = next(node for node in data["cluster"]["nodes"] if node["name"] == "gpu-down")
    assert (down["ready"], down["terminal"]) == (False, False)
    assert data["resume"] == "gpuctl bootstrap --phase cluster"


def test_verify_phase_holds_each_node_to_its_gpu_count(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1), gpu_nodes(count=1, name="gpu-sick", unhealthyGpus=1)))
    code, data = bootstrap(cli, cluster, "--phase", "cluster", "--timeout", "2")
    assert code == 1  # gpu-sick advertises 3 of its 4 GPUs
    sick = next(node for node in data["cluster"]["nodes"] if node["name"] == "gpu-sick")
    assert (sick["allocatable"], sick["expected_gpus"], sick["ready"]) == (3, 4, False)
    code, data = bootstrap(cli, cluster, "--phase", "verify")
    assert code == 1
    by_name = {node["name"]: node for node in data["verify"]["nodes"]}
    assert by_name["gpu-0"]["ok"] is True
    assert by_name["gpu-0"]["gpus"] == {
        "expected": 4, "capacity": 4, "allocatable": 4, "seen": 4, "in_use": 0, "physical": 4,
        "mig_devices": 0,
    }  # fmt: skip
    assert by_name["gpu-sick"]["ok"] is False
    assert data["verify"]["schema"] == "gpuctl.verify/v1"
    assert data["resume"] == "gpuctl bootstrap --phase verify"


def test_phase_all_needs_an_inventory_and_the_host_phase_needs_one_too(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    for phase in ("all", "host"):
        result = cli(["bootstrap", "--phase", phase, "--kubeconfig", str(cluster.kubeconfig)])
        assert result.exit_code == 2
        assert "needs --inventory" in result.stderr
    assert writes(cluster) == 0


def test_a_host_matching_no_node_is_an_error_before_any_write(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    inventory = tmp_path / "hosts.yml"
    hosts = {"node-a": {"ansible_host": "192.0.2.10"}, "node-b": {"ansible_host": "192.0.2.11"}}
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    result = cli(
        ["bootstrap", "--phase", "cluster", "-i", str(inventory), "--kubeconfig", str(cluster.kubeconfig)]
    )
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert "host node-a matches no Kubernetes node" in first
    assert "gpu-0" in first  # the candidates are named
    assert "gpuctl_node_name" in result.stderr
    assert writes(cluster) == 0


def test_stack_dra_without_helm_exits_2_before_any_request(
    sim: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = sim(scenario(gpu_nodes(count=1)))
    monkeypatch.setenv("PATH", "/nonexistent")
    result = cli(
        ["bootstrap", "--phase", "cluster", "--stack", "dra", "--kubeconfig", str(cluster.kubeconfig)]
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == "error: helm not found on PATH"
    assert "--stack device-plugin" in result.stderr
    assert cluster.server.requests_by_verb() == {}


def _nodes(cluster: Any) -> dict[str, Any]:
    from kubernetes.client import CoreV1Api

    return {node.metadata.name: node for node in CoreV1Api(cluster.api_client()).list_node().items}
