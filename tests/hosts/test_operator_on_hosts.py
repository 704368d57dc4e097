"""The GPU Operator stack on hosts prepared by gpuctl's own host phase (both start from the node
image, tests/hosts/_image.py: Debian test nodes the host phase prepared once per session) →
`gpuctl bootstrap --phase all --stack operator -i INVENTORY` with a real helm and the stand-in
gpu-operator chart (tests/charts), against a simulated cluster whose GPU nodes are backed by those
hosts (the sim plays the Operator; its validator reads what the hosts really have).

Proves the split of work between the two layers: the host phase installed the driver and the
toolkit, so the chart goes in with driver.enabled=false and toolkit.enabled=false, NFD runs on the
inventory's GPU nodes only, and the validator passes on every host from the host's own state. Then
a second run that changes nothing anywhere, and a host that lost its nvidia runtime reported.

One module fixture, tests in file order (each builds on the state the previous left). The sim runs
in this process, so the tests can count the writes it was sent.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuctl.kube.client import load_api_client
from gpuctl.kube.nodes import list_nodes
from gpuctl.sim.scenario import parse_scenario
from gpuctl.sim.server.host_links import links_from_inventory, with_host_nodes
from gpuctl.sim.server.http_server import SimServer
from tests.helm import HELM, OPERATOR_CHART, Helm, needs_helm
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow, needs_helm]
GPUS = 8
CPU_ONLY = {"podStartSeconds": 0.2, "devicePlugin": "absent", "nodes": [{"name": "cpu-0"}]}
CHART = OPERATOR_CHART
NAMESPACE = "gpu-operator"
DROPIN = "/etc/containerd/conf.d/99-nvidia.toml"
WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


@dataclass(frozen=True)
class OperatorCluster:
    nodes: list[TestNode]
    inventory: Path
    kubeconfig: Path
    server: SimServer
    helm_home: Path

    def writes(self) -> int:
        counts = self.server.requests_by_verb()
        return sum(counts.get(verb, 0) for verb in WRITE_VERBS)


def gpuctl(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@contextlib.contextmanager
def operator_cluster(
    work: Path, image: Path | None = None, image_nodes: int | None = None
) -> Iterator[OperatorCluster]:
    """Two hosts with 8 GPUs each, and a sim (in this process, so that tests can count its writes)
    with one CPU node plus a node per host. The hosts are bare, or the first `image_nodes` of them
    (all by default) start from `image`: hosts gpuctl's host phase prepared (tests/hosts/_image.py)."""
    skip_without_host_requirements()
    inventory = work / "hosts.yml"
    nodes = up(nodes=2, gpus=GPUS, inventory=inventory, image=image, image_nodes=image_nodes)
    server = None
    try:
        links = links_from_inventory(inventory)
        server = SimServer(with_host_nodes(parse_scenario(CPU_ONLY, "scenario"), links), host_links=links)
        server.start()
        kubeconfig = server.write_kubeconfig(work / "sim.kubeconfig")
        yield OperatorCluster(nodes, inventory, kubeconfig, server, work / "helm")
    finally:
        if server is not None:
            server.stop()
        down(inventory)


@pytest.fixture(scope="module")
def cluster(node_image: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OperatorCluster]:
    """Both hosts from the node image: the bare bootstrap is test_bootstrap.py's and
    test_bare_to_proven.py's subject; here the host phase runs for real on hosts it prepared before."""
    with operator_cluster(tmp_path_factory.mktemp("operator-on-hosts"), image=node_image) as started:
        yield started


