"""`gpuctl_driver_source: distribution` on Debian 12: Debian's real NVIDIA packages on real test nodes.

The nodes' mirror carries Debian's own non-free packages (tests/hosts/_debian_archive.py), fetched
with apt from Debian's archive. The nodes share the machine's kernel: no module can load and DKMS
has no headers for that kernel, which is exactly a real host after the install and before its
reboot, and what the real nvidia-smi and dkms say about it is what gpuctl must report.

The module fixture bootstraps two fresh nodes once; every test reads that state or runs its own
(check mode, or a run that fails before changing anything), so their order does not matter.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuctl.cli.main import run
from gpuctl.core.bootstrap import run_host_bootstrap
from gpuctl.hosts.driver_state import REBOOT_REQUIRED
from gpuctl.report.bootstrap import host_json as bootstrap_json
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
DISTRIBUTION = (
    "-e", "gpuctl_driver_source=distribution",
    "-e", "gpuctl_driver_branch=535",
    "-e", "gpuctl_driver_open_kernel_modules=false",
)  # fmt: skip
# Verbatim from Debian 12's nvidia-smi 535.261.03 when the nvidia module is not loaded (exit 9).
NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running."
)
HEADLESS = {"nvidia-kernel-dkms", "nvidia-smi", "libcuda1", "nvidia-persistenced"}
REBOOT_TASK = "Driver | reboot to load the nvidia kernel module"


@dataclass(frozen=True)
class Installed:
    nodes: list[TestNode]
    report: dict[str, Any]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("distribution-nodes") / "hosts.yml"
    nodes = up(nodes=2, gpus=2, inventory=inventory)
    try:
        result = run_host_bootstrap(inventory_path=inventory, extra_args=DISTRIBUTION)
        yield Installed(nodes, bootstrap_json(result))
    finally:
        down(inventory)


def sh(node: TestNode, command: str) -> str:
    code, out, err = node_exec(node, ["sh", "-c", command])
    assert code == 0, f"{node.name}: {command}: {err}"
    return out


def test_debian_packages_install_pinned_and_held(installed: Installed) -> None:
    assert installed.report["ok"] is True, installed.report
    for node in installed.nodes:
        versions = dict(
            line.split() for line in sh(node, "dpkg-query -W -f '${Package} ${Version}\\n'").splitlines()
        )
        assert versions["nvidia-kernel-dkms"].startswith("535.")
        version = versions["nvidia-kernel-dkms"].split("-")[0]
        assert all(versions[name].startswith(version) for name in ("nvidia-smi", "libcuda1", "libnvidia-ml1"))
        assert "firmware-nvidia-gsp" in versions
        assert "dkms" in versions
        # Headless: no X server, no GL stack, not the nvidia-driver metapackage.
        assert not {"nvidia-driver", "xserver-xorg-core", "xserver-xorg-video-nvidia"} & set(versions)
        assert set(sh(node, "apt-mark showhold").split()) >= HEADLESS
        preferences = sh(node, "cat /etc/apt/preferences.d/gpuctl-nvidia-driver")
        assert f"Pin: version {version}-*" in preferences
        assert "Pin-Priority: 1001" in preferences
        policy = sh(node, "apt-cache policy nvidia-smi")
        assert f"Installed: {versions['nvidia-smi']}" in policy
        assert re.search(rf"\*\*\* {re.escape(versions['nvidia-smi'])} 1001$", policy, re.MULTILINE), policy
        sources = sh(node, "cat /etc/apt/sources.list.d/gpuctl-debian-nvidia.sources")
        assert "Components: main contrib non-free non-free-firmware" in sources


def test_second_run_changes_nothing(installed: Installed) -> None:
    result = bootstrap_json(
        run_host_bootstrap(inventory_path=installed.nodes[0].inventory, extra_args=DISTRIBUTION)
    )
    assert result["ok"] is True, result
    assert [host["changed"] for host in result["hosts"]] == [0, 0]


def test_real_nvidia_smi_says_the_module_is_not_loaded(installed: Installed) -> None:
    code, out, _ = node_exec(installed.nodes[0], ["nvidia-smi"])
    assert code == 9
    assert out.strip() == NOT_LOADED


def test_bootstrap_reports_reboot_required_and_dkms_without_headers(installed: Installed) -> None:
    for node, host in zip(installed.nodes, installed.report["hosts"], strict=True):
        kernel = sh(node, "uname -r").strip()
        driver = host["driver"]
        assert driver["state"] == "reboot_required"
        assert driver["reboot_required"] is True
        assert driver["message"] == f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {NOT_LOADED})"
        assert driver["dkms"].startswith(
            f"DKMS: no headers for the running kernel {kernel} (nvidia-current/535."
        )


def test_bootstrap_table_names_both(installed: Installed, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = str(installed.nodes[0].inventory)
    assert (
        run(
            [
                "bootstrap",
                "--phase",
                "host",
                "--inventory",
                inventory,
                "--tags",
                "driver",
                "--",
                *DISTRIBUTION,
            ]
        )
        == 0
    )
    out = " ".join(capsys.readouterr().out.split())
    for node in installed.nodes:
        assert f"{node.name}: {REBOOT_REQUIRED}" in out
        assert f"{node.name}: DKMS: no headers for the running kernel" in out


def test_preflight_reports_reboot_required_and_dkms(
    installed: Installed, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["preflight", "--output", "json", "--inventory", str(installed.nodes[0].inventory)])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report  # warnings only: the hosts can be bootstrapped
    for host in report["hosts"]:
        findings = {finding["id"]: finding for finding in host["findings"]}
        assert findings["driver"]["status"] == "warn"
        assert findings["driver"]["message"] == f"{REBOOT_REQUIRED} (nvidia-smi, exit 9: {NOT_LOADED})"
        assert findings["dkms"]["status"] == "warn"
        assert findings["dkms"]["message"].startswith("DKMS: no headers for the running kernel")


def test_if_needed_does_not_reboot_into_a_kernel_without_the_module(installed: Installed) -> None:
    result = run_host_bootstrap(
        inventory_path=installed.nodes[0].inventory,
        tags="driver",
        extra_args=(*DISTRIBUTION, "-e", "gpuctl_reboot_policy=if_needed"),
    )
    assert result.exit_code == 1
    assert {task.task for task in result.failed_tasks} == {
        "Driver | refuse to reboot into a kernel the module was not built for"
    }
    assert all("DKMS: no headers for the running kernel" in task.message for task in result.failed_tasks)
    assert all(host.changed == 0 for host in result.hosts)


def reboot_results(artifacts: Path) -> dict[str, dict[str, Any]]:
    """host -> result of the reboot task, from the events ansible-runner recorded."""
    events = [json.loads(path.read_text()) for path in artifacts.rglob("job_events/*.json")]
    return {
        event["event_data"]["host"]: event["event_data"]["res"]
        for event in events
        if event.get("event_data", {}).get("task") == REBOOT_TASK and event["event"] == "runner_on_ok"
    }


def test_if_needed_reaches_the_reboot_on_every_host_in_check_mode(installed: Installed) -> None:
    """The decision with real inputs (the pending-reboot marker, no module) leads to the reboot task.

    Check mode: ansible.builtin.reboot answers "rebooted" without rebooting (the nodes cannot: they
    share the machine's kernel), and the module check after the reboot is skipped.
    """
    result = run_host_bootstrap(
        inventory_path=installed.nodes[0].inventory,
        tags="driver",
        check=True,
        keep_artifacts=True,
        extra_args=(*DISTRIBUTION, "-e", "gpuctl_reboot_policy=if_needed", "-e", "gpuctl_reboot_serial=1"),
    )
    assert result.artifacts_dir is not None
    artifacts = Path(result.artifacts_dir)
    try:
        assert result.ok, result
        rebooted = reboot_results(artifacts)
    finally:
        shutil.rmtree(artifacts, ignore_errors=True)
    assert sorted(rebooted) == [node.name for node in installed.nodes]
    assert all(res.get("rebooted") is True and res.get("changed") is True for res in rebooted.values())
