"""What NVIDIA's device plugin v0.20 advertises for a node's GPUs under its configuration:
time-slicing and MPS replicas, `renameByDefault`, the MIG strategies, the GFD labels that go with
them, and how the kubelet's allocation of replicas spreads them over the physical GPUs."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

from gpuctl.sim.runtime.objects import GPU
from gpuctl.sim.runtime.plugin_config import PluginConfig
from gpuctl.sim.scenario import NodeSpec

MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
INVALID_MIG = (
    "invalid MIG configuration: at least one device with migEnabled=true was not configured correctly: "
)


@dataclass(frozen=True)
class Device:
    """One device the plugin lists to the kubelet: a full GPU, a MIG device, or a replica of one."""

    resource: str
    gpu: int  # index of the physical GPU on the node
    mig: int = -1  # index of the MIG device on that GPU; -1: the full GPU
    replica: int = 0
    profile: str = ""  # the MIG profile of a MIG device


@dataclass(frozen=True)
class Advertised:
    """The plugin's view of one node: devices per resource (healthy first), labels, failures."""

    devices: dict[str, list[Device]] = field(default_factory=dict)
    healthy: dict[str, int] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    error: str = ""  # the plugin exits at start-up with this error
    warnings: tuple[str, ...] = ()  # logged, not fatal


def mig_enabled(spec: NodeSpec) -> bool:
    return bool(spec.mig)


def _mig_profiles(spec: NodeSpec) -> list[tuple[str, int]]:
    return [(profile, count) for profile, count in spec.mig if count > 0]


def _mig_devices(spec: NodeSpec, resource_of: dict[str, str]) -> list[Device]:
    devices = []
    for gpu in range(spec.gpus):
        index = 0
        for profile, count in _mig_profiles(spec):
            for _ in range(count):
                devices.append(Device(resource_of[profile], gpu, index, profile=profile))
                index += 1
    return devices


def _base_devices(spec: NodeSpec, config: PluginConfig) -> tuple[list[Device], str, tuple[str, ...]]:
    """(devices before replication, fatal error, warnings) for the MIG strategy in force."""
    if config.mig_strategy == "none" or not mig_enabled(spec):
        return [Device(GPU, gpu) for gpu in range(spec.gpus)], "", ()
    profiles = _mig_profiles(spec)
    if config.mig_strategy == "single":
        if not profiles:
            return [], INVALID_MIG + "device 0 has no MIG devices configured", ()
        if len(profiles) > 1:
            return [], INVALID_MIG + "more than one MIG device type present on node", ()
        return _mig_devices(spec, {profiles[0][0]: GPU}), "", ()
    warnings = (
        () if profiles else tuple(f"device {gpu} has no MIG devices configured" for gpu in range(spec.gpus))
    )
    return _mig_devices(spec, {p: f"{MIG_RESOURCE_PREFIX}{p}" for p, _ in profiles}), "", warnings


@functools.lru_cache(maxsize=16384)
def advertise(spec: NodeSpec, config: PluginConfig) -> Advertised:
    """What the plugin would register with the kubelet on this node (nothing on a fatal error).

    A function of the node's spec and the plugin's config, asked at every plugin start, node
    refresh and pod admission: remembered (callers only read it)."""
    if config.error:
        return Advertised(error=config.error)
    base, error, warnings = _base_devices(spec, config)
    if error:
        return Advertised(labels=_invalid_mig_labels(spec), error=error)
    devices: dict[str, list[Device]] = {}
    for device in base:
        if device.resource == GPU and config.shared:
            for replica in range(config.replicas):
                shared = Device(config.shared_resource, device.gpu, device.mig, replica, device.profile)
                devices.setdefault(shared.resource, []).append(shared)
        else:
            devices.setdefault(device.resource, []).append(device)
    broken = spec.gpus - spec.unhealthy_gpus
    healthy = {name: sum(1 for d in listed if d.gpu < broken) for name, listed in devices.items()}
    return Advertised(devices, healthy, gfd_labels(spec, config, devices), warnings=warnings)


def _memory_mib(profile: str) -> int:
    """A MIG profile's memory as GFD labels it, from the profile's name (1g.10gb → 10240)."""
    size = profile.split(".", 1)[1].split("+", 1)[0].removesuffix("gb")
    return int(size) * 1024 if size.isdigit() else 0