def bootstrap(cluster: OperatorCluster, *args: str) -> tuple[int, dict[str, Any], str]:
    # The host phase takes no stack, chart or timeout: gpuctl refuses flags a phase does not use.
    stack = ["--stack", "operator", "--helm", HELM, "--chart", str(CHART), "--timeout", "120"]
    if args[:2] == ("--phase", "host"):
        stack = []
    result = gpuctl(
        "bootstrap", "-i", str(cluster.inventory), "--kubeconfig", str(cluster.kubeconfig),
        *stack, "-o", "json", *args,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else {}, result.stderr


def node_labels(cluster: OperatorCluster) -> dict[str, dict[str, str]]:
    api_client = load_api_client(cluster.kubeconfig, None)
    return {node.name: dict(node.labels) for node in list_nodes(api_client)}


def test_bootstrap_all_with_the_operator_takes_bare_hosts_to_proven(cluster: OperatorCluster) -> None:
    code, report, stderr = bootstrap(cluster, "--phase", "all")
    assert code == 0, json.dumps(report, indent=2)[:6000] + stderr[-2000:]
    assert [(p["name"], p["ok"]) for p in report["phases"]] == [
        ("host", True),
        ("cluster", True),
        ("verify", True),
    ]
    names = sorted(node.name for node in cluster.nodes)
    assert report["expected_gpus"] == dict.fromkeys(names, GPUS)  # from each host's PCI bus
    helm = report["cluster"]["helm"]
    assert helm["action"] == "installed"
    # The host phase installed the driver and the toolkit: the Operator's own containers stay off.
    assert helm["values"]["driver"] == {"enabled": False}
    assert helm["values"]["toolkit"]["enabled"] is False
    deployed = Helm(cluster, cluster.helm_home).json("get", "values", "gpu-operator", "-n", NAMESPACE)
    assert (deployed["driver"], deployed["toolkit"]["enabled"]) == ({"enabled": False}, False)
    # NFD's worker runs where gpuctl labelled the inventory's nodes, and those are exactly them.
    selector = helm["values"]["node-feature-discovery"]["worker"]["nodeSelector"]
    labels = node_labels(cluster)
    selected = sorted(name for name, node in labels.items() if selector.items() <= node.items())
    assert selected == names
    assert "cpu-0" not in selected
    assert [(n["name"], n["operator_validator"], n["ready"]) for n in report["cluster"]["nodes"]] == [
        (name, "ready", True) for name in names
    ]
    assert report["cluster"]["cluster_policies"] == {"cluster-policy": "ready"}
    assert {node["name"]: node["ok"] for node in report["verify"]["nodes"]} == dict.fromkeys(names, True)
    print("phase durations:", {p["name"]: p["duration_s"] for p in report["phases"]})


def test_verify_passes_and_reports_the_operators_validation(cluster: OperatorCluster) -> None:
    result = gpuctl("verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "60")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    data = json.loads(result.stdout)
    names = sorted(node.name for node in cluster.nodes)
    assert data["gpu_operator"]["validators"] == dict.fromkeys(names, "ready")
    for node in data["nodes"]:
        checks = {check["id"]: check["status"] for check in node["checks"]}
        assert checks["operator.validation"] == "pass"
        assert node["gpus"]["seen"] == GPUS  # nvidia-smi ran on the host itself


def test_second_run_changes_nothing_anywhere(cluster: OperatorCluster) -> None:
    code, report, stderr = bootstrap(cluster, "--phase", "host")
    assert code == 0, stderr[-2000:]
    assert [host["changed"] for host in report["hosts"]] == [0, 0]
    before = cluster.writes()
    code, report, stderr = bootstrap(cluster, "--phase", "cluster")
    assert code == 0, json.dumps(report, indent=2)[:4000] + stderr[-2000:]
    assert report["cluster"]["helm"]["action"] == "unchanged"
    assert report["cluster"]["writes"] == 0
    assert cluster.writes() == before  # no helm upgrade, no label, taint or apply sent
    (release,) = Helm(cluster, cluster.helm_home).json("list", "-n", NAMESPACE)
    assert release["revision"] == "1"


def test_a_host_losing_its_nvidia_runtime_is_reported_the_other_passes(cluster: OperatorCluster) -> None:
    broken, healthy = cluster.nodes
    code, _, err = node_exec(broken, ["sh", "-c", f": > {DROPIN}"])  # containerd without the nvidia runtime
    assert code == 0, err
    deadline = time.monotonic() + 60
    while True:  # the sim probes its hosts every second
        code, report, stderr = bootstrap(cluster, "--phase", "cluster", "--timeout", "5")
        nodes = {node["name"]: node for node in report["cluster"]["nodes"]}
        if not nodes[broken.name]["ready"] or time.monotonic() > deadline:
            break
    assert code == 1, json.dumps(report, indent=2)[:4000] + stderr[-2000:]
    assert nodes[healthy.name]["ready"] is True
    assert (nodes[broken.name]["ready"], nodes[broken.name]["allocatable"]) == (False, 0)
    problem = nodes[broken.name]["problem"]
    assert problem["diagnosis"] == "plugin.nvml-library-missing", problem
    assert "nvidia-ctk runtime configure" in problem["hint"]
    assert f"gpuctl bootstrap --phase host -i INVENTORY --limit {broken.name}" in problem["hint"]
    # The restart names the Operator's plugin pod, not gpuctl's own DaemonSet in kube-system.
    assert f"`kubectl -n {NAMESPACE} delete pod nvidia-device-plugin-daemonset-" in problem["hint"]
    # a host-layer cause: the host phase first, then the cluster phase again
    assert report["resume"] == (
        f"gpuctl bootstrap --phase host -i {cluster.inventory} --limit {broken.name} && "
        f"gpuctl bootstrap --phase cluster -i {cluster.inventory} --stack operator"
    )
    result = gpuctl("verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "30")
    assert result.returncode == 1
    assert {node["name"]: node["ok"] for node in json.loads(result.stdout)["nodes"]} == {
        broken.name: False,
        healthy.name: True,
    }


def test_the_host_phase_repairs_it_and_the_operator_stack_passes_again(cluster: OperatorCluster) -> None:
    broken, healthy = cluster.nodes
    code, report, stderr = bootstrap(cluster, "--phase", "host")
    assert code == 0, stderr[-2000:]
    assert {host["name"]: host["changed"] > 0 for host in report["hosts"]} == {
        broken.name: True,
        healthy.name: False,
    }
    code, report, stderr = bootstrap(cluster, "--phase", "cluster")
    assert code == 0, json.dumps(report, indent=2)[:4000] + stderr[-2000:]
    assert report["cluster"]["helm"]["action"] == "unchanged"
    assert {node["name"]: node["allocatable"] for node in report["cluster"]["nodes"]} == {
        broken.name: GPUS,
        healthy.name: GPUS,
    }
