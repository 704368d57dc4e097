"""Every host-side version pin, installed from the test mirror and read back from the node.

One node takes the role defaults (driver branch 580, toolkit 1.20: CDI through NVIDIA's refresh
units); the other is pinned to the older driver branch 570 and toolkit 1.16 (no refresh units, so
the role generates the CDI spec itself with `nvidia-ctk cdi generate`), then has its toolkit pin
moved to the default, as a user bumping the pin would. The runtime configuration must keep runc and
add nvidia in every case.

Both nodes start from node images (tests/hosts/_image.py) that the real host phase made from a bare
node, the one with the role defaults, the other with the older pins: what each bootstrap installed
is read back from the node, each bootstrap's own report from the image's build.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuctl.package_data import default_driver_branch, default_toolkit_version
from tests.hosts._image import OLDER_DRIVER_BRANCH, OLDER_PINS, OLDER_TOOLKIT, NodeImage
from tests.hosts.nodes import TestNode, down, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
GPUS = 2
REFRESH_SPEC = "/var/run/cdi/nvidia.yaml"
LEGACY_SPEC = "/etc/cdi/nvidia.yaml"
TOOLKIT_PACKAGES = ("nvidia-container-toolkit", "nvidia-container-toolkit-base", "libnvidia-container-tools",
                    "libnvidia-container1")  # fmt: skip


@dataclass(frozen=True)
class Run:
    code: int
    report: dict[str, Any]
    stderr: str

    def changed(self) -> int:
        (host,) = self.report["hosts"]
        return int(host["changed"])


def bootstrap(node: TestNode, *extra: str, options: tuple[str, ...] = ()) -> Run:
    """`gpuctl bootstrap --phase host` for this one node (more gpuctl `options`, such as --check),
    extra Ansible arguments after `--`."""
    argv = [sys.executable, "-m", "gpuctl", "bootstrap", "--phase", "host", "--output", "json",
            "--inventory", str(node.inventory), "--limit", node.name, *options]  # fmt: skip
    if extra:
        argv += ["--", *extra]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900, check=False)
    assert "Traceback" not in done.stderr
    return Run(done.returncode, json.loads(done.stdout), done.stderr)


def sh(node: TestNode, command: str) -> tuple[int, str]:
    code, out, _ = node_exec(node, ["sh", "-c", command])
    return code, out.strip()


def version(node: TestNode, package: str) -> str:
    return sh(node, f"dpkg-query -W -f '${{Version}}' {package}")[1]


def assert_runtime_keeps_runc(node: TestNode) -> None:
    code, dump = sh(node, "containerd config dump")
    assert code == 0
    assert "runtimes.runc]" in dump
    assert "runtimes.nvidia]" in dump
    assert "/usr/bin/nvidia-container-runtime" in dump


@contextmanager
def node_from(image: Path, inventory: Path) -> Iterator[TestNode]:
    """One node from `image`, up inside the `with`."""
    (started,) = up(nodes=1, gpus=GPUS, inventory=inventory, image=image)
    try:
        yield started
    finally:
        down(inventory)


def assert_prepared_the_bare_node(image: NodeImage) -> None:
    """The bootstrap that made `image` passed on its bare node and changed it."""
    (host,) = image.report["hosts"]
    assert host["ok"] is True, image.report
    assert int(host["changed"]) > 0, image.report


@pytest.fixture(scope="module")
def current(default_image: NodeImage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestNode]:
    """A node the role defaults' bootstrap prepared (the default image)."""
    assert_prepared_the_bare_node(default_image)
    with node_from(default_image.layer, tmp_path_factory.mktemp("pins-default-node") / "hosts.yml") as node:
        yield node


# --- the defaults ----------------------------------------------------------------------------------


def test_default_pins_are_installed_and_held(current: TestNode) -> None:
    node = current
    for package in TOOLKIT_PACKAGES:
        assert version(node, package) == default_toolkit_version(), package
    assert version(node, "nvidia-open").startswith(f"{default_driver_branch()}.")
    held = sh(node, "apt-mark showhold")[1].split()
    assert {"nvidia-open", *TOOLKIT_PACKAGES} <= set(held)
    assert sh(node, "nvidia-smi -L")[1].count("GPU ") == GPUS
    assert_runtime_keeps_runc(node)


