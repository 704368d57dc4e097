"""Stand-in packages with NVIDIA's names, versions and dependency chain, built with dpkg-deb.

They install what the real packages install where gpuctl's playbooks and probes look (nvidia-smi,
nvidia-persistenced and its unit, the container runtime binaries, nvidia-ctk) but print the node's
fake GPUs instead of talking to hardware.
"""

from __future__ import annotations

import platform
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

STANDINS = Path(__file__).parent / "standins"
NVIDIA_SMI_MODULE = Path(__file__).parents[2] / "gpuctl" / "nvidia_smi.py"
# gpuctl's host probe: the stand-ins read the node's (fake) PCI bus through it, as gpuctl does.
HOST_PROBE = Path(__file__).parents[2] / "playbooks" / "roles" / "gpuctl_probe" / "files" / "host_probe.py"

# One version on the role's default branch (580) and older branches that tests pin (550, 570).
DRIVER_VERSIONS = ("580.95.05-1", "550.90.07-1", "570.86.15-1")
# The role's default (1.20), the last toolkit before the CDI refresh units (1.17) and an older pin (1.16).
TOOLKIT_VERSIONS = ("1.20.0-1", "1.17.8-1", "1.16.2-1")
# nvidia-container-toolkit-base ships the nvidia-cdi-refresh units since 1.18.0.
CDI_REFRESH_SINCE = (1, 18)
DRIVER_PACKAGES = ("cuda-drivers", "nvidia-open")
DRIVER_LIBDIR = "/usr/lib/gpuctl-standin/driver"


@dataclass(frozen=True)
class PackageFile:
    path: str
    content: bytes
    mode: int = 0o644


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    description: str
    files: tuple[PackageFile, ...]
    depends: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    conffiles: tuple[str, ...] = field(default=())
    architecture: str = "amd64"


def upstream(version: str) -> str:
    return version.rsplit("-", 1)[0]


def _standin(name: str, version: str, mode: int = 0o755, target: str = "") -> PackageFile:
    text = (STANDINS / name).read_text()
    text = text.replace("@UPSTREAM@", upstream(version)).replace("@LIBDIR@", DRIVER_LIBDIR)
    return PackageFile(target or f"/usr/bin/{name}", text.encode(), mode)


def driver_package(name: str, version: str) -> Package:
    other = next(package for package in DRIVER_PACKAGES if package != name)
    return Package(
        name=name,
        version=version,
        description=f"NVIDIA driver {upstream(version)} (gpuctl test stand-in)",
        depends=("python3",),
        conflicts=(other,),
        files=(
            _standin("nvidia-smi", version),
            _standin("nvidia-persistenced", version),
            _standin(
                "nvidia-persistenced.service",
                version,
                0o644,
                "/lib/systemd/system/nvidia-persistenced.service",
            ),
            PackageFile(f"{DRIVER_LIBDIR}/nvidia_smi.py", NVIDIA_SMI_MODULE.read_bytes()),
            PackageFile(f"{DRIVER_LIBDIR}/host_probe.py", HOST_PROBE.read_bytes()),
            _standin("nvidia_pci.py", version, 0o644, f"{DRIVER_LIBDIR}/nvidia_pci.py"),
        ),
    )


def fabricmanager_package(version: str) -> Package:
    libdir = "/usr/lib/gpuctl-standin/fabricmanager"
    files = (
        _standin("nv-fabricmanager", version),
        _standin("nvidia-fabricmanager.service", version, 0o644,
                 "/lib/systemd/system/nvidia-fabricmanager.service"),
        PackageFile(f"{libdir}/nvidia_smi.py", NVIDIA_SMI_MODULE.read_bytes()),
        PackageFile(f"{libdir}/host_probe.py", HOST_PROBE.read_bytes()),
        _standin("nvidia_pci.py", version, 0o644, f"{libdir}/nvidia_pci.py"),
    )  # fmt: skip
    fixed = tuple(
        PackageFile(f.path, f.content.replace(DRIVER_LIBDIR.encode(), libdir.encode()), f.mode) for f in files
    )
    return Package(
        "nvidia-fabricmanager",
        version,
        f"NVIDIA Fabric Manager {upstream(version)} (gpuctl test stand-in)",
        fixed,
        depends=("python3",),
    )


