"""Fixtures of the host tier: real SSH test nodes (see tests/hosts/nodes.py and docs/testing.md)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hosts._image import OLDER_PINS, NodeImage, build_image
from tests.hosts.nodes import TestNode, down, up

# Tools the harness runs on the machine that brings the nodes up (.ci/install-host-deps.sh).
HOST_TOOLS = ("debootstrap", "systemd-nspawn", "nsenter", "ip", "ssh", "ssh-keygen", "dpkg-deb", "gpg")
TEST_NODE_COUNT = 2
TEST_NODE_GPUS = 8


def missing_host_requirement() -> str | None:
    """Why the nodes cannot come up on this machine, or None when they can."""
    if os.geteuid() != 0:
        return "the host tier needs root (network namespaces, overlay mounts, systemd-nspawn)"
    missing = [tool for tool in HOST_TOOLS if shutil.which(tool) is None]
    if missing:
        return f"missing {', '.join(missing)}: run .ci/install-host-deps.sh"
    return None


def skip_without_host_requirements() -> None:
    reason = missing_host_requirement()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="session")
def test_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    """Two nodes with eight fake H100s each, up once per session; `node.inventory` is their inventory.

    Set GPUCTL_TEST_KEEP_NODES=1 to leave them running after the session (to poke at them by hand).
    A session killed before teardown leaves them to the next `up`, which removes them (owner gone).
    """
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("test-nodes") / "hosts.yml"
    keep = os.environ.get("GPUCTL_TEST_KEEP_NODES") == "1"
    owner = None if keep else os.getpid()
    nodes = up(nodes=TEST_NODE_COUNT, gpus=TEST_NODE_GPUS, inventory=inventory, owner_pid=owner)
    yield nodes
    if not keep:
        down(inventory)


@pytest.fixture(scope="session")
def default_image(tmp_path_factory: pytest.TempPathFactory) -> NodeImage:
    """A node image (tests/hosts/_image.py): hosts gpuctl's host phase prepared with the role defaults,
    built on first use, once per session, for the modules whose subject is not the bare bootstrap;
    with the report of the bootstrap that made it."""
    skip_without_host_requirements()
    return build_image(tmp_path_factory.mktemp("node-image"), log=lambda line: print(line, file=sys.stderr))


@pytest.fixture(scope="session")
def node_image(default_image: NodeImage) -> Path:
    """The default image's layer: `up(..., image=node_image)` starts nodes from it."""
    return default_image.layer


@pytest.fixture(scope="session")
def older_pins_image(tmp_path_factory: pytest.TempPathFactory) -> NodeImage:
    """A node image on the older driver branch and toolkit pins (OLDER_PINS), built on first use, once
    per session: the start of the modules that move those pins (tests/hosts/test_pins.py,
    tests/hosts/test_driver_upgrade.py)."""
    skip_without_host_requirements()
    work = tmp_path_factory.mktemp("older-pins-image")
    return build_image(work, log=lambda line: print(line, file=sys.stderr), extra_args=OLDER_PINS)
