"""One test node: an overlay on the cached rootfs, booted with real systemd by systemd-nspawn.

The node runs in the network namespace the harness made (`--network-namespace-path`), with its own
UTS, mount and PID namespaces (nspawn's), its hostname, a fresh SSH host key and the harness's
admin key authorised. The overlay's merged directory stays mounted in the root namespace: that
is `test_node_root`, readable and chroot-able from the shell that ran `up`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.hosts._fakepci import write_fake_bus
from tests.hosts._mirror import MIRROR_NAME
from tests.hosts._rootfs import ADMIN_USER
from tests.hosts._state import HarnessState, process_start_time

BOOT_TIMEOUT_SECONDS = 90.0


@dataclass(frozen=True)
class NodeLayout:
    """Where one node's files live, under the harness directory."""

    name: str
    base: Path

    @property
    def upper(self) -> Path:
        return self.base / "upper"

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def merged(self) -> Path:
        return self.base / "root"

    @property
    def pci(self) -> Path:
        return self.base / "pci-devices"

    @property
    def console_log(self) -> Path:
        return self.base / "console.log"


def mount_overlay(state: HarnessState, layout: NodeLayout, lower: Path, image: Path | None = None) -> None:
    """The node's root: its own upper dir over `lower` (the rootfs), with `image` (a node image's
    layer, tests/hosts/_image.py) between them when given."""
    for directory in (layout.upper, layout.work, layout.merged):
        directory.mkdir(parents=True, exist_ok=True)
    state.record("mount", path=str(layout.merged))
    lowers = f"{image}:{lower}" if image else str(lower)  # overlayfs reads the leftmost lower first
    options = f"lowerdir={lowers},upperdir={layout.upper},workdir={layout.work}"
    subprocess.run(
        ["mount", "-t", "overlay", "overlay", "-o", options, str(layout.merged)],
        check=True,
        capture_output=True,
    )


def _admin_ids(root: Path) -> tuple[int, int]:
    for line in (root / "etc/passwd").read_text().splitlines():
        fields = line.split(":")
        if fields[0] == ADMIN_USER:
            return int(fields[2]), int(fields[3])
    raise RuntimeError(f"user {ADMIN_USER} missing from {root}/etc/passwd")


def _authorise(root: Path, public_key: str) -> None:
    uid, gid = _admin_ids(root)
    ssh_dir = root / "home" / ADMIN_USER / ".ssh"
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    authorized = ssh_dir / "authorized_keys"
    authorized.write_text(public_key)
    authorized.chmod(0o600)
    for path in (ssh_dir, authorized):
        os.chown(path, uid, gid)


def _host_key(root: Path, name: str) -> str:
    """Generate the node's SSH host key inside its root; return the public half."""
    key = root / "etc/ssh/ssh_host_ed25519_key"
    key.unlink(missing_ok=True)
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"root@{name}", "-f", str(key)],
        check=True,
        capture_output=True,
    )
    return key.with_suffix(".pub").read_text().strip()


def prepare_root(layout: NodeLayout, address: str, admin_public_key: str, mirror_address: str) -> str:
    """Identity of the node (hostname, machine-id, keys) and the address of its run's mirror (by the
    mirror's name); returns its public host key line."""
    root = layout.merged
    (root / "etc/hostname").write_text(f"{layout.name}\n")
    (root / "etc/hosts").write_text(
        f"127.0.0.1\tlocalhost\n{address}\t{layout.name}\n{mirror_address}\t{MIRROR_NAME}\n"
        "::1\tlocalhost ip6-localhost\n"
    )
    (root / "etc/machine-id").write_text(secrets.token_hex(16) + "\n")
    _authorise(root, admin_public_key)
    return _host_key(root, layout.name)


@dataclass(frozen=True)
class FakeHardware:
    gpus: int
    device_id: int
    nvswitches: int = 0
    nvswitch_nodes: int | None = None  # the first N nodes get the NVSwitches; None: every node

    def of_node(self, index: int) -> FakeHardware:
        """What node `index` of the run gets."""
        with_switches = self.nvswitch_nodes is None or index < self.nvswitch_nodes
        return FakeHardware(self.gpus, self.device_id, self.nvswitches if with_switches else 0)


