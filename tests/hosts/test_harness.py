"""The test-node harness itself: real nodes, real SSH, real apt against the local mirror."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl import nvidia_smi
from tests.hosts import _mirror
from tests.hosts._fakepci import write_fake_bus
from tests.hosts._state import process_start_time
from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, harness_dir, load_nodes, node_exec, state_path, up

REPO_ROOT = Path(__file__).parents[2]


def _run(argv: list[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def _ssh(node: TestNode, command: str) -> subprocess.CompletedProcess[str]:
    return _run(node.ssh_argv(command))


def _recorded(inventory: Path) -> dict[str, list[dict[str, Any]]]:
    """The recorded processes (pid, start time), netns names, mounts and cgroups of an `up`."""
    resources = json.loads(state_path(inventory).read_text())["resources"]
    kinds = ("process", "netns", "mount", "cgroup")
    return {kind: [r for r in resources if r["kind"] == kind] for kind in kinds}


def _assert_nothing_left(recorded: dict[str, list[dict[str, Any]]]) -> None:
    for record in recorded["netns"]:
        assert record["name"] not in _netns_names()
    for record in recorded["mount"]:
        assert _mount_count(record["path"]) == 0
    for record in recorded["cgroup"]:
        assert not Path(record["path"]).exists()
    _assert_processes_gone(recorded)


def _netns_names() -> list[str]:
    return [line.split()[0] for line in _run(["ip", "netns", "list"]).stdout.splitlines()]


def _mount_count(path: str) -> int:
    return [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()].count(path)


def _assert_processes_gone(recorded: dict[str, list[dict[str, Any]]]) -> None:
    for record in recorded["process"]:
        assert process_start_time(int(record["pid"])) != record["start"], record["name"]


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[TestNode]]:
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("harness") / "hosts.yml"
    brought_up = up(nodes=2, gpus=4, inventory=inventory, owner_pid=os.getpid())
    yield brought_up
    down(inventory)


@pytest.mark.hosts
def test_ssh_checks_host_keys_and_lands_on_the_named_node(nodes: list[TestNode]) -> None:
    for node in nodes:
        answered = _ssh(node, "hostname && sudo -n id -u")
        assert answered.returncode == 0, answered.stderr
        assert answered.stdout.split() == [node.name, "0"]


@pytest.mark.hosts
def test_ssh_refuses_an_unknown_host_key(nodes: list[TestNode], tmp_path: Path) -> None:
    empty_known_hosts = tmp_path / "known_hosts"
    empty_known_hosts.write_text("")
    argv = [a.replace(str(nodes[0].known_hosts), str(empty_known_hosts)) for a in nodes[0].ssh_argv("true")]
    refused = _run(argv)
    assert refused.returncode == 255
    assert "Host key verification failed" in refused.stderr


@pytest.mark.hosts
def test_inventory_matches_the_contract(nodes: list[TestNode]) -> None:
    inventory = yaml.safe_load(nodes[0].inventory.read_text())
    group = inventory["all"]["children"]["gpu_nodes"]
    assert list(group["hosts"]) == ["gpu-node-0", "gpu-node-1"]
    host = group["hosts"]["gpu-node-1"]
    assert host["ansible_host"] == nodes[1].address
    assert host["ansible_user"] == "gpuadmin"
    assert "StrictHostKeyChecking=yes" in host["ansible_ssh_common_args"]
    assert Path(host["test_node_root"], "etc/hostname").read_text().strip() == "gpu-node-1"
    assert group["vars"]["gpuctl_cuda_repo_url"].endswith("/cuda/")


@pytest.mark.hosts
def test_nodes_see_their_fake_gpus_on_the_pci_bus(nodes: list[TestNode]) -> None:
    listed = _ssh(nodes[0], "cat /sys/bus/pci/devices/*/vendor /sys/bus/pci/devices/*/class")
    assert listed.stdout.split() == ["0x10de"] * 4 + ["0x030200"] * 4
    lspci = _ssh(nodes[0], "lspci -nn")
    assert lspci.stdout.count("[10de:2330]") == 4


@pytest.mark.hosts
def test_nodes_run_systemd_and_debians_containerd(nodes: list[TestNode]) -> None:
    rc, out, _ = node_exec(nodes[0], ["systemctl", "is-active", "containerd", "ssh"])
    assert (rc, out.split()) == (0, ["active", "active"])
    dumped = _run(["chroot", str(nodes[0].root), "containerd", "config", "dump"])
    assert "containerd.runtimes.runc]" in dumped.stdout


MIRROR_SETUP = """
set -e
mkdir -p /etc/apt/keyrings
for repo in cuda libnvidia-container; do
  curl -fsS "{base}/$repo/gpgkey" -o "/etc/apt/keyrings/$repo.asc"
  echo "deb [signed-by=/etc/apt/keyrings/$repo.asc] {base}/$repo/ /" > "/etc/apt/sources.list.d/$repo.list"
