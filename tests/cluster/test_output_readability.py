"""Tables people read: they fit 80 and 100 columns without splitting a word, end no line in spaces
when piped, name a problem many nodes share once (with the nodes), spell GPU products one way, and
-o wide adds columns to status."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.polling import wait_until

PRODUCT_WORDS = ("NVIDIA", "H100", "80GB", "HBM3")
HEALTHY = 3
BROKEN = 50


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Three healthy tainted H100 nodes and fifty with the same driver fault; its kubeconfig."""
    from gpuctl.kube.client import load_api_client
    from gpuctl.sim.scenario import parse_scenario
    from gpuctl.sim.server.http_server import SimServer

    scenario = {
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [
            {
                "name": "gpu-{i}",
                "count": HEALTHY,
                "gpus": 8,
                "gpuProduct": "NVIDIA-H100-80GB-HBM3",
                "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            },
            {"name": "bad-{i}", "count": BROKEN, "gpus": 8, "host": {"driver": "mismatch"}},
        ],
    }
    server = SimServer(parse_scenario(scenario, "scenario")).start()
    kubeconfig = server.write_kubeconfig(tmp_path_factory.mktemp("readability") / "kubeconfig")

    def advertised() -> bool:
        from kubernetes.client import CoreV1Api

        nodes = CoreV1Api(load_api_client(kubeconfig)).list_node().items
        return all(int((node.status.allocatable or {}).get("nvidia.com/gpu", "0")) == 8 for node in nodes)

    wait_until(advertised, "every node to advertise its GPUs")
    yield kubeconfig
    server.stop()


def _table_commands(kubeconfig: Path) -> dict[str, list[str]]:
    kc = ["--kubeconfig", str(kubeconfig)]
    return {
        "status": ["status", *kc],
        "verify": ["verify", *kc],
        "taint": ["taint-gpu-nodes", "--dry-run", *kc],
        "bootstrap": ["bootstrap", "--phase", "cluster", "--check", *kc],
    }


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("command", ["status", "verify", "taint", "bootstrap"])
def test_tables_fit_the_terminal_without_splitting_words(
    cluster: Path, cli: Any, monkeypatch: pytest.MonkeyPatch, command: str, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = cli(_table_commands(cluster)[command])
    assert "Traceback" not in result.output
    # Table rows (cells apart by two spaces or more) fit; prose lines stay whole sentences for grep.
    rows = [line for line in result.stdout.splitlines() if re.search(r"\S  +\S", line)]
    assert rows
    assert max(len(line) for line in rows) <= columns, result.stdout
    words = re.findall(r"\S+", result.stdout)
    if command == "bootstrap":  # its table lists the objects it would apply
        assert "kube-system/nvidia-device-plugin-daemonset" in words, result.stdout
    for name in [f"gpu-{i}" for i in range(HEALTHY)] if command != "bootstrap" else []:
        assert name in words, name
    if command in ("status", "verify"):
        # every healthy node's product, each word whole (not "H1" + "00")
        for word in PRODUCT_WORDS:
            assert words.count(word) >= HEALTHY, (word, result.stdout)


def test_preflight_table_fits_80_columns(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_nodes:\n      hosts:\n"
        "        gpu-host-with-a-long-name-0: {ansible_host: 127.0.0.1, ansible_port: 1}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("COLUMNS", "80")
    result = cli("preflight", "--inventory", inventory)
    assert result.exit_code != 0
    lines = result.stdout.splitlines()
    table = lines[: next(i for i, line in enumerate(lines) if "host(s) ready" in line)]
    assert max(len(line) for line in table) <= 80, result.stdout
    assert "gpu-host-with-a-long-name-0" in result.stdout.split()
    assert all(line == line.rstrip() for line in lines), result.stdout
    assert "ADDRESS" not in result.stdout
    wide = cli("preflight", "--inventory", inventory, "-o", "wide").stdout
    assert wide.split()[:2] == ["HOST", "ADDRESS"]
    assert "127.0.0.1" in wide.split()


@pytest.mark.parametrize("output", ["table", "wide"])
def test_no_line_ends_in_spaces_when_piped(cluster: Path, cli: Any, output: str) -> None:
    for argv in _table_commands(cluster).values():
        result = cli([*argv, "-o", output])
        assert result.stdout.strip(), argv
        for line in (result.stdout + result.stderr).splitlines():
            assert line == line.rstrip(), f"{argv}: {line!r}"


def test_one_problem_on_many_nodes_is_said_once_with_the_nodes(cluster: Path, cli: Any) -> None:
    result = cli("verify", "--kubeconfig", cluster)
    assert result.exit_code == 1
    assert f"nvidia-smi.run FAIL on {BROKEN} nodes: bad-[0-{BROKEN - 1}]" in result.stdout
    assert result.stdout.count("version mismatch") == 1
    assert result.stdout.count("hint: reboot") == 1
    assert "reboot NODE" in result.stdout  # the node's name, generic where many share the hint


def test_status_and_verify_spell_the_product_alike(
    cluster: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")

    def product_of(stdout: str) -> str:
        row = next(line for line in stdout.splitlines() if line.startswith("gpu-0 "))
        found = re.search(r"NVIDIA\S*( \S+){0,3}", row)
        assert found, row
        return found.group(0)

    status = product_of(cli("status", "--kubeconfig", cluster).stdout)
    verify = product_of(cli("verify", "--kubeconfig", cluster).stdout)
    assert status == verify == "NVIDIA H100 80GB HBM3"


def test_status_wide_adds_the_node_software(cluster: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    table = cli("status", "--kubeconfig", cluster).stdout
    wide = cli("status", "--kubeconfig", cluster, "-o", "wide").stdout
    for column in ("GPU MEMORY", "KUBELET", "RUNTIME", "KERNEL", "OS IMAGE"):
        assert column in wide
        assert column not in table
    row = next(line for line in wide.splitlines() if line.startswith("gpu-0 "))
    assert "containerd://" in row
    document = json.loads(cli("status", "--kubeconfig", cluster, "-o", "json").stdout)
    node = next(item for item in document["nodes"] if item["name"] == "gpu-0")
    assert node["kubelet_version"].startswith("v1.")
    assert node["container_runtime"].startswith("containerd://")
    assert node["gpu_memory_mib"] > 0