def boot(state: HarnessState, layout: NodeLayout, netns: str, hardware: FakeHardware) -> int:
    """Start systemd-nspawn for the node (recorded); returns its PID."""
    write_fake_bus(layout.pci, hardware.gpus, hardware.device_id, hardware.nvswitches)
    argv = [
        "systemd-nspawn",
        "--boot",
        f"--directory={layout.merged}",
        f"--machine={netns}",
        f"--hostname={layout.name}",
        f"--network-namespace-path=/run/netns/{netns}",
        # The host runs no systemd: no machined to register with, no scope to create.
        "--register=no",
        "--keep-unit",
        "--console=pipe",
        "--resolv-conf=off",
        "--timezone=off",
        "--link-journal=no",
        f"--bind-ro={layout.pci}:/sys/bus/pci/devices",
    ]
    state.record("dir", path=f"/run/systemd/nspawn/propagate/{netns}")
    cgroups = own_cgroups(state, netns)
    with layout.console_log.open("ab") as console:
        process = subprocess.Popen(
            [*in_cgroups(cgroups), *argv],
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    state.record_process(process.pid, f"systemd-nspawn {layout.name}", graceful=True)
    return process.pid


def _cgroup_hierarchies() -> list[tuple[Path, str]]:
    """(mount point, this process's cgroup in it) for the hierarchies nspawn nests the node in:
    the unified one (cgroup2) and, on a hybrid host, the named `systemd` one."""
    mounts: dict[str, Path] = {}
    for line in Path("/proc/self/mounts").read_text().splitlines():
        _, mount_point, fstype, options, *_ = line.split()
        if fstype == "cgroup2":
            mounts["unified"] = Path(mount_point)
        elif fstype == "cgroup" and "name=systemd" in options.split(","):
            mounts["systemd"] = Path(mount_point)
    found = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        name = "unified" if hierarchy == "0" else "systemd" if controllers == "name=systemd" else ""
        if name in mounts:
            found.append((mounts[name], path))
    return found


def own_cgroups(state: HarnessState, name: str) -> list[Path]:
    """A cgroup of the node's own in each hierarchy (recorded): nspawn puts the node's systemd in a
    `payload` child of the cgroup it starts in, so nodes started side by side would otherwise share
    one cgroup tree, and each node's systemd would stop and kill the others' services."""
    cgroups = []
    for mount_point, parent in _cgroup_hierarchies():
        cgroup = mount_point / parent.lstrip("/") / name
        state.record("cgroup", path=str(cgroup))
        cgroup.mkdir(exist_ok=True)
        cgroups.append(cgroup)
    return cgroups


def in_cgroups(cgroups: list[Path]) -> list[str]:
    """A prefix that runs the command after it inside `cgroups` (the shell joins them, then execs)."""
    join = 'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; done; shift; exec "$@"'
    return ["sh", "-c", join, "sh", *map(str, cgroups), "--"]


def container_init_pid(nspawn_pid: int, timeout: float = BOOT_TIMEOUT_SECONDS) -> int:
    """The node's PID 1 (systemd), seen from the root namespace: nspawn's child in a new PID namespace.

    nspawn first forks an "outer child" in nspawn's own PID namespace, which clones the node's init
    as nspawn's child and exits: a child still in nspawn's namespace is that short-lived helper.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_start_time(nspawn_pid) is None:
            break
        with contextlib.suppress(OSError):  # a child may exit between the listing and the readlink
            own_namespace = os.readlink(f"/proc/{nspawn_pid}/ns/pid")
            for child in Path(f"/proc/{nspawn_pid}/task/{nspawn_pid}/children").read_text().split():
                if os.readlink(f"/proc/{child}/ns/pid") != own_namespace:
                    return int(child)
        time.sleep(0.05)
    raise RuntimeError(f"systemd-nspawn (pid {nspawn_pid}) did not start the node's init")


def wait_for_ssh(address: str, nspawn_pid: int, log: Path, timeout: float = BOOT_TIMEOUT_SECONDS) -> None:
    """Until sshd on the node answers with its banner."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_start_time(nspawn_pid) is None:
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"node at {address} stopped while booting:\n{tail}")
        try:
            with socket.create_connection((address, 22), timeout=1) as connection:
                connection.settimeout(2)
                if connection.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"sshd on {address}:22 did not answer within {timeout:.0f} s (see {log})")
