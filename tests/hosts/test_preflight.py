"""`gpuctl preflight` against real SSH test nodes (fresh ones: nothing installed yet)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.cli.main import run
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
GPUS = 2


@pytest.fixture(scope="module")
def fresh_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("preflight-nodes") / "hosts.yml"
    nodes = up(nodes=2, gpus=GPUS, inventory=inventory)
    yield nodes
    down(inventory)


def closed_loopback_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def preflight(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any], str]:
    code = run(["preflight", "--output", "json", *args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def edited_inventory(source: Path, target: Path, edit: Any) -> Path:
    data = yaml.safe_load(source.read_text())
    edit(data["all"]["children"]["gpu_nodes"])
    target.write_text(yaml.safe_dump(data))
    return target


def test_fresh_nodes_pass_preflight(fresh_nodes: list[TestNode], capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = preflight(capsys, "--inventory", str(fresh_nodes[0].inventory))
    assert code == 0, report
    assert report["schema"] == "gpuctl.preflight/v1"
    assert report["ok"] is True
    assert [host["name"] for host in report["hosts"]] == [node.name for node in fresh_nodes]
    for host in report["hosts"]:
        assert host["reachable"] is True
        findings = {finding["id"]: finding for finding in host["findings"]}
        assert findings["ssh"]["message"].endswith("host key verified")
        assert findings["gpus"]["message"].startswith(f"{GPUS} NVIDIA GPU(s) on the PCI bus")
        assert findings["os"]["message"] == "Debian GNU/Linux 12 (bookworm) is supported"
        assert findings["sudo"]["status"] == "pass"
        assert findings["container-runtime"]["message"].startswith("found containerd 1.6")
        assert findings["driver"]["message"].startswith("no NVIDIA driver installed")
        assert {"id", "status", "message", "hint"} <= set(host["findings"][0])


def test_table_output_and_limit(fresh_nodes: list[TestNode], capsys: pytest.CaptureFixture[str]) -> None:
    inventory = str(fresh_nodes[0].inventory)
    assert run(["preflight", "--inventory", inventory, "--limit", fresh_nodes[1].name]) == 0
    out = capsys.readouterr().out
    assert fresh_nodes[1].name in out
    assert fresh_nodes[0].name not in out
    assert "1 of 1 host(s) ready" in out


def test_unknown_host_key_is_refused_unless_explicitly_skipped(
    fresh_nodes: list[TestNode], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty_known_hosts = tmp_path / "known_hosts"
    empty_known_hosts.write_text("")

    def forget_host_keys(group: dict[str, Any]) -> None:
        for host in group["hosts"].values():
            host["ansible_ssh_common_args"] = (
                f"-o UserKnownHostsFile={empty_known_hosts} -o StrictHostKeyChecking=yes"
            )

    inventory = edited_inventory(fresh_nodes[0].inventory, tmp_path / "hosts.yml", forget_host_keys)
    code, report, _ = preflight(capsys, "--inventory", str(inventory))
    assert code == 3  # no host reachable
    for host in report["hosts"]:
        assert host["reachable"] is False
        assert "host key unknown" in host["findings"][0]["message"]
    code, report, err = preflight(capsys, "--inventory", str(inventory), "--insecure-skip-host-key-check")
    assert code == 0
    assert "host keys are NOT verified" in err
    assert report["hosts"][0]["findings"][0]["status"] == "warn"
    assert empty_known_hosts.read_text() == ""  # nothing recorded behind the user's back


def test_unreachable_host_is_reported_without_failing_the_others(
    fresh_nodes: list[TestNode], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def add_dead_host(group: dict[str, Any]) -> None:
        group["hosts"]["dead-node"] = {"ansible_host": "127.0.0.1", "ansible_port": closed_loopback_port()}

    inventory = edited_inventory(fresh_nodes[0].inventory, tmp_path / "hosts.yml", add_dead_host)
    code, report, _ = preflight(capsys, "--inventory", str(inventory))
    assert code == 1
    by_name = {host["name"]: host for host in report["hosts"]}
    assert by_name["dead-node"]["reachable"] is False
    assert "cannot connect" in by_name["dead-node"]["findings"][0]["message"]
    assert all(by_name[node.name]["ok"] for node in fresh_nodes)


def _hosts(inventory: Path) -> dict[str, dict[str, Any]]:
    hosts: dict[str, dict[str, Any]] = yaml.safe_load(inventory.read_text())["all"]["children"]["gpu_nodes"][
        "hosts"
    ]
    return hosts


def test_a_changed_host_key_is_refused(
    fresh_nodes: list[TestNode], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """known_hosts holds another key for each address (a reinstalled host, or a man in the middle)."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True)
    other_key = " ".join((tmp_path / "other.pub").read_text().split()[:2])
    stale_known_hosts = tmp_path / "known_hosts"
    addresses = [host["ansible_host"] for host in _hosts(fresh_nodes[0].inventory).values()]
    stale_known_hosts.write_text("".join(f"{address} {other_key}\n" for address in addresses))

    def use_stale_keys(group: dict[str, Any]) -> None:
        for host in group["hosts"].values():
            host["ansible_ssh_common_args"] = f"-o UserKnownHostsFile={stale_known_hosts}"

    inventory = edited_inventory(fresh_nodes[0].inventory, tmp_path / "hosts.yml", use_stale_keys)
    code, report, _ = preflight(capsys, "--inventory", str(inventory))
    assert code == 3
    for host in report["hosts"]:
        assert host["reachable"] is False
        message = host["findings"][0]["message"]
        assert "host key does not match the known_hosts entry (possible man-in-the-middle)" in message
        assert "ssh-keygen -R" in host["findings"][0]["hint"]
    # Ansible, which bootstrap runs with host key checking on, refuses the same hosts before any task.
    code = run(["bootstrap", "--phase", "host", "--inventory", str(inventory), "--output", "json"])
    bootstrap = json.loads(capsys.readouterr().out)
    assert code == 3, bootstrap  # every host unreachable
    assert all(host["unreachable"] and not host["ok"] and host["changed"] == 0 for host in bootstrap["hosts"])
    assert all(
        "REMOTE HOST IDENTIFICATION HAS CHANGED" in task["message"] for task in bootstrap["failed_tasks"]
    )


def test_ssh_config_fills_in_what_the_inventory_leaves_out(
    fresh_nodes: list[TestNode], tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The inventory names an alias only; ~/.ssh/config gives its address, user, key and known_hosts."""
    config_lines = []
    aliases: dict[str, dict[str, Any]] = {}
    for name, host in _hosts(fresh_nodes[0].inventory).items():
        known_hosts = host["ansible_ssh_common_args"].split("UserKnownHostsFile=")[1].split()[0]
        config_lines += [
            f"Host {name}-alias",
            f"  HostName {host['ansible_host']}",
            f"  User {host['ansible_user']}",
            f"  IdentityFile {host['ansible_ssh_private_key_file']}",
            f"  UserKnownHostsFile {known_hosts}",
        ]
        aliases[name] = {"ansible_host": f"{name}-alias"}
    (isolated_home / ".ssh").mkdir(mode=0o700)
    (isolated_home / ".ssh" / "config").write_text("\n".join(config_lines) + "\n")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": aliases}}}}))
    code, report, err = preflight(capsys, "--inventory", str(inventory))
    assert code == 0, err
    for host in report["hosts"]:
        findings = {finding["id"]: finding for finding in host["findings"]}
        assert host["reachable"] is True
        assert findings["sudo"]["message"].startswith("passwordless sudo works for gpuadmin"), findings[
            "sudo"
        ]
