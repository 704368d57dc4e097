"""Real SSH test nodes for the host tier: ``python -m tests.hosts.nodes up|down|exec``.

    python -m tests.hosts.nodes up --nodes 2 --gpus 8 --inventory /tmp/nodes/hosts.yml
    python -m tests.hosts.nodes exec --inventory /tmp/nodes/hosts.yml gpu-node-0 -- nvidia-smi -L
    python -m tests.hosts.nodes down --inventory /tmp/nodes/hosts.yml

Each node is a Debian 12 overlay booted with systemd-nspawn in its own network namespace, reachable
over SSH with the inventory `up` writes. Everything `up` creates is recorded in
``<inventory stem>.nodes/state.json`` next to the inventory; `down` removes exactly that and is
idempotent, and `up` first tears down whatever a crashed earlier run left behind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hosts import _debian_archive, _mirror, _network, _node, _registry
from tests.hosts._fakepci import H100_SXM5_80GB
from tests.hosts._inventory import inventory_document, write_inventory, write_known_hosts
from tests.hosts._rootfs import ADMIN_USER, ensure_rootfs
from tests.hosts._state import HarnessState, mounted, teardown

NODE_NAME = "gpu-node-{index}"
MAX_NODES = 200  # node addresses are .10 to .209 of the run's /24
NODE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class TestNode:
    """A running node, as the tests and the inventory see it."""

    __test__ = False  # not a pytest test class, despite the name

    name: str
    address: str
    netns: str
    root: Path  # the overlay's merged directory: `test_node_root`
    init_pid: int  # the node's systemd, seen from the root namespace
    ssh_user: str
    ssh_key: Path
    known_hosts: Path
    inventory: Path

    def ssh_argv(self, *command: str) -> list[str]:
        """`ssh` to the node with host key checking on, then `command`."""
        return [
            "ssh",
            "-i",
            str(self.ssh_key),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            f"UserKnownHostsFile={self.known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "ConnectTimeout=10",
            f"{self.ssh_user}@{self.address}",
            *command,
        ]


def harness_dir(inventory: Path) -> Path:
    inventory = Path(inventory).absolute()
    return inventory.parent / f"{inventory.stem}.nodes"


def state_path(inventory: Path) -> Path:
    return harness_dir(inventory) / "state.json"


def load_nodes(inventory: Path) -> list[TestNode]:
    """The nodes a previous `up` with this inventory brought up."""
    if not state_path(inventory).exists():
        raise RuntimeError(
            f"no test nodes recorded for {inventory} ({state_path(inventory)} is missing): "
            f"run python -m tests.hosts.nodes up --inventory {inventory}"
        )
    state = HarnessState.load(state_path(inventory))
    facts = state.facts
    return [
        TestNode(
            name=node["name"],
            address=node["address"],
            netns=node["netns"],
            root=Path(node["root"]),
            init_pid=node["init_pid"],
            ssh_user=ADMIN_USER,
            ssh_key=Path(facts["ssh_key"]),
            known_hosts=Path(facts["known_hosts"]),
            inventory=Path(inventory).absolute(),
        )
        for node in facts["nodes"]
    ]


def node_exec(
    node: TestNode, argv: Sequence[str], *, input_text: str | None = None, timeout: float = 300
) -> tuple[int, str, str]:
    """Run `argv` inside the node's namespaces (mount, UTS, IPC, net, PID, cgroup, root)."""
    enter = ["nsenter", f"--target={node.init_pid}", "--mount", "--uts", "--ipc", "--net"]
    enter += ["--pid", "--cgroup", "--root", "--wd", "--", *argv]
    completed = subprocess.run(
        enter,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={"PATH": NODE_PATH, "LANG": "C.UTF-8", "HOME": "/root", "TERM": "dumb"},
    )
    return completed.returncode, completed.stdout, completed.stderr


def down(inventory: Path, log: Log = _stderr) -> list[str]:
    """Remove everything `up` recorded for `inventory`; returns what could not be removed."""
    started = time.monotonic()
    directory = harness_dir(inventory)
    problems: list[str] = []
    if state_path(inventory).exists():
        problems = teardown(HarnessState.load(state_path(inventory)))
    problems += _unmount_below(directory)
    if not problems:
        _registry.unregister(state_path(inventory))
        shutil.rmtree(directory, ignore_errors=True)
    log(f"down: {inventory} in {time.monotonic() - started:.1f} s")
    return problems


def _unmount_below(directory: Path) -> list[str]:
    """Mounts under the harness directory that no state records (a crash before recording)."""
    prefix = str(directory.absolute()) + "/"
    with open("/proc/self/mounts") as mounts:
        targets = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
    for target in sorted(targets, reverse=True):
        subprocess.run(["umount", "--lazy", target], capture_output=True, check=False)
    return [f"mount {target}" for target in targets if mounted(target)]


def _generate_admin_key(directory: Path) -> str:
    key = directory / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "gpuctl-tests", "-f", str(key)],
        check=True,
        capture_output=True,
    )
    return key.with_suffix(".pub").read_text()