def kernel_headers_package(kernel_release: str) -> Package:
    """linux-headers-<running kernel>, so the playbooks' headers task has something to install."""
    numeric = re.match(r"[0-9][0-9.]*", kernel_release)
    version = (numeric.group(0).rstrip(".") if numeric else "0") + "-1"
    source = f"/usr/src/linux-headers-{kernel_release}"
    makefile = f"# kernel headers for {kernel_release} (gpuctl test stand-in)\n".encode()
    return Package(
        f"linux-headers-{kernel_release}",
        version,
        f"Header files for Linux {kernel_release} (gpuctl test stand-in)",
        (PackageFile(f"{source}/Makefile", makefile),),
    )


def toolkit_base_files(version: str) -> tuple[PackageFile, ...]:
    """nvidia-ctk, the runtime and its config; from 1.18 on also the CDI refresh units."""
    files = (
        _standin("nvidia-ctk", version),
        _standin("nvidia-container-runtime", version),
        _standin("config.toml", version, 0o644, "/etc/nvidia-container-runtime/config.toml"),
    )
    if tuple(int(part) for part in upstream(version).split(".")[:2]) < CDI_REFRESH_SINCE:
        return files
    units, settings = "/lib/systemd/system", "/etc/nvidia-container-toolkit"
    return (
        *files,
        _standin("nvidia-cdi-refresh.service", version, 0o644, f"{units}/nvidia-cdi-refresh.service"),
        _standin("nvidia-cdi-refresh.path", version, 0o644, f"{units}/nvidia-cdi-refresh.path"),
        _standin("nvidia-cdi-refresh.env", version, 0o644, f"{settings}/nvidia-cdi-refresh.env"),
    )


def toolkit_packages(version: str) -> list[Package]:
    same = f"(= {version})"
    conffiles = [f.path for f in toolkit_base_files(version) if f.path.startswith("/etc/")]
    return [
        Package(
            "libnvidia-container1",
            version,
            "NVIDIA container runtime library (gpuctl test stand-in)",
            (PackageFile("/usr/lib/x86_64-linux-gnu/libnvidia-container.so.1", b"stand-in\n"),),
        ),
        Package(
            "libnvidia-container-tools",
            version,
            "NVIDIA container runtime library, command-line tools (gpuctl test stand-in)",
            (_standin("nvidia-container-cli", version),),
            depends=(f"libnvidia-container1 {same}",),
        ),
        Package(
            "nvidia-container-toolkit-base",
            version,
            "NVIDIA Container Toolkit base (gpuctl test stand-in)",
            toolkit_base_files(version),
            depends=("python3",),
            conffiles=tuple(conffiles),
        ),
        Package(
            "nvidia-container-toolkit",
            version,
            "NVIDIA Container toolkit (gpuctl test stand-in)",
            (_standin("nvidia-container-runtime-hook", version),),
            depends=(f"nvidia-container-toolkit-base {same}", f"libnvidia-container-tools {same}"),
        ),
    ]


def cuda_repo_packages() -> list[Package]:
    packages = [driver_package(name, v) for name in DRIVER_PACKAGES for v in DRIVER_VERSIONS]
    packages += [fabricmanager_package(version) for version in DRIVER_VERSIONS]
    packages.append(kernel_headers_package(platform.release()))
    return packages


def toolkit_repo_packages() -> list[Package]:
    return [package for version in TOOLKIT_VERSIONS for package in toolkit_packages(version)]


def _control(package: Package) -> str:
    lines = [
        f"Package: {package.name}",
        f"Version: {package.version}",
        f"Architecture: {package.architecture}",
        "Maintainer: gpuctl test harness <gpuctl-tests@example.invalid>",
        "Section: utils",
        "Priority: optional",
    ]
    if package.depends:
        lines.append("Depends: " + ", ".join(package.depends))
    if package.conflicts:
        lines.append("Conflicts: " + ", ".join(package.conflicts))
        lines.append("Replaces: " + ", ".join(package.conflicts))
    lines.append(f"Description: {package.description}")
    return "\n".join(lines) + "\n"


def build_deb(package: Package, workdir: Path, output_dir: Path) -> Path:
    """Lay the package tree out under `workdir` and pack it into `output_dir`."""
    tree = workdir / f"{package.name}_{package.version}"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN/control").write_text(_control(package))
    if package.conffiles:
        (tree / "DEBIAN/conffiles").write_text("".join(f"{c}\n" for c in package.conffiles))
    for packaged in package.files:
        target = tree / packaged.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(packaged.content)
        target.chmod(packaged.mode)
    deb = output_dir / f"{package.name}_{package.version}_{package.architecture}.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-Zgzip", "--build", str(tree), str(deb)],
        check=True,
        capture_output=True,
    )
    return deb
