"""The fake GPUs of a gpuctl test node, read from its (fake) PCI bus.

Installed next to the stand-in nvidia-smi and nvidia-ctk inside the nodes; standard library only.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import nvidia_smi  # type: ignore[import-not-found]  # installed next to this file

PCI_DEVICES = Path("/sys/bus/pci/devices")
NVIDIA_VENDOR = "0x10de"

# PCI device id → (GFD product label, memory in MiB) for the boards the harness can fake.
PRODUCTS = {
    "0x2330": ("NVIDIA-H100-80GB-HBM3", 81559),
    "0x2331": ("NVIDIA-H100-PCIe", 81559),
    "0x20b2": ("NVIDIA-A100-SXM4-80GB", 81920),
    "0x26b9": ("NVIDIA-L40S", 46068),
}


def _read(device: Path, attribute: str) -> str:
    try:
        return (device / attribute).read_text().strip().lower()
    except OSError:
        return ""


def nvidia_gpu_device_ids(root: Path = PCI_DEVICES) -> list[str]:
    """PCI device ids of the NVIDIA display controllers (class 0x03xxxx), in bus order."""
    ids = []
    for device in sorted(root.iterdir()) if root.is_dir() else []:
        if _read(device, "vendor") == NVIDIA_VENDOR and _read(device, "class").startswith("0x03"):
            ids.append(_read(device, "device"))
    return ids


def nvswitch_count(root: Path = PCI_DEVICES) -> int:
    """NVSwitches are NVIDIA bridges (class 0x0680)."""
    if not root.is_dir():
        return 0
    return sum(
        1
        for device in root.iterdir()
        if _read(device, "vendor") == NVIDIA_VENDOR and _read(device, "class").startswith("0x0680")
    )


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
