"""The fake GPUs of a gpuctl test node, read from its (fake) PCI bus through gpuctl's host probe.

Installed next to the stand-in nvidia-smi and nvidia-ctk inside the nodes, with the probe
(host_probe.py) and gpuctl's nvidia_smi.py; standard library only.
"""

from __future__ import annotations

import socket
from typing import Any

import host_probe  # type: ignore[import-not-found]  # installed next to this file
import nvidia_smi  # type: ignore[import-not-found]  # installed next to this file

# PCI device id → (GFD product label, memory in MiB) for the boards the harness can fake.
PRODUCTS = {
    "0x2330": ("NVIDIA-H100-80GB-HBM3", 81559),
    "0x2331": ("NVIDIA-H100-PCIe", 81559),
    "0x20b2": ("NVIDIA-A100-SXM4-80GB", 81920),
    "0x26b9": ("NVIDIA-L40S", 46068),
}


def nvidia_gpu_device_ids() -> list[str]:
    """PCI device ids of the NVIDIA GPUs, in bus order."""
    return [device["device"] for device in host_probe.pci_devices() if device["kind"] == "gpu"]


def nvswitch_count() -> int:
    return sum(1 for device in host_probe.pci_devices() if device["kind"] == "nvswitch")


def node_gpus(driver_version: str) -> list[Any]:
    """This node's GPUs as nvidia-smi would list them with driver `driver_version` loaded."""
    ids = nvidia_gpu_device_ids()
    if not ids:
        return []
    product, memory_mib = PRODUCTS.get(ids[0], ("NVIDIA-H100-80GB-HBM3", 81559))
    gpus: list[Any] = nvidia_smi.fake_gpus(
        socket.gethostname(), len(ids), product, memory_mib, driver_version
    )
    return gpus
