"""The OS support matrix and preflight thresholds, read from the file the roles read too
(playbooks/roles/gpuctl_probe/vars/main.yml, `gpuctl_host_support`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from gpuctl.package_data import playbooks_dir

SUPPORT_FILE = ("roles", "gpuctl_probe", "vars", "main.yml")


@dataclass(frozen=True)
class HostSupport:
    os_versions: dict[str, tuple[str, ...]]  # os-release ID -> versions ("9": every 9.x)
    os_names: str  # the list as messages say it
    disk_warn_below_mib: int
    # GPUs that only come in NVL rack systems (GB200): no host Fabric Manager, IMEX instead.
    nvl_rack_gpu_device_ids: frozenset[str] = frozenset()

    def supports(self, os_id: str, version: str) -> bool:
        """The roles' rule too (nvidia_driver/tasks/read.yml): a listed version without a dot
        matches its whole major version."""
        major = version.split(".", maxsplit=1)[0]
        return any(
            version == listed or ("." not in listed and major == listed)
            for listed in self.os_versions.get(os_id.lower(), ())
        )


@functools.cache
def host_support() -> HostSupport:
    import yaml

    path = playbooks_dir().joinpath(*SUPPORT_FILE)
    data: dict[str, Any] = (yaml.safe_load(path.read_text(encoding="utf-8")) or {})["gpuctl_host_support"]
    return HostSupport(
        os_versions={
            os_id: tuple(str(version) for version in entry["versions"]) for os_id, entry in data["os"].items()
        },
        os_names=str(data["os_names"]),
        disk_warn_below_mib=int(data["disk_warn_below_mib"]),
        nvl_rack_gpu_device_ids=frozenset(str(device).lower() for device in data["nvl_rack_gpu_device_ids"]),
    )
