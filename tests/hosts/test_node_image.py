"""The node image (tests/hosts/_image.py) the host-tier modules start from when their subject is not
the bare bootstrap: a node from it is a host gpuctl's host phase prepared (after a reboot), with an
identity of its own, and the host phase finds nothing to change on it; a node of the same run
started without it is bare."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts.nodes import TestNode, down, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
GPUS = 4  # not the image's own count: the node's GPUs come from its PCI bus, read anew at boot


@pytest.fixture(scope="module")
def nodes(node_image: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    """gpu-node-0 from the image, gpu-node-1 bare."""
    inventory = tmp_path_factory.mktemp("node-image-nodes") / "hosts.yml"
    started = up(nodes=2, gpus=GPUS, inventory=inventory, image=node_image, image_nodes=1)
    yield started
    down(inventory)


def sh(node: TestNode, command: str) -> tuple[int, str]:
    code, out, err = node_exec(node, ["sh", "-c", command])
    return code, out + err


def test_a_node_from_the_image_has_the_driver_and_runtime_the_bare_one_has_not(nodes: list[TestNode]) -> None:
    prepared, bare = nodes
    code, listed = sh(prepared, "nvidia-smi -L")
    assert code == 0, listed
    assert listed.count("GPU ") == GPUS
    # Written at boot by the toolkit's refresh unit, from this node's own GPUs.
    code, spec = sh(prepared, "cat /var/run/cdi/nvidia.yaml")
    assert code == 0, spec
    assert "nvidia.com/gpu" in spec
    code, holds = sh(prepared, "apt-mark showhold")
    assert code == 0, holds
    assert holds.split(), "the image holds no package"
    code, found = sh(bare, "command -v nvidia-smi; apt-mark showhold")
    assert found.split() == [], found


def test_each_node_has_its_own_identity(nodes: list[TestNode]) -> None:
    identities = [
        sh(node, "hostname; cat /etc/machine-id /etc/ssh/ssh_host_ed25519_key.pub")[1] for node in nodes
    ]
    assert identities[0] != identities[1]
    for node in nodes:  # host key checking stays on: each node's key is the one `up` recorded
        login = subprocess.run(
            node.ssh_argv("hostname"), capture_output=True, text=True, timeout=60, check=False
        )
        assert (login.returncode, login.stdout.strip()) == (0, node.name), login.stderr


def test_the_host_phase_finds_nothing_to_change_on_the_image_node(nodes: list[TestNode]) -> None:
    prepared, _ = nodes
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "-i", str(prepared.inventory),
         "--limit", prepared.name, "-o", "json"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    hosts = json.loads(done.stdout)["hosts"]
    assert [(host["name"], host["ok"], host["changed"]) for host in hosts] == [(prepared.name, True, 0)]
