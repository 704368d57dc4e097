"""`gpuctl sim up --hosts-from` whose hosts do not answer: it still serves (a host that comes up
later turns its node Ready, as a kubelet that starts posting does), names each host and why on one
warning line, counts their nodes, and shows them NotReady as a real node lifecycle controller does.
The hosts are real addresses: a closed port, and a port that closes before the SSH greeting."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.kube.client import load_api_client


@pytest.fixture
def mute_port() -> Iterator[int]:
    """A TCP port that accepts and closes at once (something that is no sshd)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = int(server.getsockname()[1])

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield port
    server.close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def inventory(tmp_path: Path, ports: dict[str, int]) -> Path:
    hosts = {name: {"ansible_host": "127.0.0.1", "ansible_port": port} for name, port in ports.items()}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": hosts}}}}))
    return path


def test_each_unreachable_host_is_named_and_its_node_is_not_ready(
    cli: Any, tmp_path: Path, mute_port: int
) -> None:
    refused = closed_port()
    hosts = inventory(tmp_path, {"gpu-refused": refused, "gpu-mute": mute_port})
    kubeconfig = tmp_path / "sim.kubeconfig"
    up = cli("sim", "up", "--hosts-from", hosts, "--kubeconfig", kubeconfig, "--detach")
    try:
        assert up.exit_code == 0, up.output
        assert ", 2 nodes)" in up.stdout, up.stdout  # not the scenario's 0: the hosts' nodes count
        warnings = [line for line in up.stderr.splitlines() if line.startswith("warning: node ")]
        assert sorted(warnings) == sorted(
            [
                f"warning: node gpu-refused is NotReady: its host did not answer: "
                f"{_user()}@127.0.0.1:{refused}: cannot connect: Connection refused "
                "(it turns Ready once it does)",
                f"warning: node gpu-mute is NotReady: its host did not answer: "
                f"{_user()}@127.0.0.1:{mute_port}: no SSH server answered there (the connection closed "
                "before the SSH greeting) (it turns Ready once it does)",
            ]
        ), up.stderr
        from kubernetes.client import CoreV1Api

        nodes: list[Any] = CoreV1Api(load_api_client(kubeconfig)).list_node().items
        ready = {node.metadata.name: _ready(node) for node in nodes}
        stopped = ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")
        assert ready == {"gpu-refused": stopped, "gpu-mute": stopped}
    finally:
        cli("sim", "down", "--kubeconfig", kubeconfig)


def _ready(node: Any) -> tuple[str, str, str]:
    condition = next(c for c in node.status.conditions if c.type == "Ready")
    return condition.status, condition.reason, condition.message


def _user() -> str:
    import getpass

    return getpass.getuser()
