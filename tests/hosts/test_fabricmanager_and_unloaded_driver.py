"""NVSwitch nodes and a driver whose kernel module is not loaded, on real SSH test nodes.

Three fresh nodes: gpu-node-0 is an HGX node (two NVSwitches on its PCI bus); gpu-node-1 too, but
its driver "does not load" (the harness switch /run/gpuctl-test/driver-not-loaded, set before the
bootstrap: nvidia-smi fails with exit 9 as on a host whose module is not loaded yet, and the
stand-in Fabric Manager and nvidia-persistenced cannot start, like the real ones); gpu-node-2 has
no NVSwitch. The module fixtures are stages (preflight on the bare nodes, the bootstrap, preflight
after it); tests that change a node put it back or run after the stages they would disturb.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from gpuctl.core.bootstrap import run_host_bootstrap
from gpuctl.hosts.driver_state import REBOOT_REQUIRED
from gpuctl.nvidia_smi import DRIVER_NOT_LOADED
from gpuctl.package_data import default_driver_branch
from gpuctl.report.bootstrap import host_json
from tests.hosts._packages import DRIVER_VERSIONS
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
NVSWITCHES = 2
NOT_LOADED_SWITCH = "/run/gpuctl-test/driver-not-loaded"
REBOOT_MARKER = "/run/gpuctl-reboot-required"  # the driver role's, under /run: a reboot clears it
# The mirror's one version on the role's default branch; it also offers other branches (550, 570),
# whose Fabric Manager must not be picked.
DRIVER = next(v for v in DRIVER_VERSIONS if v.startswith(f"{default_driver_branch()}."))
SERVICES = ("nvidia-fabricmanager", "nvidia-persistenced")


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("hgx-nodes") / "hosts.yml"
    started = up(nodes=3, gpus=2, inventory=inventory, nvswitches=NVSWITCHES, nvswitch_nodes=2)
    sh(started[1], f"mkdir -p /run/gpuctl-test && touch {NOT_LOADED_SWITCH}")
    yield started
    down(inventory)


def sh(node: TestNode, command: str) -> str:
    code, out, err = node_exec(node, ["sh", "-c", command])
    assert code == 0, f"{node.name}: {command}: {err}"
    return out


def service_state(node: TestNode, service: str) -> tuple[str, str]:
    """(is-enabled, is-active) of a unit on the node."""
    _, enabled, _ = node_exec(node, ["systemctl", "is-enabled", service])
    _, active, _ = node_exec(node, ["systemctl", "is-active", service])
    return enabled.strip(), active.strip()


def preflight(node: TestNode) -> dict[str, dict[str, dict[str, str]]]:
    """node name → finding id → finding, from `gpuctl preflight -o json` on the whole inventory."""
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", "preflight", "--output", "json", "--inventory", str(node.inventory)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stdout + done.stderr  # warnings only: every host can be bootstrapped
    report = json.loads(done.stdout)
    return {host["name"]: {f["id"]: f for f in host["findings"]} for host in report["hosts"]}


def bootstrap(node: TestNode, limit: str | None = None) -> dict[str, Any]:
    return host_json(run_host_bootstrap(inventory_path=node.inventory, limit=limit))


@pytest.fixture(scope="module")
def bare_preflight(nodes: list[TestNode]) -> dict[str, dict[str, dict[str, str]]]:
    return preflight(nodes[0])


@dataclass(frozen=True)
class Bootstrapped:
    report: dict[str, Any]
    services: dict[str, dict[str, tuple[str, str]]]  # node → unit → (is-enabled, is-active), right after


@pytest.fixture(scope="module")
def bootstrapped(nodes: list[TestNode], bare_preflight: Any) -> Bootstrapped:  # noqa: ARG001 - bare first
    report = bootstrap(nodes[0])
    services = {node.name: {unit: service_state(node, unit) for unit in SERVICES} for node in nodes}
    return Bootstrapped(report, services)


@pytest.fixture(scope="module")
def preflight_after(nodes: list[TestNode], bootstrapped: Any) -> dict[str, dict[str, dict[str, str]]]:  # noqa: ARG001
    return preflight(nodes[0])


def test_preflight_on_bare_nodes_counts_the_nvswitches(
    nodes: list[TestNode], bare_preflight: dict[str, dict[str, dict[str, str]]]
) -> None:
    for node in nodes[:2]:
        nvswitch = bare_preflight[node.name]["nvswitch"]
        assert (nvswitch["status"], nvswitch["message"]) == (
            "pass",
            f"{NVSWITCHES} NVSwitch(es): bootstrap installs nvidia-fabricmanager",
        )
    assert bare_preflight[nodes[2].name]["nvswitch"]["message"] == "no NVSwitch: fabricmanager not needed"


def test_every_node_is_prepared(bootstrapped: Bootstrapped) -> None:
    assert bootstrapped.report["ok"] is True, bootstrapped.report
    assert [host["failed"] for host in bootstrapped.report["hosts"]] == [0, 0, 0]


def test_an_nvswitch_node_gets_fabric_manager_of_the_driver_version_running(
    nodes: list[TestNode], bootstrapped: Bootstrapped
) -> None:
    assert bootstrapped.report["ok"] is True, bootstrapped.report
    node = nodes[0]
    versions = sh(node, "dpkg-query -W -f '${Package} ${Version}\\n' nvidia-open nvidia-fabricmanager")
    assert dict(line.split() for line in versions.splitlines()) == {
        "nvidia-open": DRIVER,
        "nvidia-fabricmanager": DRIVER,
    }
    # The mirror offers Fabric Manager of other branches too: the driver's pin chose its own.
    assert "570.86.15-1" in sh(node, "apt-cache madison nvidia-fabricmanager")
    assert "nvidia-fabricmanager" in sh(node, "apt-mark showhold").split()
    assert bootstrapped.services[node.name]["nvidia-fabricmanager"] == ("enabled", "active")
    assert "Successfully configured all the available NVSwitches" in sh(
        node, "journalctl -u nvidia-fabricmanager --no-pager -o cat"
    )


def test_a_node_without_nvswitches_gets_no_fabric_manager(
    nodes: list[TestNode], bootstrapped: Bootstrapped
) -> None:
    assert bootstrapped.report["ok"] is True, bootstrapped.report
    code, _, _ = node_exec(nodes[2], ["dpkg-query", "-W", "nvidia-fabricmanager"])
    assert code != 0  # unknown to dpkg: never installed
    assert bootstrapped.services[nodes[2].name] == {
        "nvidia-fabricmanager": ("", "inactive"),  # no such unit
        "nvidia-persistenced": ("enabled", "active"),
    }


def test_unloaded_driver_is_installed_reported_and_its_daemons_wait(
    nodes: list[TestNode], bootstrapped: Bootstrapped
) -> None:
    """The role enables Fabric Manager and persistenced but starts neither without a driver (they
    would fail: `failed`, not `inactive`), and reports the reboot the module needs."""
    node = nodes[1]
    host = next(host for host in bootstrapped.report["hosts"] if host["name"] == node.name)
    assert host["ok"] is True, bootstrapped.report
    assert host["driver"]["state"] == "reboot_required"
    assert (
        host["driver"]["message"] == f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {DRIVER_NOT_LOADED[0].strip()})"
    )
    assert bootstrapped.services[node.name] == dict.fromkeys(SERVICES, ("enabled", "inactive"))


def test_preflight_after_the_bootstrap(
    nodes: list[TestNode], preflight_after: dict[str, dict[str, dict[str, str]]]
) -> None:
    running, unloaded, plain = (preflight_after[node.name] for node in nodes)
    assert running["nvswitch"]["status"] == "pass"
    assert (
        running["nvswitch"]["message"] == f"{NVSWITCHES} NVSwitch(es): nvidia-fabricmanager {DRIVER} active"
    )
    assert running["driver"]["message"].startswith(f"driver {DRIVER.split('-')[0]} installed")
    assert unloaded["driver"]["status"] == "warn"
    assert (
        unloaded["driver"]["message"]
        == f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {DRIVER_NOT_LOADED[0].strip()})"
    )
    assert unloaded["nvswitch"]["status"] == "pass"
    assert unloaded["nvswitch"]["message"].endswith(
        f"nvidia-fabricmanager {DRIVER} enabled, starts once the driver is loaded"
    )
    assert plain["nvswitch"]["message"] == "no NVSwitch: fabricmanager not needed"


@pytest.mark.usefixtures("preflight_after")
def test_after_the_reboot_the_next_run_starts_the_daemons(nodes: list[TestNode]) -> None:
    """A reboot loads the module and clears /run (the role's marker with it); the nodes share the
    machine's kernel, so the switch is removed instead."""
    node = nodes[1]
    sh(node, f"rm -f {NOT_LOADED_SWITCH} {REBOOT_MARKER}")
    report = bootstrap(node, limit=node.name)
    (host,) = report["hosts"]
    assert host["ok"] is True, report
    assert host["driver"]["state"] == "working", host
    assert host["driver"]["reboot_required"] is False
    assert host["changed"] >= len(SERVICES)  # the two starts
    for service in SERVICES:
        assert service_state(node, service) == ("enabled", "active"), service


@pytest.mark.usefixtures("preflight_after")
def test_missing_or_stopped_fabric_manager_is_reported_and_bootstrap_restores_it(
    nodes: list[TestNode],
) -> None:
    node = nodes[0]
    sh(node, "systemctl disable --now nvidia-fabricmanager")
    stopped = preflight(node)[node.name]["nvswitch"]
    assert stopped["status"] == "warn"
    assert stopped["message"] == (
        f"{NVSWITCHES} NVSwitch(es) but nvidia-fabricmanager is not running (inactive, disabled): "
        "CUDA fails with 'system not yet initialized' (error 802)"
    )
    assert "systemctl enable --now nvidia-fabricmanager" in stopped["hint"]
    sh(node, "apt-mark unhold nvidia-fabricmanager && dpkg --purge nvidia-fabricmanager")
    missing = preflight(node)[node.name]["nvswitch"]
    assert missing["status"] == "warn"
    assert missing["message"].endswith("nvidia-fabricmanager is not installed: CUDA fails with "
                                       "'system not yet initialized' (error 802)")  # fmt: skip
    assert f"gpuctl bootstrap --phase host --limit {node.name}" in missing["hint"]
    report = bootstrap(node, limit=node.name)
    assert report["ok"] is True, report
    assert report["hosts"][0]["changed"] > 0
    assert service_state(node, "nvidia-fabricmanager") == ("enabled", "active")
    assert sh(node, "dpkg-query -W -f '${Version}' nvidia-fabricmanager") == DRIVER
    assert preflight(node)[node.name]["nvswitch"]["status"] == "pass"
