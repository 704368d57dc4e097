"""The run that proves the product: bare Debian test nodes → `gpuctl bootstrap --phase all` →
a passing verify, through a simulated cluster whose GPU nodes are backed by those real hosts
(`gpuctl sim up --hosts-from`): their GPUs, container runtime and verification pods' nvidia-smi
output come from the hosts over SSH. Then a no-op second run, then a broken host diagnosed.

One module fixture, tests in file order (each builds on the state the previous left).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
GPUS = 8
CPU_ONLY = {"podStartSeconds": 0.2, "devicePlugin": "absent", "nodes": [{"name": "cpu-0"}]}
DROPIN = "/etc/containerd/conf.d/99-nvidia.toml"


def gpuctl(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[TestNode], Path, Path]]:
    """Two bare hosts with 8 GPUs each, and a sim with one CPU node plus a node per host."""
    skip_without_host_requirements()
    work = tmp_path_factory.mktemp("bare-to-proven")
    inventory = work / "hosts.yml"
    nodes = up(nodes=2, gpus=GPUS, inventory=inventory)
    scenario = work / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(CPU_ONLY))
    kubeconfig = work / "sim.kubeconfig"
    try:
        started = gpuctl(
            "sim", "up", "--detach", "--scenario", str(scenario), "--hosts-from", str(inventory),
            "--kubeconfig", str(kubeconfig),
        )  # fmt: skip
        assert started.returncode == 0, started.stderr
        yield nodes, inventory, kubeconfig
    finally:
        gpuctl("sim", "down", "--kubeconfig", str(kubeconfig))
        down(inventory)


def bootstrap_all(inventory: Path, kubeconfig: Path) -> tuple[int, dict[str, Any]]:
    result = gpuctl(
        "bootstrap", "--phase", "all", "-i", str(inventory), "--kubeconfig", str(kubeconfig),
        "--timeout", "120", "-o", "json",
    )  # fmt: skip
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


def test_bare_hosts_are_not_gpu_ready_before_bootstrap(cluster: Any) -> None:
    nodes, _, kubeconfig = cluster
    status = gpuctl("status", "--kubeconfig", str(kubeconfig), "-o", "json")
    assert status.returncode == 0, status.stderr
    assert all(row["gpu_capacity"] == 0 for row in json.loads(status.stdout)["nodes"])
    listed = gpuctl(
        "verify", "--kubeconfig", str(kubeconfig), "--expect-nodes", ",".join(n.name for n in nodes)
    )
    assert listed.returncode == 1


def test_bootstrap_all_takes_bare_hosts_to_proven(cluster: Any) -> None:
    nodes, inventory, kubeconfig = cluster
    code, report = bootstrap_all(inventory, kubeconfig)
    assert code == 0, json.dumps(report, indent=2)[:4000]
    assert [(p["name"], p["ok"]) for p in report["phases"]] == [
        ("host", True),
        ("cluster", True),
        ("verify", True),
    ]
    assert report["expected_gpus"] == {node.name: GPUS for node in nodes}  # from each host's PCI bus
    verified = {node["name"]: node for node in report["verify"]["nodes"]}
    for node in nodes:
        assert verified[node.name]["ok"] is True
        # The contract's keys (verify may add more, e.g. physical and mig_devices).
        gpus = verified[node.name]["gpus"]
        assert {key: gpus[key] for key in ("expected", "capacity", "allocatable", "seen")} == dict.fromkeys(
            ("expected", "capacity", "allocatable", "seen"), GPUS
        )
    assert "cpu-0" not in verified
    print("phase durations:", {p["name"]: p["duration_s"] for p in report["phases"]})


def test_second_run_changes_nothing_anywhere(cluster: Any) -> None:
    _, inventory, kubeconfig = cluster
    code, report = bootstrap_all(inventory, kubeconfig)
    assert code == 0
    assert [host["changed"] for host in report["hosts"]] == [0, 0]
    assert report["cluster"]["writes"] == 0
    assert {obj["action"] for obj in report["cluster"]["objects"]} == {"unchanged"}


def test_a_host_losing_its_nvidia_runtime_is_diagnosed_the_other_passes(cluster: Any) -> None:
    nodes, _, kubeconfig = cluster
    broken, healthy = nodes
    code, _, err = node_exec(broken, ["sh", "-c", f": > {DROPIN}"])  # containerd without the nvidia runtime
    assert code == 0, err
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = json.loads(gpuctl("status", "--kubeconfig", str(kubeconfig), "-o", "json").stdout)
        if {row["name"]: row["gpus"]["capacity"] for row in status["nodes"]}.get(broken.name, 0) == 0:
            break
        time.sleep(1)
    result = gpuctl("verify", "--kubeconfig", str(kubeconfig), "-o", "json", "--timeout", "60")
    assert result.returncode == 1, result.stdout[-2000:]
    verified = {node["name"]: node for node in json.loads(result.stdout)["nodes"]}
    assert verified[healthy.name]["ok"] is True
    assert verified[healthy.name]["gpus"]["seen"] == GPUS
    failing = [check for check in verified[broken.name]["checks"] if check["status"] == "fail"]
    capacity = next(check for check in failing if check["id"] == "gpu.capacity")
    assert capacity.get("diagnosis") == "plugin.nvml-library-missing", verified[broken.name]["checks"]
    assert capacity["diagnosis"] == "plugin.nvml-library-missing"
    assert "nvidia-ctk runtime configure" in capacity["hint"]
