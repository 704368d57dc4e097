"""`gpuctl bootstrap --phase cluster --stack dra` against the simulated cluster with a real helm
(v4) and the stand-in DRA driver chart (tests/charts): the sim plays the driver's kubelet plugin,
publishing each node's GPUs as a ResourceSlice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.test_bootstrap_cluster import gpu_nodes, writes
from tests.helm import DRA_CHART, HELM, Helm, needs_helm

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CHART = DRA_CHART
NAMESPACE = "dra-driver-nvidia-gpu"


def dra_cluster(*nodes: dict[str, Any]) -> dict[str, Any]:
    """A 1.34 cluster whose GPU nodes use DRA, without the driver yet (bootstrap installs it)."""
    return {
        "kubernetesVersion": "v1.34.1",
        "podStartSeconds": 0.05,
        "gpuAllocation": "dra",
        "draDriver": "absent",
        "nodes": [{"name": "cpu-0"}, *nodes],
    }


def dra_bootstrap(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any], Any]:
    result = cli(
        [
            "bootstrap", "--phase", "cluster", "--stack", "dra", "--kubeconfig", str(cluster.kubeconfig),
            "--helm", HELM, "--chart", str(CHART), "-o", "json", "--timeout", "30", *args,
        ]
    )  # fmt: skip
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.stdout) if result.stdout.strip() else {}, result


@needs_helm
def test_the_driver_publishes_every_gpu_node_and_a_second_run_changes_nothing(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    cluster = sim(dra_cluster(gpu_nodes(count=2)))
    code, first, result = dra_bootstrap(cli, cluster)
    assert code == 0, result.output
    assert first["cluster"]["stack"] == "dra"
    helm = first["cluster"]["helm"]
    assert helm["action"] == "installed"
    assert helm["chart"] == "dra-driver-nvidia-gpu-0.5.1"
    assert helm["values"]["gpuResourcesEnabledOverride"] is True
    assert helm["values"]["kubeletPlugin"]["tolerations"][0]["key"] == "nvidia.com/gpu"
    nodes = first["cluster"]["nodes"]
    assert [(n["name"], n["allocatable"], n["ready"]) for n in nodes] == [
        ("gpu-0", 4, True),
        ("gpu-1", 4, True),
    ]
    releases = Helm(cluster, tmp_path / "helm").json("list", "-n", NAMESPACE)
    assert [(r["name"], r["status"]) for r in releases] == [("dra-driver-nvidia-gpu", "deployed")]

    before = writes(cluster)
    code, second, result = dra_bootstrap(cli, cluster)
    assert code == 0, result.output
    assert second["cluster"]["helm"]["action"] == "unchanged"
    assert second["cluster"]["writes"] == 0
    assert writes(cluster) == before

    verified = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert verified.exit_code == 0, verified.stdout
    assert {node["gpu_allocation"] for node in json.loads(verified.stdout)["nodes"]} == {"dra"}


@needs_helm
def test_a_node_without_driver_is_diagnosed_from_the_plugins_log(sim: Any, cli: Any) -> None:
    broken = gpu_nodes(count=1, name="gpu-nodriver", host={"driver": "missing"})
    cluster = sim(dra_cluster(gpu_nodes(count=1), broken))
    code, data, result = dra_bootstrap(cli, cluster, "--timeout", "300")
    assert code == 1, result.output
    nodes = {node["name"]: node for node in data["cluster"]["nodes"]}
    assert nodes["gpu-0"]["ready"] is True
    stuck = nodes["gpu-nodriver"]
    assert stuck["ready"] is False
    assert stuck["problem"]["diagnosis"] == "dra.driver-libraries-missing"
    # The host's driver is missing: the wait ends at the diagnosis, and the host phase is next.
    assert (stuck["terminal"], data["cluster"]["timed_out"]) == (True, False)
    assert data["resume"].startswith("gpuctl bootstrap --phase host -i INVENTORY --limit gpu-nodriver && ")


@needs_helm
def test_check_installs_nothing(sim: Any, cli: Any, tmp_path: Path) -> None:
    cluster = sim(dra_cluster(gpu_nodes(count=1)))
    code, data, result = dra_bootstrap(cli, cluster, "--check")
    assert code == 0, result.output
    assert data["cluster"]["helm"]["action"] == "would-install"
    assert " upgrade --install dra-driver-nvidia-gpu " in data["cluster"]["helm"]["command"]
    assert Helm(cluster, tmp_path / "helm").json("list", "-A") == []
