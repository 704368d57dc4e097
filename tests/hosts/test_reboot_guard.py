"""The driver role never reboots the machine running gpuctl: its reboot tasks, for real, on this machine.

The inputs are those of a host whose driver was just installed and whose nvidia module is not
loaded; the connection is local. With `if_needed` the role must fail with its own message before
the reboot task; with `never` it only reports, and so it does for a host held as a node of a live
cluster. The pending-reboot marker goes to a temporary file.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from gpuctl.core.bootstrap import BootstrapResult, run_host_bootstrap
from gpuctl.core.bootstrap.reboots import RebootPlan
from tests.hosts.conftest import skip_without_host_requirements

pytestmark = [pytest.mark.hosts]
PLAYBOOK = Path(__file__).resolve().parent / "playbooks" / "reboot_guard.yml"
GUARD = "Driver | refuse to reboot the machine running gpuctl"


def controller_inventory(tmp_path: Path, policy: str) -> Path:
    inventory = tmp_path / "hosts.yml"
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    group_vars = {"gpuctl_reboot_policy": policy}
    document = {"all": {"children": {"gpu_nodes": {"hosts": {"controller": host}, "vars": group_vars}}}}
    inventory.write_text(yaml.safe_dump(document))
    return inventory


def run_guard(tmp_path: Path, policy: str, plan: RebootPlan | None = None) -> tuple[BootstrapResult, Path]:
    skip_without_host_requirements()  # the role writes its marker as root
    marker = tmp_path / "reboot-required"
    result = run_host_bootstrap(
        inventory_path=controller_inventory(tmp_path, policy),
        playbook=PLAYBOOK,
        extra_args=("-e", f"gpuctl_driver_reboot_marker={marker}"),
        reboot_plan=plan,
    )
    return result, marker


def test_if_needed_refuses_to_reboot_the_controller(tmp_path: Path) -> None:
    result, marker = run_guard(tmp_path, "if_needed")
    assert result.exit_code == 1
    (failed,) = result.failed_tasks
    assert failed.task == GUARD
    assert "it is the machine running gpuctl (local connection)" in failed.message
    assert marker.exists()  # the pending reboot is remembered for the next run


def test_never_only_reports_on_the_controller(tmp_path: Path) -> None:
    result, _ = run_guard(tmp_path, "never")
    assert result.ok, result
    (host,) = result.hosts
    assert host.driver is not None
    assert host.driver.reboot_required is True


def test_a_host_held_as_a_cluster_node_only_reports_with_the_drain_command(tmp_path: Path) -> None:
    """What `gpuctl bootstrap` does for a host that is a node of the cluster its kubeconfig reaches."""
    plan = RebootPlan(
        hosts=("controller",), cluster="https://10.0.0.1:6443", nodes=(("controller", "node-a"),)
    )
    result, marker = run_guard(tmp_path, "if_needed", plan)
    assert result.ok, result  # the guard never fired: the reboot tasks were not included
    (host,) = result.hosts
    assert host.driver is not None
    assert host.driver.reboot_required is True
    assert "drain it (`kubectl drain node-a --ignore-daemonsets`)" in host.driver.hint
    assert marker.exists()
