"""`nvidia-smi nvlink -s` (`--status`): each GPU's NVLinks and the speed each one trained at, or
`<inactive>` for a link that is down. The NCCL level prints it before its all-reduce, so a slow
node's verdict names the GPUs whose links are down; the simulated cluster prints the same lines
(tests/corpus/nvidia-smi holds a real capture). Standard library only."""

from __future__ import annotations

import re
from dataclasses import dataclass

COMMAND = "nvidia-smi nvlink -s"
_GPU = re.compile(r"^GPU (?P<index>\d+): (?P<name>.*?)(?: \(UUID: (?P<uuid>[^)]*)\))?\s*$")
_LINK = re.compile(r"^\s+Link (?P<link>\d+): (?P<state>.*?)\s*$")
_SPEED = re.compile(r"^(?P<gbps>\d+(?:\.\d+)?) GB/s$")


@dataclass(frozen=True)
class GpuLinks:
    """One GPU's links: each one's speed in GB/s, None for `<inactive>` (or a state without one)."""

    index: int
    name: str
    uuid: str
    speeds_gbps: tuple[float | None, ...]

    @property
    def active(self) -> int:
        return sum(speed is not None for speed in self.speeds_gbps)

    @property
    def total(self) -> int:
        return len(self.speeds_gbps)


def parse_nvlink_status(text: str) -> tuple[GpuLinks, ...]:
    """Every `GPU N: NAME (UUID: ...)` block and its `Link K: ...` lines; other lines are skipped."""
    gpus: list[GpuLinks] = []
    for line in text.splitlines():
        if gpu := _GPU.match(line):
            gpus.append(GpuLinks(int(gpu["index"]), gpu["name"], gpu["uuid"] or "", ()))
        elif (link := _LINK.match(line)) and gpus:
            speed = _SPEED.match(link["state"])
            last = gpus[-1]
            gpus[-1] = GpuLinks(
                last.index, last.name, last.uuid, (*last.speeds_gbps, float(speed["gbps"]) if speed else None)
            )
    return tuple(gpus)


def links_down(gpus: tuple[GpuLinks, ...]) -> str:
    """What `nvidia-smi nvlink -s` says is down ("" when every GPU has all the links any GPU of the
    node has active): `GPU 3: 12 of 18 NVLinks active`, the first three such GPUs."""
    most = max((gpu.total for gpu in gpus), default=0)
    short = [gpu for gpu in gpus if gpu.active < most]
    if not short:
        return ""
    named = "; ".join(f"GPU {gpu.index}: {gpu.active} of {most} NVLinks active" for gpu in short[:3])
    more = f" (and {len(short) - 3} more GPUs)" if len(short) > 3 else ""
    return f"`{COMMAND}`: {named}{more}"


def links_summary(gpus: tuple[GpuLinks, ...]) -> str:
    """The node's links in one phrase for the expectation's reason ("" without NVLinks listed):
    `8 GPUs x 18 of 18 NVLinks active at 26.562 GB/s`, or each GPU's count when they differ."""
    if not any(gpu.total for gpu in gpus):
        return ""
    speeds = sorted({speed for gpu in gpus for speed in gpu.speeds_gbps if speed is not None})
    at = f" at {'/'.join(f'{speed:g}' for speed in speeds)} GB/s" if speeds else ""
    counts = {(gpu.active, gpu.total) for gpu in gpus}
    if len(counts) == 1:
        active, total = counts.pop()
        return f"`{COMMAND}`: {len(gpus)} GPUs x {active} of {total} NVLinks active{at}"
    each = ", ".join(f"GPU {gpu.index} {gpu.active} of {gpu.total}" for gpu in gpus)
    return f"`{COMMAND}`: NVLinks active {each}{at}"