done
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q cuda-drivers=550.90.07-1 \
  nvidia-container-toolkit=1.16.2-1 nvidia-container-toolkit-base=1.16.2-1 \
  libnvidia-container-tools=1.16.2-1 libnvidia-container1=1.16.2-1
"""


@pytest.fixture(scope="module")
def mirror_installed(nodes: list[TestNode]) -> tuple[int, str, str]:
    """nodes[1] with the mirror's sources and the pinned stand-in packages installed by plain apt."""
    node = nodes[1]
    base = yaml.safe_load(node.inventory.read_text())["all"]["children"]["gpu_nodes"]["vars"][
        "gpuctl_cuda_repo_url"
    ].removesuffix("/cuda/")
    return node_exec(node, ["bash", "-c", MIRROR_SETUP.format(base=base)])


@pytest.mark.hosts
def test_apt_reaches_the_signed_mirror_and_nothing_else(
    nodes: list[TestNode], mirror_installed: tuple[int, str, str]
) -> None:
    node = nodes[1]
    rc, out, err = mirror_installed
    assert rc == 0, out + err
    assert "NO_PUBKEY" not in err
    _, route, _ = node_exec(node, ["ip", "route"])
    assert "default" not in route
    rc, _, _ = node_exec(node, ["curl", "-sS", "--max-time", "5", "http://deb.debian.org/"])
    assert rc != 0