def test_default_toolkit_keeps_the_cdi_spec_with_the_refresh_units(current: TestNode) -> None:
    node = current
    assert sh(node, "systemctl is-enabled nvidia-cdi-refresh.path nvidia-cdi-refresh.service")[1].split() == [
        "enabled",
        "enabled",
    ]
    assert sh(node, "systemctl is-active nvidia-cdi-refresh.path")[1] == "active"
    code, spec = sh(node, f"cat {REFRESH_SPEC}")
    assert code == 0, f"{REFRESH_SPEC} is missing"
    assert 'kind: "nvidia.com/gpu"' in spec
    assert sh(node, f"test -e {LEGACY_SPEC}")[0] != 0  # the refresh service's spec only
    devices = sh(node, "nvidia-ctk cdi list")[1].splitlines()
    assert devices == ["nvidia.com/gpu=0", "nvidia.com/gpu=1", "nvidia.com/gpu=all"]


def test_default_pins_rerun_changes_nothing(current: TestNode) -> None:
    node = current
    again = bootstrap(node)
    assert again.code == 0, again.report
    assert again.changed() == 0


def test_a_missing_cdi_spec_is_written_again(current: TestNode) -> None:
    """/var/run is emptied at boot; a re-run (like the service at boot) writes the spec again."""
    node = current
    assert sh(node, f"rm {REFRESH_SPEC}")[0] == 0
    again = bootstrap(node)
    assert again.code == 0, again.report
    assert again.changed() == 1  # the service run, nothing else
    assert sh(node, f"test -s {REFRESH_SPEC}")[0] == 0


# --- driver branch 570 and toolkit 1.16 --------------------------------------------------------------


@dataclass(frozen=True)
class OlderNode:
    """What the node held after the bootstrap with the older pins (read before the pin moves)."""

    node: TestNode
    versions: dict[str, str]
    held: list[str]
    apt_pin: str
    refresh_unit_found: bool
    legacy_spec: str
    rerun: Run


@pytest.fixture(scope="module")
def older(older_pins_image: NodeImage, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OlderNode]:
    """A node the bootstrap with driver branch 570 and toolkit 1.16 prepared (the older-pins image),
    then re-run with those pins."""
    assert_prepared_the_bare_node(older_pins_image)
    with node_from(older_pins_image.layer, tmp_path_factory.mktemp("pins-older-node") / "hosts.yml") as node:
        yield older_state(node)


def older_state(node: TestNode) -> OlderNode:
    assert_runtime_keeps_runc(node)
    return OlderNode(
        node=node,
        versions={package: version(node, package) for package in ("nvidia-open", *TOOLKIT_PACKAGES)},
        held=sh(node, "apt-mark showhold")[1].split(),
        apt_pin=sh(node, "cat /etc/apt/preferences.d/gpuctl-nvidia-driver")[1],
        refresh_unit_found=sh(node, "systemctl cat nvidia-cdi-refresh.service")[0] == 0,
        legacy_spec=sh(node, f"cat {LEGACY_SPEC}")[1],
        rerun=bootstrap(node, *OLDER_PINS),
    )


def test_older_pins_are_installed_and_held(older: OlderNode) -> None:
    for package in TOOLKIT_PACKAGES:
        assert older.versions[package] == OLDER_TOOLKIT, package
    assert older.versions["nvidia-open"].startswith(f"{OLDER_DRIVER_BRANCH}.")
    assert {"nvidia-open", *TOOLKIT_PACKAGES} <= set(older.held)
    assert f"Pin: version {OLDER_DRIVER_BRANCH}.*" in older.apt_pin
    assert older.rerun.code == 0, older.rerun.report
    assert older.rerun.changed() == 0


def test_toolkit_116_gets_its_cdi_spec_from_nvidia_ctk(older: OlderNode) -> None:
    assert not older.refresh_unit_found  # 1.16 has no refresh units
    assert 'kind: "nvidia.com/gpu"' in older.legacy_spec


def test_moving_the_toolkit_pin_upgrades_and_enables_the_refresh_units(older: OlderNode) -> None:
    node = older.node
    moved = bootstrap(node, "-e", f"gpuctl_driver_branch={OLDER_DRIVER_BRANCH}")
    assert moved.code == 0, moved.report
    for package in TOOLKIT_PACKAGES:
        assert version(node, package) == default_toolkit_version(), package
    assert version(node, "nvidia-open").startswith(f"{OLDER_DRIVER_BRANCH}.")
    assert sh(node, "systemctl is-enabled nvidia-cdi-refresh.service")[1] == "enabled"
    assert sh(node, f"test -s {REFRESH_SPEC}")[0] == 0
    assert_runtime_keeps_runc(node)