def _wait_for_port(address: str, port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the mirror did not listen on {address}:{port}")


def _wait_for_login(nodes: list[TestNode], timeout: float = 60) -> None:
    """Until `ssh true` works on every node: sshd's banner comes before the node lets users in.

    While systemd boots, /run/nologin makes PAM refuse every login but root's, so a node whose
    sshd answers may still turn the admin away for a moment.
    """
    deadline = time.monotonic() + timeout
    pending = {node.name: node for node in nodes}
    refusals: dict[str, str] = {}
    while pending and time.monotonic() < deadline:
        logins = {
            name: subprocess.Popen(
                node.ssh_argv("true"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
            )
            for name, node in pending.items()
        }
        for name, login in logins.items():
            _, stderr = login.communicate()
            if login.returncode == 0:
                del pending[name]
            else:
                refusals[name] = " ".join(stderr.split()) or f"exit {login.returncode}"
        if pending:
            time.sleep(0.2)
    if pending:
        failures = "; ".join(
            f"{name}: {refusals[name]} [{_boot_state(node)}]" for name, node in pending.items()
        )
        raise RuntimeError(f"SSH login did not succeed within {timeout:.0f} s: {failures}")


def _boot_state(node: TestNode) -> str:
    """What the node's systemd is doing, for the error of a node that will not let the admin in."""
    _, state, _ = node_exec(node, ["systemctl", "is-system-running"], timeout=10)
    _, jobs, _ = node_exec(node, ["systemctl", "list-jobs", "--no-legend", "--no-pager"], timeout=10)
    _, failed, _ = node_exec(node, ["systemctl", "--failed", "--no-legend", "--no-pager"], timeout=10)
    pending_jobs = " | ".join(" ".join(line.split()) for line in jobs.splitlines()[:8])
    return (
        f"system {state.strip() or '?'}; jobs: {pending_jobs or 'none'}; failed: {failed.strip() or 'none'}"
    )


class _Timer:
    def __init__(self, log: Log) -> None:
        self.log = log
        self.started = self.last = time.monotonic()

    def lap(self, what: str) -> None:
        now = time.monotonic()
        self.log(f"up: {what} in {now - self.last:.1f} s")
        self.last = now


def up(
    *,
    nodes: int,
    gpus: int,
    inventory: Path,
    device_id: int = H100_SXM5_80GB,
    nvswitches: int = 0,
    nvswitch_nodes: int | None = None,
    owner_pid: int | None = None,
    image: Path | None = None,
    image_nodes: int | None = None,
    log: Log = _stderr,
) -> list[TestNode]:
    """Bring up `nodes` nodes with `gpus` fake GPUs each; write `inventory`; return the nodes.

    With `image` (a node image, tests/hosts/_image.py), the first `image_nodes` nodes (all of them by
    default) start from it, as hosts gpuctl already prepared, instead of bare.

    `nvswitches` NVSwitches go on the first `nvswitch_nodes` nodes (all of them by default), so one
    run can hold HGX nodes next to nodes without NVSwitches.
    With `owner_pid` (a test session), a later `up` removes the nodes once that process is gone.
    """
    if not 1 <= nodes <= MAX_NODES or min(gpus, nvswitches, nvswitch_nodes or 0) < 0:
        raise ValueError(f"--nodes must be 1..{MAX_NODES}, --gpus, --nvswitches, --nvswitch-nodes >= 0")
    inventory = Path(inventory).absolute()
    timer = _Timer(log)
    _registry.sweep_orphans(log)
    leftovers = down(inventory, log=lambda _: None)
    if leftovers:
        raise RuntimeError(f"cannot clean the previous run of {inventory}: {', '.join(leftovers)}")
    rootfs = ensure_rootfs(log)
    mirror = _mirror.ensure_mirror()
    debian_archive = _debian_archive.ensure_archive(rootfs, log)
    timer.lap("rootfs and mirrors ready")
    directory = harness_dir(inventory)
    directory.mkdir(parents=True)
    state = HarnessState(state_path(inventory))
    _registry.register(state, owner_pid)
    state.record("dir", path=str(directory))
    state.record("file", path=str(inventory))
    try:
        hardware = _node.FakeHardware(gpus, device_id, nvswitches, nvswitch_nodes)
        www = _mirror.publish(harness_dir(inventory) / "www", mirror, debian_archive)
        images = [image if image_nodes is None or index < image_nodes else None for index in range(nodes)]
        _bring_up(state, rootfs, www, nodes=nodes, hardware=hardware, timer=timer, images=images)
        write_inventory(inventory, _inventory_for(state))
        ready = load_nodes(inventory)
        _wait_for_login(ready)
        timer.lap("the admin logs in over SSH on every node")
    except BaseException:
        teardown(state)
        _registry.unregister(state.path)
        raise
    log(f"up: {nodes} node(s) ready in {time.monotonic() - timer.started:.1f} s: {inventory}")
    return ready


def _bring_up(
    state: HarnessState,
    rootfs: Path,
    mirror: Path,
    *,
    nodes: int,
    hardware: _node.FakeHardware,
    timer: _Timer,
    images: list[Path | None],
) -> None:
    directory = state.path.parent
    subnet = _network.claim_subnet(state)
    server = _mirror.serve(mirror, subnet.gateway, directory / "mirror.log")
    state.record_process(server.pid, "mirror http.server", graceful=True)
    admin_key = _generate_admin_key(directory)
    booting = []
    for index in range(nodes):
        layout = _node.NodeLayout(NODE_NAME.format(index=index), directory / f"node-{index}")
        netns = _network.add_node_network(state, subnet, index, layout.name)
        _node.mount_overlay(state, layout, rootfs, images[index])
        host_key = _node.prepare_root(layout, subnet.node_address(index), admin_key, subnet.gateway)
        nspawn_pid = _node.boot(state, layout, netns, hardware.of_node(index))
        booting.append((index, layout, netns, host_key, nspawn_pid))
    timer.lap(f"{nodes} node(s) started")
    host_keys, facts = {}, []
    for index, layout, netns, host_key, nspawn_pid in booting:
        init_pid = _node.container_init_pid(nspawn_pid)
        state.record_process(init_pid, f"init of {layout.name}", graceful=False)
        address = subnet.node_address(index)
        _node.wait_for_ssh(address, nspawn_pid, layout.console_log)
        host_keys[address] = host_key
        facts.append(
            {"name": layout.name, "address": address, "netns": netns, "root": str(layout.merged),
             "nspawn_pid": nspawn_pid, "init_pid": init_pid, "gpus": hardware.gpus}
        )  # fmt: skip
    _wait_for_port(subnet.gateway, _mirror.MIRROR_PORT)
    timer.lap("sshd answering on every node")
    known_hosts = directory / "known_hosts"
    write_known_hosts(known_hosts, host_keys)
    state.facts |= {
        "subnet": str(subnet.network),
        "mirror": _mirror.repo_vars(),
        "ssh_key": str(directory / "id_ed25519"),
        "known_hosts": str(known_hosts),
        "nodes": facts,
    }
    state.save()


def _inventory_for(state: HarnessState) -> dict[str, Any]:
    facts = state.facts
    group_vars: dict[str, Any] = {**facts["mirror"], "gpuctl_reboot_policy": "never"}
    return inventory_document(facts["nodes"], Path(facts["ssh_key"]), Path(facts["known_hosts"]), group_vars)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m tests.hosts.nodes", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    up_parser = commands.add_parser("up", help="bring nodes up and write the inventory")
    up_parser.add_argument("--nodes", type=int, default=2)
    up_parser.add_argument("--gpus", type=int, default=8)
    up_parser.add_argument("--inventory", type=Path, required=True)
    up_parser.add_argument(
        "--gpu-device-id", default=f"0x{H100_SXM5_80GB:04x}", help="PCI device id of the fake GPUs"
    )
    up_parser.add_argument("--nvswitches", type=int, default=0, help="fake NVSwitches per node")
    up_parser.add_argument("--nvswitch-nodes", type=int, help="only the first N nodes get NVSwitches")
    down_parser = commands.add_parser("down", help="remove everything up created")
    down_parser.add_argument("--inventory", type=Path, required=True)
    exec_parser = commands.add_parser("exec", help="run a command inside a node")
    exec_parser.add_argument("--inventory", type=Path, required=True)
    exec_parser.add_argument("node")
    exec_parser.add_argument("argv", nargs=argparse.REMAINDER)
    return parser


def _exec_command(inventory: Path, node_name: str, argv: list[str]) -> int:
    argv = argv[1:] if argv[:1] == ["--"] else argv
    for node in load_nodes(inventory):
        if node.name == node_name:
            rc, out, err = node_exec(node, argv or ["/bin/bash", "-c", "hostname"])
            sys.stdout.write(out)
            sys.stderr.write(err)
            return rc
    _stderr(f"error: no node {node_name!r} in {inventory}")
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if os.geteuid() != 0:
        _stderr("error: the test nodes need root (namespaces, mounts, systemd-nspawn)")
        return 2
    try:
        if args.command == "up":
            device_id = int(args.gpu_device_id, 16)
            up(
                nodes=args.nodes,
                gpus=args.gpus,
                inventory=args.inventory,
                device_id=device_id,
                nvswitches=args.nvswitches,
                nvswitch_nodes=args.nvswitch_nodes,
            )
            return 0
        if args.command == "down":
            problems = down(args.inventory)
            for problem in problems:
                _stderr(f"error: could not remove {problem}")
            return 1 if problems else 0
        return _exec_command(args.inventory, args.node, args.argv)
    except (RuntimeError, ValueError, OSError, subprocess.CalledProcessError) as error:
        _stderr(f"error: {error}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
