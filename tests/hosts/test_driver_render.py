"""The driver role on every OS it supports, rendered with that OS's facts (no node needed).

Only Debian 12 boots here (tests/hosts/test_bootstrap.py, test_distribution_driver.py); Ubuntu and
RHEL/Rocky archives are out of reach. So the role's own fact tasks run with each OS's facts, and the
exact package names, repository lines, pins and holds it would use are checked.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuctl.package_data import default_driver_branch
from tests.local_ansible import run_playbook

# Runs a real ansible-playbook on this machine: a run of its own beside the tiers (.ci/run-tests.sh).
pytestmark = [pytest.mark.playbook]
BRANCH = default_driver_branch()  # the role's default: the pin these renders exercise
PLAYBOOK = Path(__file__).resolve().parent / "playbooks" / "render_driver.yml"
NVIDIA = "https://developer.download.nvidia.com/compute/cuda/repos"
KERNEL = "6.8.0-45-generic"
FACTS = {
    name: dict(zip(("distribution", "major", "version", "release", "family"), values, strict=True))
    for name, values in {
        "debian12": ("Debian", "12", "12.7", "bookworm", "Debian"),
        "ubuntu2204": ("Ubuntu", "22", "22.04", "jammy", "Debian"),
        "ubuntu2404": ("Ubuntu", "24", "24.04", "noble", "Debian"),
        "rhel9": ("RedHat", "9", "9.4", "Plow", "RedHat"),
        "rocky9": ("Rocky", "9", "9.4", "Blue Onyx", "RedHat"),
    }.items()
}
CUDA_PIN_PACKAGES = (
    "cuda-drivers cuda-drivers-* nvidia-open nvidia-open-* nvidia-driver nvidia-driver-* nvidia-kernel-* "
    "nvidia-fabricmanager nvidia-fabricmanager-* nvidia-persistenced nvidia-modprobe nvidia-settings "
    "nvidia-xconfig libnvidia-compute* libnvidia-gl* libnvidia-ml* libnvidia-cfg* libnvidia-encode* "
    "libnvidia-decode* libnvidia-fbc* libcuda1 libxnvctrl0 nvidia-firmware-*"
)


def render(tmp_path: Path, os_name: str, *extra: str) -> tuple[int, dict[str, Any], str]:
    output = tmp_path / f"{os_name}.json"
    facts = {**FACTS[os_name], "kernel": KERNEL}
    variables = {"render_facts": facts, "render_output": str(output)}
    completed = run_playbook(PLAYBOOK, "-e", json.dumps(variables), *extra)
    rendered = json.loads(output.read_text()) if output.exists() else {}
    return completed.returncode, rendered, completed.stdout + completed.stderr


def pin(packages: str, version: str) -> str:
    return (
        f"# Managed by gpuctl (role nvidia_driver): keeps the NVIDIA driver on {version}.\n"
        f"Package: {packages}\nPin: version {version}\nPin-Priority: 1001\n"
    )


@pytest.mark.parametrize(
    ("os_name", "distro"),
    [("debian12", "debian12"), ("ubuntu2204", "ubuntu2204"), ("ubuntu2404", "ubuntu2404")],
)
@pytest.mark.parametrize(("open_modules", "package"), [("true", "nvidia-open"), ("false", "cuda-drivers")])
def test_apt_systems_from_the_cuda_repository(
    tmp_path: Path, os_name: str, distro: str, open_modules: str, package: str
) -> None:
    code, rendered, log = render(tmp_path, os_name, "-e", f"gpuctl_driver_open_kernel_modules={open_modules}")
    assert code == 0, log
    assert rendered["packages"] == rendered["held"] == [package]
    assert rendered["headers"] == [f"linux-headers-{KERNEL}"]
    assert rendered["cuda_list"] == (
        "# Managed by gpuctl (role nvidia_driver).\n"
        f"deb [signed-by=/etc/apt/keyrings/gpuctl-nvidia-cuda.asc] {NVIDIA}/{distro}/x86_64/ /\n"
    )
    assert rendered["cuda_key_url"] == f"{NVIDIA}/{distro}/x86_64/3bf863cc.pub"
    assert rendered["pin"] == pin(CUDA_PIN_PACKAGES, f"{BRANCH}.*")
    assert rendered["initramfs"] == ["update-initramfs", "-u"]


def test_exact_version_pin(tmp_path: Path) -> None:
    pinned = ("-e", "gpuctl_driver_branch=570", "-e", "gpuctl_driver_version=570.86.15")
    code, rendered, log = render(tmp_path, "ubuntu2404", *pinned)
    assert code == 0, log
    assert rendered["pin"] == pin(CUDA_PIN_PACKAGES, "570.86.15-*")


def test_debian_distribution_headless_set(tmp_path: Path) -> None:
    extra = ("-e", "gpuctl_driver_source=distribution", "-e", "gpuctl_driver_branch=535")
    code, rendered, log = render(
        tmp_path, "debian12", *extra, "-e", "gpuctl_driver_open_kernel_modules=false",
        "-e", "gpuctl_driver_distribution_version=535.261.03",
    )  # fmt: skip
    assert code == 0, log
    headless = ["nvidia-kernel-dkms", "nvidia-smi", "libcuda1", "nvidia-persistenced"]
    assert rendered["packages"] == rendered["held"] == headless
    assert rendered["pin"].splitlines()[2:] == ["Pin: version 535.261.03-*", "Pin-Priority: 1001"]
    assert "nvidia-kernel-dkms nvidia-open-kernel-dkms" in rendered["pin"]
    assert rendered["debian_sources"] == (
        "# Managed by gpuctl (role nvidia_driver): the Debian components that carry the NVIDIA driver.\n"
        "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
        "Components: contrib non-free non-free-firmware\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\n"
        "Components: contrib non-free non-free-firmware\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
    )
    code, rendered, log = render(tmp_path, "debian12", *extra, "-e", "gpuctl_driver_persistenced=false")
    assert code == 0, log
    assert rendered["packages"] == ["nvidia-open-kernel-dkms", "nvidia-smi", "libcuda1"]


@pytest.mark.parametrize("os_name", ["ubuntu2204", "ubuntu2404"])
def test_ubuntu_distribution_server_driver(tmp_path: Path, os_name: str) -> None:
    code, rendered, log = render(tmp_path, os_name, "-e", "gpuctl_driver_source=distribution")
    assert code == 0, log
    assert rendered["packages"] == rendered["held"] == [f"nvidia-driver-{BRANCH}-server-open"]
    assert rendered["pin"] == pin(CUDA_PIN_PACKAGES, f"{BRANCH}.*")
    assert rendered["debian_sources"] == ""


@pytest.mark.parametrize("os_name", ["rhel9", "rocky9"])
def test_el9_module_stream_and_versionlock(tmp_path: Path, os_name: str) -> None:
    code, rendered, log = render(tmp_path, os_name, "-e", "gpuctl_driver_open_kernel_modules=false")
    assert code == 0, log
    assert rendered["packager"] == "dnf"
    assert rendered["dnf_stream"] == f"@nvidia-driver:{BRANCH}-dkms"
    assert rendered["dnf_locked"] == ["nvidia-driver", "kmod-nvidia-latest-dkms", "kmod-nvidia-open-dkms"]
    assert rendered["cuda_repo_url"] == f"{NVIDIA}/rhel9/x86_64/"
    assert rendered["cuda_key_url"] == f"{NVIDIA}/rhel9/x86_64/D42D0685.pub"
    assert rendered["headers"] == [f"kernel-devel-{KERNEL}", f"kernel-headers-{KERNEL}"]
    assert rendered["initramfs"] == ["dracut", "--force"]


def test_el9_refuses_the_distribution_source(tmp_path: Path) -> None:
    code, _, log = render(tmp_path, "rocky9", "-e", "gpuctl_driver_source=distribution")
    assert code != 0
    assert (
        "gpuctl_driver_source=distribution is not offered on Rocky; set gpuctl_driver_source: cuda_repo"
        in log
    )
