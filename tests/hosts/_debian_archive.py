"""Debian's real non-free NVIDIA packages, mirrored for ``gpuctl_driver_source: distribution``.

apt itself fetches them from Debian's archive, on the host, with a private configuration: sources
signed by ``/usr/share/keyrings/debian-archive-keyring.gpg`` (apt refuses unsigned or tampered
indexes and checks every .deb against the signed hashes), and the node rootfs's dpkg status, so the
download is exactly what a node lacks: the driver packages plus their dependency closure (DKMS and
its compiler). The .debs are kept in a pool under the test cache, named by package and version, so
a new Debian release downloads only what changed. They are then published as a small archive laid
out like Debian's (``dists/bookworm/<component>/binary-amd64``, ``pool/<component>/``), signed with
a key generated for it; the node trusts that key (as a site trusts its own mirror's).

Only the ``bookworm`` suite is mirrored (the point release, not ``bookworm-security``), so the
versions are those of the point release.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from tests.hosts import _mirror
from tests.hosts._rootfs import SUITE, cache_dir, cache_lock, debian_mirror, rootfs_key

ARCHIVE_KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
COMPONENTS = ("main", "contrib", "non-free", "non-free-firmware")
# What the driver role installs on Debian 12 for the proprietary kernel modules (headless: no X
# server), plus nvidia-persistenced; the closure adds firmware-nvidia-gsp, dkms, gcc and friends.
PACKAGES = ("nvidia-kernel-dkms", "nvidia-smi", "libcuda1", "nvidia-persistenced")
# Bump when the layout below changes.
LAYOUT_VERSION = "1"
_POOL_RE = re.compile(r"/pool/([a-z-]+)/")


def archive_key() -> str:
    """Names the published archive by its recipe: the rootfs it completes and what it holds.

    The versions fetched are recorded inside (versions.txt); the .deb pool is shared between recipes.
    """
    recipe = "\n".join([LAYOUT_VERSION, SUITE, rootfs_key(), *PACKAGES, Path(__file__).read_text()])
    return hashlib.sha256(recipe.encode()).hexdigest()[:16]


def ensure_archive(rootfs: Path, log: Callable[[str], None] = print) -> Path:
    """The directory holding ``debian/`` (served next to the stand-in repositories), built when missing."""
    target = cache_dir() / f"debian-nvidia-{archive_key()}"
    if (target / ".complete").exists():
        return target
    with cache_lock(target.name):
        if not (target / ".complete").exists():
            _build(target, rootfs, log)
    return target


def _build(target: Path, rootfs: Path, log: Callable[[str], None]) -> None:
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    archive = building / _mirror.DEBIAN
    archive.mkdir(parents=True)
    pool = cache_dir() / "debian-debs"
    pool.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuctl-debian-") as scratch:
        apt = _PrivateApt(Path(scratch) / "apt", rootfs, pool)
        apt.run("update")
        uris = apt.download(PACKAGES)
        fetched = sum(size for _, _, size in uris)
        log(f"debian archive: {len(uris)} packages, {fetched / 1e6:.1f} MB, from {debian_mirror()}")
        for component, filename, _ in uris:
            (archive / "pool" / component).mkdir(parents=True, exist_ok=True)
            os.link(pool / filename, archive / "pool" / component / filename)
        gnupg_home = Path(scratch) / "gnupg"
        _mirror.generate_key(gnupg_home)
        _index(archive)
        _mirror.sign(archive / "dists" / SUITE, gnupg_home)
        shutil.copy(archive / "dists" / SUITE / _mirror.KEY_NAME, archive / _mirror.KEY_NAME)
    versions = "".join(sorted(f"{filename}\n" for _, filename, _ in uris))
    (building / "versions.txt").write_text(versions)
    (building / ".complete").write_text(archive_key() + "\n")
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)


class _PrivateApt:
    """apt-get with its own sources, lists and cache, seeing the node rootfs's installed packages."""

    def __init__(
        self,
        root: Path,
        rootfs: Path,
        pool: Path,
        suite: str = SUITE,
        components: tuple[str, ...] = COMPONENTS,
    ) -> None:
        for sub in ("lists/partial", "etc/preferences.d", "etc/apt.conf.d", "etc/sources.list.d"):
            (root / sub).mkdir(parents=True)
        (pool / "partial").mkdir(exist_ok=True)
        self.empty = root / "empty"
        (self.empty / "partial").mkdir(parents=True)
        (root / "etc/sources.list").write_text(
            f"deb [signed-by={ARCHIVE_KEYRING}] {debian_mirror()} {suite} {' '.join(components)}\n"
        )
        self.options = [
            "-o", f"Dir::Etc={root / 'etc'}",
            "-o", f"Dir::State::Lists={root / 'lists'}",
            "-o", f"Dir::State::status={rootfs / 'var/lib/dpkg/status'}",
            "-o", f"Dir::Cache={root}",
            "-o", f"Dir::Cache::archives={pool}",
            "-o", "APT::Architecture=amd64",
            "-o", "APT::Install-Recommends=false",
            "-o", "Acquire::Languages=none",
        ]  # fmt: skip

    def run(self, *args: str, cwd: Path | None = None) -> str:
        completed = subprocess.run(
            ["apt-get", "-q", *self.options, *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "LC_ALL": "C.UTF-8", "APT_CONFIG": "/dev/null"},
        )
        if completed.returncode != 0:
            tail = (completed.stdout + completed.stderr)[-3000:]
            raise RuntimeError(f"apt-get {' '.join(args)} failed ({completed.returncode}):\n{tail}")
        return completed.stdout

    def download(self, packages: tuple[str, ...]) -> list[tuple[str, str, int]]:
        """(component, file name, size) of every package the rootfs lacks; apt checks their hashes."""
        # apt leaves out what its archives directory already holds: list against an empty one.
        empty_cache = f"Dir::Cache::archives={self.empty}"
        listing = self.run("-o", empty_cache, "install", "--print-uris", "-qq", *packages)
        uris = []
        for line in listing.splitlines():
            uri, filename, size = line.split()[:3]
            component = _POOL_RE.search(uri)
            if component is None:
                raise RuntimeError(f"unexpected package URI from apt: {uri}")
            uris.append((component.group(1), filename, int(size)))
        if not uris:
            raise RuntimeError(f"apt lists no package to fetch for {' '.join(packages)}:\n{listing}")
        self.run("install", "--download-only", "-y", *packages)
        return uris


def _index(archive: Path) -> None:
    dists = archive / "dists" / SUITE
    indexes = []
    for component in COMPONENTS:
        binary = dists / component / "binary-amd64"
        binary.mkdir(parents=True)
        pool = archive / "pool" / component
        packages = b""
        if pool.is_dir():
            packages = subprocess.run(
                ["dpkg-scanpackages", "--multiversion", f"pool/{component}", "/dev/null"],
                cwd=archive,
                check=True,
                capture_output=True,
            ).stdout
        (binary / "Packages").write_bytes(packages)
        (binary / "Packages.gz").write_bytes(gzip.compress(packages, mtime=0))
        indexes += [f"{component}/binary-amd64/Packages", f"{component}/binary-amd64/Packages.gz"]
    fields = (f"Suite: {SUITE}", f"Codename: {SUITE}", f"Components: {' '.join(COMPONENTS)}")
    (dists / "Release").write_text(_mirror.release(dists, tuple(indexes), fields))


if __name__ == "__main__":
    from tests.hosts._rootfs import ensure_rootfs

    print(ensure_archive(ensure_rootfs()))
