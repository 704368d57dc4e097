"""containerd 2.x from Debian's archive, beside the host's own containerd 1.x (Debian 12's).

The container runtime role's tests check what it writes with the real `containerd config dump` of
both majors: a drop-in must carry the config version of the config.toml importing it (2 for 1.x's
files, 3 for 2.x's), and only a real 2.x shows what a wrong one does. apt fetches the package from
the suite that has containerd 2.x with the private, signature-checked configuration the Debian
archive mirror uses (tests/hosts/_debian_archive.py); it is unpacked under the test cache, not
installed, so the host keeps its containerd 1.x.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.hosts._debian_archive import _PrivateApt
from tests.hosts._rootfs import cache_dir, cache_lock

# Debian's suite with containerd 2.x (bookworm and trixie have 1.6 and 1.7).
SUITE = "unstable"
PACKAGE = "containerd"
# Bump when the layout below changes.
LAYOUT_VERSION = "1"


def containerd2() -> Path:
    """The containerd 2.x binary, fetched and unpacked once per test cache."""
    target = cache_dir() / f"containerd-{SUITE}-{LAYOUT_VERSION}"
    if not (target / ".complete").exists():
        with cache_lock(target.name):
            if not (target / ".complete").exists():
                _fetch(target)
    return target / "usr" / "bin" / "containerd"


def major_version(binary: Path) -> int:
    """The major version `containerd --version` prints (`containerd github.com/... 2.1.9+ds1 ...`)."""
    printed = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout
    found = re.search(r" v?(\d+)\.\d+", printed)
    if found is None:
        raise RuntimeError(f"{binary} --version printed no version: {printed!r}")
    return int(found.group(1))


def _fetch(target: Path) -> None:
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    pool = cache_dir() / "debian-debs"
    pool.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpuctl-containerd-") as scratch:
        apt = _PrivateApt(Path(scratch) / "apt", Path("/"), pool, suite=SUITE, components=("main",))
        apt.run("update")
        apt.run("download", PACKAGE, cwd=Path(scratch))
        package = next(Path(scratch).glob(f"{PACKAGE}_*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(package), str(building)], check=True)
    binary = building / "usr" / "bin" / "containerd"
    if major_version(binary) < 2:
        raise RuntimeError(f"Debian {SUITE}'s {PACKAGE} is not 2.x: update SUITE in {__file__}")
    (building / ".complete").write_text(package.name + "\n")
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)


if __name__ == "__main__":
    print(containerd2())
