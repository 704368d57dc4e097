"""`gpuctl status` of DRA's nodes: their GPUs as their ResourceSlices publish them, and what
allocated ResourceClaims hold of them (resource.k8s.io discovery, DeviceClasses, ResourceSlices,
ResourceClaims: up to four list requests)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.base import PublishedGpus
from gpuctl.kube.claims import devices_in_use
from gpuctl.kube.dra import DraNode, read_inventory

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient


def summary(published: DraNode, allocated: int) -> PublishedGpus:
    claimable = sum(1 for device in published.devices if not device.taints and not device.gated)
    count = published.gpus or published.mig_devices
    gated = tuple((d.name, d.gated, d.gate_key) for d in published.devices if d.gated)
    tainted = len(published.tainted)
    return PublishedGpus(
        Stack.DRA,
        count,
        min(claimable, count),
        allocated,
        tainted,
        published.unhealthy,
        gated,
        product=published.product,
        driver_version=published.driver_version,
    )


def published_gpus(api_client: ApiClient) -> dict[str, PublishedGpus]:
    """Each node's published GPUs. A denied list ends status (exit 3) rather than hide the GPUs
    it publishes (docs/rbac.md)."""
    inventory = read_inventory(api_client, denied_is_error=True)
    claimed = devices_in_use(api_client, inventory.version) if inventory.nodes else {}
    return {name: summary(node, claimed.get(name, 0)) for name, node in inventory.nodes.items()}
