"""The cached Debian 12 root filesystem every test node overlays.

Built once with debootstrap (minutes, the only network access of the harness, done on the host),
then customised for the tests (air-gapped apt sources, the ``gpuadmin`` user, no SSH host keys) and
kept under the cache directory, keyed by everything that went into it. Later runs reuse it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

SUITE = "bookworm"
DEFAULT_CACHE = Path("/var/cache/gpuctl-test")
DEFAULT_DEBIAN_MIRROR = "http://deb.debian.org/debian"
ADMIN_USER = "gpuadmin"

# What a Kubernetes GPU worker looks like before gpuctl touches it. systemd + dbus let the nodes
# boot a real service manager under systemd-nspawn, so handlers and services are real.
NODE_PACKAGES = (
    "apt-utils",
    "ca-certificates",
    "containerd",
    "curl",
    "dbus",
    "gnupg",
    "iproute2",
    "iputils-ping",
    "kmod",
    "openssh-server",
    "pciutils",
    "procps",
    "python3",
    "python3-apt",
    "sudo",
    "systemd",
    "systemd-sysv",
)

# Bump when the customisation below changes, so stale caches are rebuilt rather than reused.
CUSTOMISATION_VERSION = "3"

SSHD_DROP_IN = """\
# Written by the gpuctl test harness: key-only logins, fast connects.
HostKey /etc/ssh/ssh_host_ed25519_key
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
UseDNS no
"""

# Units that make no sense in a container node and only slow its boot down or fail loudly.
MASKED_UNITS = (
    "systemd-timesyncd.service",
    "apt-daily.timer",
    "apt-daily-upgrade.timer",
    "e2scrub_all.timer",
    "fstrim.timer",
    "systemd-udevd.service",
    "systemd-udev-trigger.service",
    "systemd-udevd-control.socket",
    "systemd-udevd-kernel.socket",
    "getty@tty1.service",
)


def cache_dir() -> Path:
    return Path(os.environ.get("GPUCTL_TEST_CACHE", str(DEFAULT_CACHE)))


def debian_mirror() -> str:
    return os.environ.get("GPUCTL_TEST_DEBIAN_MIRROR", DEFAULT_DEBIAN_MIRROR)


def rootfs_key() -> str:
    """Names the cached rootfs by what it was built from (the mirror does not change the result)."""
    recipe = "\n".join([SUITE, "minbase", CUSTOMISATION_VERSION, SSHD_DROP_IN, *NODE_PACKAGES, *MASKED_UNITS])
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def rootfs_path() -> Path:
    return cache_dir() / f"rootfs-{SUITE}-{rootfs_key()}"


@contextlib.contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """Serialise builds of one cache entry between harness runs started at the same time."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    with (cache_dir() / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_rootfs(log: Callable[[str], None] = print) -> Path:
    """Return the cached rootfs, building it first when it is missing."""
    target = rootfs_path()
    if (target / ".gpuctl-test-complete").exists():
        return target
    with cache_lock(target.name):
        if not (target / ".gpuctl-test-complete").exists():
            _build_rootfs(target, log)
    return target


def _build_rootfs(target: Path, log: Callable[[str], None]) -> None:
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is not installed: run .ci/install-host-deps.sh")
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    started = time.monotonic()
    log(f"building the node rootfs in {target} from {debian_mirror()} (once; minutes)")
    _debootstrap(building)
    _customise(building)
    (building / ".gpuctl-test-complete").write_text(rootfs_key() + "\n")
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)
    log(f"rootfs built in {time.monotonic() - started:.0f} s")


def _debootstrap(root: Path) -> None:
    command = [
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(NODE_PACKAGES)}",
        SUITE,
        str(root),
        debian_mirror(),
    ]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        tail = (completed.stdout + completed.stderr)[-3000:]
        raise RuntimeError(f"debootstrap failed ({completed.returncode}):\n{tail}")


def _chroot(root: Path, *argv: str) -> None:
    subprocess.run(["chroot", str(root), *argv], check=True, capture_output=True)


def _customise(root: Path) -> None:
    _air_gap_apt(root)
    for key in (root / "etc/ssh").glob("ssh_host_*"):
        key.unlink()
    (root / "etc/ssh/sshd_config.d/gpuctl-test.conf").write_text(SSHD_DROP_IN)
    _chroot(root, "useradd", "--create-home", "--shell", "/bin/bash", ADMIN_USER)
    sudoers = root / "etc/sudoers.d" / ADMIN_USER
    sudoers.write_text(f"{ADMIN_USER} ALL=(ALL:ALL) NOPASSWD: ALL\n")
    sudoers.chmod(0o440)
    for unit in MASKED_UNITS:
        link = root / "etc/systemd/system" / unit
        link.unlink(missing_ok=True)
        link.symlink_to("/dev/null")
    (root / "etc/machine-id").write_text("")
    (root / "etc/hostname").unlink(missing_ok=True)


def _air_gap_apt(root: Path) -> None:
    """Nodes reach nothing but the harness mirror, which the playbooks add themselves."""
    (root / "etc/apt/sources.list").write_text("")
    for extra in (root / "etc/apt/sources.list.d").glob("*"):
        extra.unlink()
    _chroot(root, "apt-get", "clean")
    for lists in (root / "var/lib/apt/lists").glob("*"):
        if lists.is_file():
            lists.unlink()


if __name__ == "__main__":
    print(ensure_rootfs(), file=sys.stderr)