@pytest.mark.hosts
def test_installed_stand_ins_print_the_nodes_gpus(
    nodes: list[TestNode], mirror_installed: tuple[int, str, str]
) -> None:
    node = nodes[1]
    assert mirror_installed[0] == 0, mirror_installed[1] + mirror_installed[2]
    _, listing, _ = node_exec(node, ["nvidia-smi", "-L"])
    listed = nvidia_smi.parse_list(listing)
    assert [gpu.name for gpu in listed] == ["NVIDIA H100 80GB HBM3"] * 4
    expected = nvidia_smi.fake_gpus(node.name, 4, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")
    assert [gpu.uuid for gpu in listed] == [gpu.uuid for gpu in expected]
    _, version, _ = node_exec(node, ["nvidia-ctk", "--version"])
    assert "version 1.16.2" in version
    rc, _, err = node_exec(node, ["nvidia-ctk", "cdi", "generate", "--output=/etc/cdi/nvidia.yaml"])
    assert rc == 0, err
    spec = yaml.safe_load((node.root / "etc/cdi/nvidia.yaml").read_text())
    assert [device["name"] for device in spec["devices"]] == ["0", "1", "2", "3", "all"]


@pytest.mark.hosts
def test_down_leaves_no_netns_mount_or_process(tmp_path: Path) -> None:
    skip_without_host_requirements()
    inventory = tmp_path / "hosts.yml"
    up(nodes=1, gpus=1, inventory=inventory)
    recorded = _recorded(inventory)
    assert recorded["process"]
    assert recorded["netns"]
    assert recorded["mount"]
    assert down(inventory) == []
    _assert_nothing_left(recorded)
    assert not harness_dir(inventory).exists()
    assert not inventory.exists()
    assert down(inventory) == []  # idempotent


@pytest.mark.hosts
def test_up_recovers_from_a_crashed_run(tmp_path: Path) -> None:
    skip_without_host_requirements()
    inventory = tmp_path / "hosts.yml"
    up(nodes=2, gpus=1, inventory=inventory)
    crashed = _recorded(inventory)
    for node in load_nodes(inventory):  # sshd dies with the nodes' managers: nothing answers
        _, sshd_pids, _ = node_exec(node, ["pgrep", "-x", "sshd"])
        for pid in sshd_pids.split():
            node_exec(node, ["kill", "-9", pid])
    for record in crashed["process"]:  # the harness and its children die; mounts and netns stay
        if process_start_time(int(record["pid"])) == record["start"]:
            os.kill(int(record["pid"]), signal.SIGKILL)
    again = up(nodes=2, gpus=1, inventory=inventory)
    try:
        answers = {node.name: _ssh(node, "true") for node in again}
        assert {name: (a.returncode, a.stderr) for name, a in answers.items()} == {
            node.name: (0, "") for node in again
        }
        _assert_processes_gone(crashed)
        # The new run may reuse the crashed run's names: each must exist once, not stacked.
        for record in _recorded(inventory)["mount"]:
            assert _mount_count(record["path"]) == 1
        assert sorted(_netns_names()).count(again[0].netns) == 1
    finally:
        assert down(inventory) == []


@pytest.mark.hosts
def test_up_removes_nodes_whose_owning_session_died(tmp_path: Path) -> None:
    skip_without_host_requirements()
    session = subprocess.Popen(["sleep", "600"])
    orphaned = tmp_path / "orphaned.yml"
    up(nodes=1, gpus=1, inventory=orphaned, owner_pid=session.pid)
    recorded = _recorded(orphaned)
    session.kill()
    session.wait()
    survivor = tmp_path / "survivor.yml"
    up(nodes=1, gpus=1, inventory=survivor)
    try:
        _assert_processes_gone(recorded)
        assert all(_mount_count(record["path"]) == 0 for record in recorded["mount"])
        assert not harness_dir(orphaned).exists()
        reused = {record["name"] for record in _recorded(survivor)["netns"]}
        assert all(r["name"] in reused or r["name"] not in _netns_names() for r in recorded["netns"])
    finally:
        assert down(survivor) == []
        assert down(orphaned) == []


def test_fake_bus_matches_nvidia_smi_bus_ids(tmp_path: Path) -> None:
    addresses = write_fake_bus(tmp_path / "devices", 10)
    expected = [nvidia_smi.pci_bus_id(i).lower().replace("00000000:", "0000:") for i in range(10)]
    assert addresses == expected
    assert (tmp_path / "devices" / addresses[0] / "vendor").read_text() == "0x10de\n"
    config = (tmp_path / "devices" / addresses[0] / "config").read_bytes()
    assert config[:4] == bytes([0xDE, 0x10, 0x30, 0x23])


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("dpkg-deb") is None or shutil.which("gpg") is None:
        pytest.skip("needs dpkg-deb and gpg: run .ci/install-host-deps.sh")
    cache = tmp_path_factory.mktemp("cache")
    os.environ["GPUCTL_TEST_CACHE"] = str(cache)
    try:
        return _mirror.ensure_mirror()
    finally:
        del os.environ["GPUCTL_TEST_CACHE"]


def _field(deb: Path, name: str) -> str:
    return _run(["dpkg-deb", "--field", str(deb), name]).stdout.strip()


def test_mirror_holds_both_pinnable_versions(mirror: Path) -> None:
    cuda = sorted(path.name for path in (mirror / "cuda").glob("*.deb"))
    assert "cuda-drivers_550.90.07-1_amd64.deb" in cuda
    assert "nvidia-open_570.86.15-1_amd64.deb" in cuda
    assert (mirror / "cuda/InRelease").read_text().startswith("-----BEGIN PGP SIGNED MESSAGE-----")
    toolkit = mirror / "libnvidia-container/nvidia-container-toolkit_1.17.8-1_amd64.deb"
    assert _field(toolkit, "Depends") == (
        "nvidia-container-toolkit-base (= 1.17.8-1), libnvidia-container-tools (= 1.17.8-1)"
    )


def test_stand_in_nvidia_smi_embeds_gpuctls_emulation(mirror: Path, tmp_path: Path) -> None:
    deb = mirror / "cuda/cuda-drivers_570.86.15-1_amd64.deb"
    _run(["dpkg-deb", "--extract", str(deb), str(tmp_path)])
    embedded = next(tmp_path.glob("usr/lib/gpuctl-standin/*/nvidia_smi.py"))
    assert embedded.read_bytes() == (REPO_ROOT / "gpuctl/nvidia_smi.py").read_bytes()
    script = (tmp_path / "usr/bin/nvidia-smi").read_text()
    assert 'DRIVER_VERSION = "570.86.15"' in script
    compiled = _run([sys.executable, "-m", "py_compile", str(tmp_path / "usr/bin/nvidia-smi")])
    assert compiled.returncode == 0, compiled.stderr


@pytest.mark.hosts
def test_cli_reports_bad_input_in_one_line(tmp_path: Path) -> None:
    skip_without_host_requirements()
    missing = tmp_path / "nowhere.yml"
    argv = [sys.executable, "-m", "tests.hosts.nodes", "exec", "--inventory", str(missing), "n0"]
    failed = subprocess.run(argv, capture_output=True, text=True, cwd=REPO_ROOT, check=False)
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1
    assert str(missing.parent) in failed.stderr
    down_argv = [sys.executable, "-m", "tests.hosts.nodes", "down", "--inventory", str(missing)]
    assert subprocess.run(down_argv, capture_output=True, cwd=REPO_ROOT, check=False).returncode == 0
