"""A fake PCI bus: G NVIDIA GPUs as sysfs-like directories, bind-mounted over /sys/bus/pci/devices.

Each device directory holds what probes read: ``vendor``, ``device``, ``class``, the subsystem ids,
``numa_node`` and a 64-byte ``config`` header so ``lspci -nn`` names the device too. The host's own
devices are hidden: a node sees exactly its GPUs.
"""

from __future__ import annotations

import struct
from pathlib import Path

NVIDIA_VENDOR = 0x10DE
H100_SXM5_80GB = 0x2330
DISPLAY_3D_CONTROLLER = 0x030200
NVSWITCH_BRIDGE = 0x068000
# The bus numbers of an HGX H100 board (gpuctl.nvidia_smi.HGX_PCI_BUSES), then consecutive ones.
HGX_BUSES = (0x18, 0x2A, 0x3A, 0x5D, 0x9A, 0xAB, 0xBA, 0xDB)


def pci_address(index: int) -> str:
    bus = HGX_BUSES[index] if index < len(HGX_BUSES) else 0xE0 + index
    return f"0000:{bus:02x}:00.0"


def _config_header(device_id: int, class_code: int) -> bytes:
    """The first 64 bytes of PCI configuration space (type 0 header)."""
    header = struct.pack(
        "<HHHHBBBB",
        NVIDIA_VENDOR,
        device_id,
        0x0006,  # command: memory space + bus master
        0x0010,  # status: capabilities list
        0xA1,  # revision
        class_code & 0xFF,
        (class_code >> 8) & 0xFF,
        (class_code >> 16) & 0xFF,
    )
    header += bytes(0x2C - len(header))
    header += struct.pack("<HH", NVIDIA_VENDOR, 0x16C1)  # subsystem vendor / device
    return header + bytes(64 - len(header))


def _write_device(directory: Path, device_id: int, class_code: int, numa_node: int) -> None:
    directory.mkdir(parents=True)
    attributes = {
        "vendor": f"0x{NVIDIA_VENDOR:04x}",
        "device": f"0x{device_id:04x}",
        "class": f"0x{class_code:06x}",
        "subsystem_vendor": f"0x{NVIDIA_VENDOR:04x}",
        "subsystem_device": "0x16c1",
        "revision": "0xa1",
        "numa_node": str(numa_node),
        "enable": "1",
        "irq": "0",
    }
    for name, value in attributes.items():
        (directory / name).write_text(value + "\n")
    (directory / "config").write_bytes(_config_header(device_id, class_code))


def write_fake_bus(root: Path, gpus: int, device_id: int = H100_SXM5_80GB, nvswitches: int = 0) -> list[str]:
    """Create `root` holding `gpus` NVIDIA GPUs (and optional NVSwitches); return their addresses."""
    root.mkdir(parents=True, exist_ok=True)
    addresses = []
    for index in range(gpus):
        address = pci_address(index)
        _write_device(root / address, device_id, DISPLAY_3D_CONTROLLER, 0 if index < 4 else 1)
        addresses.append(address)
    for index in range(nvswitches):
        _write_device(root / f"0000:{0x05 + index:02x}:00.0", 0x22A3, NVSWITCH_BRIDGE, 0)
    return addresses