def _resource_labels(prefix: str, product: str, count: int, config: PluginConfig | None) -> dict[str, str]:
    """GFD's per-resource labels: product (with -SHARED), count, replicas, sharing-strategy."""
    shared = config is not None and config.shared
    return {
        f"{prefix}.product": product + ("-SHARED" if shared and config and not config.rename else ""),
        f"{prefix}.count": str(count),
        f"{prefix}.replicas": str(config.replicas if config is not None and shared else (1 if config else 0)),
        f"{prefix}.sharing-strategy": config.sharing if config is not None and shared else "none",
    }


def gfd_labels(spec: NodeSpec, config: PluginConfig, devices: dict[str, list[Device]]) -> dict[str, str]:
    """The labels GPU feature discovery sets from the same configuration."""
    model = spec.gpu_product
    labels = {
        "nvidia.com/mps.capable": "true" if config.sharing == "mps" else "false",
        "nvidia.com/mig.capable": "true" if mig_enabled(spec) else "false",
    }
    mig_in_use = config.mig_strategy != "none" and mig_enabled(spec)
    if not mig_in_use:
        labels.update(_resource_labels(GPU, model, spec.gpus, config))
        labels[f"{GPU}.memory"] = str(spec.gpu_memory_mib)
        return labels
    labels["nvidia.com/mig.strategy"] = config.mig_strategy
    if config.mig_strategy == "single":
        profile = _mig_profiles(spec)[0][0]
        count = sum(1 for d in base_of(devices) if d.mig >= 0)
        labels.update(_resource_labels(GPU, f"{model}-MIG-{profile}", count, config))
        labels[f"{GPU}.memory"] = str(_memory_mib(profile))
        return labels
    # mixed: the MIG-enabled GPUs are labelled without sharing, each profile on its own.
    labels.update(_resource_labels(GPU, model, spec.gpus, None))
    labels[f"{GPU}.memory"] = str(spec.gpu_memory_mib)
    for profile, count in _mig_profiles(spec):
        prefix = f"{MIG_RESOURCE_PREFIX}{profile}"
        labels.update(_resource_labels(prefix, f"{model}-MIG-{profile}", count * spec.gpus, config))
        labels[f"{prefix}.memory"] = str(_memory_mib(profile))
    return labels


def base_of(devices: dict[str, list[Device]]) -> list[Device]:
    """Each device once, whatever its replicas."""
    return [d for listed in devices.values() for d in listed if d.replica == 0]


def _invalid_mig_labels(spec: NodeSpec) -> dict[str, str]:
    """What GFD labels when the single strategy meets an invalid MIG layout."""
    return {
        "nvidia.com/mig.capable": "true",
        "nvidia.com/mig.strategy": "single",
        f"{GPU}.product": f"{spec.gpu_product}-MIG-INVALID",
        f"{GPU}.count": "0",
        f"{GPU}.replicas": "0",
        f"{GPU}.sharing-strategy": "",
        f"{GPU}.memory": "0",
    }


def refused_request(config: PluginConfig, resource: str, wanted: int) -> str:
    """The plugin's Allocate error for a request it refuses, "" when it serves it."""
    if (
        config.shared
        and resource == config.shared_resource
        and wanted > 1
        and config.fail_requests_greater_than_one
    ):
        return (
            f'invalid allocation request for "{resource}": invalid request: '
            f"maximum request size for shared resources is 1; found {wanted}"
        )
    return ""


def pick(free: list[Device], held: list[Device], wanted: int) -> list[Device]:
    """The plugin's distributed policy for replicas: each pick goes to the physical GPU with the
    fewest replicas in use; full GPUs and MIG devices in order."""
    load: Counter[tuple[int, int]] = Counter((d.gpu, d.mig) for d in held)
    chosen: list[Device] = []
    pool = list(free)
    for _ in range(wanted):
        best = min(pool, key=lambda d: (load[(d.gpu, d.mig)], d.gpu, d.mig, d.replica))
        pool.remove(best)
        load[(best.gpu, best.mig)] += 1
        chosen.append(best)
    return chosen
