"""verify on shared and MIG nodes of the sim: the plugin's config decides what is advertised, and
verify proves every physical GPU (or MIG device) from pods."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuctl.core.render import RenderOptions
from tests.polling import wait_until
from tests.rendered import create_documents, rendered_documents


def _apply(cluster: Any, options: RenderOptions) -> None:
    create_documents(cluster.api_client(), rendered_documents(options))


def _allocatable(cluster: Any) -> dict[str, dict[str, str]]:
    from kubernetes.client import CoreV1Api

    return {
        node.metadata.name: {
            k: v for k, v in (node.status.allocatable or {}).items() if k.startswith("nvidia.com/")
        }
        for node in CoreV1Api(cluster.api_client()).list_node().items
    }


def _verify(cli: Any, cluster: Any) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--output", "json", "--timeout", "30", "--kubeconfig", str(cluster.kubeconfig)])
    return result.exit_code, json.loads(result.stdout)


def _nodes(count: int = 2, **extra: Any) -> dict[str, Any]:
    return {"devicePlugin": "absent", "podStartSeconds": 0.05,
            "nodes": [{"name": "gpu-{i}", "count": count, "gpus": 4, **extra}]}  # fmt: skip


@pytest.mark.parametrize("sharing", ["time-slicing", "mps"])
def test_shared_nodes_advertise_replicas_and_verify_reaches_every_gpu(
    sim: Any, cli: Any, sharing: str
) -> None:
    cluster = sim(_nodes())
    _apply(cluster, RenderOptions(sharing=sharing, replicas=4))
    wait_until(
        lambda: _allocatable(cluster) == {n: {"nvidia.com/gpu": "16"} for n in ("gpu-0", "gpu-1")}, "16"
    )
    code, data = _verify(cli, cluster)
    assert code == 0, data
    for node in data["nodes"]:
        assert node["gpus"]["physical"] == 4
        assert node["gpus"]["seen"] == 4
        assert node["sharing"] == {"mode": sharing, "replicas": 4, "mig_strategy": "none"}
        checks = {check["id"]: check for check in node["checks"]}
        assert checks["gpu.physical"]["status"] == "pass"


@pytest.mark.parametrize(
    ("strategy", "resource"), [("single", "nvidia.com/gpu"), ("mixed", "nvidia.com/mig-1g.10gb")]
)
def test_mig_nodes_advertise_mig_devices_and_verify_counts_them(
    sim: Any, cli: Any, strategy: str, resource: str
) -> None:
    cluster = sim(_nodes(count=1, mig={"1g.10gb": 7}))
    _apply(cluster, RenderOptions(mig_strategy=strategy))
    wait_until(lambda: _allocatable(cluster)["gpu-0"] == {resource: "28"}, "28 MIG devices")
    code, data = _verify(cli, cluster)
    assert code == 0, [c for n in data["nodes"] for c in n["checks"] if c["status"] == "fail"]
    node = data["nodes"][0]
    assert node["gpus"]["mig_devices"] == 28
    assert node["gpus"]["physical"] == 4
    assert node["sharing"]["mig_strategy"] == strategy


def test_sharing_faults_are_diagnosed_on_the_right_node(sim: Any, cli: Any) -> None:
    cluster = sim({"devicePlugin": "absent", "podStartSeconds": 0.05, "nodes": [
        {"name": "ok-0", "gpus": 4},
        {"name": "wrong-config-0", "gpus": 4, "labels": {"nvidia.com/device-plugin.config": "missing"}},
    ]})  # fmt: skip
    _apply(cluster, RenderOptions(sharing="time-slicing", replicas=4))
    wait_until(lambda: _allocatable(cluster)["ok-0"] == {"nvidia.com/gpu": "16"}, "replicas on ok-0")
    code, data = _verify(cli, cluster)
    assert code == 1
    checks = {node["name"]: {c["id"]: c for c in node["checks"]} for node in data["nodes"]}
    assert checks["ok-0"]["gpu.sharing"]["status"] == "pass"
    assert checks["wrong-config-0"]["gpu.capacity"]["status"] == "fail"


def test_single_strategy_with_two_profiles_fails_like_the_plugin(sim: Any, cli: Any) -> None:
    cluster = sim(_nodes(count=1, mig={"1g.10gb": 3, "2g.20gb": 2}))
    _apply(cluster, RenderOptions(mig_strategy="single"))
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())
    wait_until(
        lambda: "MIG-INVALID" in core.read_node("gpu-0").metadata.labels.get("nvidia.com/gpu.product", ""),
        "label",
    )
    code, data = _verify(cli, cluster)
    assert code == 1
    sharing = {c["id"]: c for c in data["nodes"][0]["checks"]}["gpu.sharing"]
    assert sharing["status"] == "fail"
    assert "MIG" in sharing["message"]


def test_mps_without_its_control_daemon_is_diagnosed(sim: Any, cli: Any) -> None:
    """The plugin waits for an MPS control daemon that never comes: no GPU, and the reason."""
    from kubernetes.client import AppsV1Api

    cluster = sim(_nodes(count=1, labels={"nvidia.com/gpu.present": "true"}))
    _apply(cluster, RenderOptions(sharing="mps", replicas=4))
    apps = AppsV1Api(cluster.api_client())
    daemons = [
        ds.metadata.name
        for ds in apps.list_namespaced_daemon_set("kube-system").items
        if "mps-control-daemon" in ds.metadata.name
    ]
    assert daemons
    for name in daemons:
        apps.delete_namespaced_daemon_set(name, "kube-system")
    code, data = _verify(cli, cluster)
    assert code == 1
    (node,) = data["nodes"]
    capacity = next(check for check in node["checks"] if check["id"] == "gpu.capacity")
    assert capacity["status"] == "fail"
    assert capacity["diagnosis"] == "plugin.mps-daemon-missing"
    assert "mps.capable" in capacity["hint"]


def test_status_shows_sharing_mode_replicas_and_mig_devices(sim: Any, cli: Any) -> None:
    shared = sim(_nodes(count=1), name="shared")
    _apply(shared, RenderOptions(sharing="time-slicing", replicas=4))
    wait_until(lambda: _allocatable(shared) == {"gpu-0": {"nvidia.com/gpu": "16"}}, "16 replicas")
    table = cli(["status", "--kubeconfig", str(shared.kubeconfig)])
    assert "time-slicing x4" in table.stdout
    data = json.loads(cli(["status", "-o", "json", "--kubeconfig", str(shared.kubeconfig)]).stdout)
    assert data["nodes"][0]["sharing"] == {
        "mode": "time-slicing",
        "replicas": 4,
        "mig_strategy": "none",
        "mig_devices": 0,
        "physical_gpus": 4,
    }
    mig = sim(_nodes(count=1, mig={"1g.10gb": 7}), name="mig")
    _apply(mig, RenderOptions(mig_strategy="mixed"))
    wait_until(lambda: "nvidia.com/mig-1g.10gb" in _allocatable(mig)["gpu-0"], "MIG devices advertised")
    row = json.loads(cli(["status", "-o", "json", "--kubeconfig", str(mig.kubeconfig)]).stdout)["nodes"][0]
    assert (row["sharing"]["mig_strategy"], row["sharing"]["mig_devices"]) == ("mixed", 28)
    assert "MIG mixed: 28 dev" in cli(["status", "--kubeconfig", str(mig.kubeconfig)]).stdout
