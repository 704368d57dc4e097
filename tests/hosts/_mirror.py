"""The local apt mirror that stands in for NVIDIA's repositories on the air-gapped test nodes.

Two flat repositories laid out like NVIDIA's (``deb [signed-by=KEY] URL /``), signed with a GPG key
generated here, the armored public key served next to each as ``gpgkey``. Built once per content
(cached, keyed by the stand-in sources) and served by a plain ``python3 -m http.server``.
"""

from __future__ import annotations

import gzip
import hashlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from email.utils import formatdate
from pathlib import Path

from tests.hosts import _packages
from tests.hosts._rootfs import cache_dir, cache_lock

REPOSITORIES = {"cuda": _packages.cuda_repo_packages, "libnvidia-container": _packages.toolkit_repo_packages}
KEY_NAME = "gpgkey"
DEBIAN = "debian"  # Debian's real NVIDIA packages (tests/hosts/_debian_archive.py)
MIRROR_PORT = 8080
# The name the nodes reach the mirror by: each node's /etc/hosts maps it to its own run's bridge
# address (tests/hosts/_node.py prepare_root), so the apt sources a node image holds (written by the
# playbooks from the inventory's URLs) stay right on nodes of any later run, whatever its subnet.
MIRROR_NAME = "gpuctl-mirror.test"  # .test: reserved for testing (RFC 2606), never resolved outside
# Bump when the layout below changes.
LAYOUT_VERSION = "1"


def mirror_key() -> str:
    digest = hashlib.sha256(LAYOUT_VERSION.encode() + platform.release().encode())
    for source in sorted(_packages.STANDINS.iterdir()):
        digest.update(source.name.encode() + source.read_bytes())
    for module in (_packages.NVIDIA_SMI_MODULE, Path(_packages.__file__), Path(__file__)):
        digest.update(module.read_bytes())
    return digest.hexdigest()[:16]


def ensure_mirror() -> Path:
    """The directory to serve: ``cuda/`` and ``libnvidia-container/``, built when missing."""
    target = cache_dir() / f"mirror-{mirror_key()}"
    if (target / ".complete").exists():
        return target
    with cache_lock(target.name):
        if not (target / ".complete").exists():
            _build_mirror(target)
    return target


def _build_mirror(target: Path) -> None:
    building = target.with_name(target.name + ".building")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="gpuctl-mirror-") as scratch:
        gnupg_home = Path(scratch) / "gnupg"
        generate_key(gnupg_home)
        for repository, packages in REPOSITORIES.items():
            repo_dir = building / repository
            repo_dir.mkdir()
            for package in packages():
                _packages.build_deb(package, Path(scratch) / repository, repo_dir)
            _index(repo_dir)
            sign(repo_dir, gnupg_home)
    (building / ".complete").write_text(mirror_key() + "\n")
    shutil.rmtree(target, ignore_errors=True)
    building.rename(target)


def _gpg(gnupg_home: Path, *args: str) -> bytes:
    completed = subprocess.run(
        ["gpg", "--batch", "--quiet", "--homedir", str(gnupg_home), *args],
        check=True,
        capture_output=True,
    )
    return completed.stdout


def generate_key(gnupg_home: Path) -> None:
    gnupg_home.mkdir(mode=0o700)
    _gpg(
        gnupg_home,
        "--passphrase",
        "",
        "--quick-gen-key",
        "gpuctl test mirror <gpuctl-mirror@example.invalid>",
        "ed25519",
        "sign",
        "never",
    )


def _index(repo_dir: Path) -> None:
    packages = subprocess.run(
        ["dpkg-scanpackages", "--multiversion", ".", "/dev/null"],
        cwd=repo_dir,
        check=True,
        capture_output=True,
    ).stdout
    (repo_dir / "Packages").write_bytes(packages)
    (repo_dir / "Packages.gz").write_bytes(gzip.compress(packages, mtime=0))
    (repo_dir / "Release").write_text(release(repo_dir, ("Packages", "Packages.gz")))


def release(repo_dir: Path, indexes: tuple[str, ...], fields: tuple[str, ...] = ()) -> str:
    """A Release file listing `indexes` (paths relative to `repo_dir`) with their hashes."""
    lines = [
        "Origin: gpuctl test mirror",
        "Label: gpuctl test mirror",
        *fields,
        "Architectures: amd64 all",
        f"Date: {formatdate(time.time(), usegmt=True)}",
    ]
    for field, algorithm in (("MD5Sum", "md5"), ("SHA256", "sha256")):
        lines.append(f"{field}:")
        for index in indexes:
            data = (repo_dir / index).read_bytes()
            lines.append(f" {hashlib.new(algorithm, data).hexdigest()} {len(data)} {index}")
    return "\n".join(lines) + "\n"


def sign(repo_dir: Path, gnupg_home: Path) -> None:
    release = str(repo_dir / "Release")
    _gpg(gnupg_home, "--clearsign", "--output", str(repo_dir / "InRelease"), release)
    _gpg(gnupg_home, "--armor", "--detach-sign", "--output", str(repo_dir / "Release.gpg"), release)
    (repo_dir / KEY_NAME).write_bytes(_gpg(gnupg_home, "--armor", "--export"))


def publish(www: Path, mirror: Path, debian_archive: Path) -> Path:
    """One directory to serve: links to the stand-in repositories and to Debian's real packages."""
    www.mkdir()
    for repository in REPOSITORIES:
        (www / repository).symlink_to(mirror / repository)
    (www / DEBIAN).symlink_to(debian_archive / DEBIAN)
    return www


def serve(directory: Path, address: str, log_file: Path) -> subprocess.Popen[bytes]:
    """Start the HTTP server (a child the caller records by PID and stops in ``down``)."""
    with log_file.open("ab") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "http.server",
                "--bind",
                address,
                "--directory",
                str(directory),
                str(MIRROR_PORT),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def repo_vars() -> dict[str, str | list[str]]:
    """The inventory group vars that point the playbooks at the mirror (by its name, MIRROR_NAME)."""
    base = f"http://{MIRROR_NAME}:{MIRROR_PORT}"
    return {
        "gpuctl_cuda_repo_url": f"{base}/cuda/",
        "gpuctl_cuda_repo_key_url": f"{base}/cuda/{KEY_NAME}",
        "gpuctl_toolkit_repo_url": f"{base}/libnvidia-container/",
        "gpuctl_toolkit_repo_key_url": f"{base}/libnvidia-container/{KEY_NAME}",
        # The site's Debian mirror for `gpuctl_driver_source: distribution`: one suite, and main
        # too, since the air-gapped nodes have no other source for DKMS and its compiler.
        "gpuctl_distribution_repo_url": f"{base}/{DEBIAN}/",
        "gpuctl_distribution_repo_key_url": f"{base}/{DEBIAN}/{KEY_NAME}",
        "gpuctl_distribution_repo_suites": ["bookworm"],
        "gpuctl_distribution_repo_components": ["main", "contrib", "non-free", "non-free-firmware"],
    }
