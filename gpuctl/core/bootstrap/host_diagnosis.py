"""A failed host task's output run through the diagnosis table: the cause and the fix for the
host (apt, DKMS, modprobe, systemd units), not only the task's name and its last lines."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuctl.diagnose import Diagnosis, diagnose
from gpuctl.hosts.events import FailedTask

# The table's sources a host's own output can carry, the host's first: a task that runs modprobe
# or nvidia-smi prints the kernel's and nvidia-smi's words, one that restarts containerd the runtime's.
_SOURCES = ("host", "kernel", "nvidia-smi", "runtime")


@dataclass(frozen=True)
class HostDiagnosis:
    """The cause and fix found in the output of one failed task of a host."""

    task: str
    found: Diagnosis


def diagnose_task(task: FailedTask) -> Diagnosis | None:
    """The first known signature in the task's whole output, with {node} the task's host."""
    text = task.detail or task.message
    for source in _SOURCES:
        found = diagnose(text, source, node=task.host)
        if found is not None:
            return found
    return None


def host_diagnosis(host: str, tasks: Iterable[FailedTask]) -> HostDiagnosis | None:
    """The diagnosis of the host's first failed task that has one (an unreachable host has none:
    its task printed SSH's words, which the failed task's hint already covers)."""
    for task in tasks:
        if task.host != host or task.unreachable:
            continue
        found = diagnose_task(task)
        if found is not None:
            return HostDiagnosis(task.task, found)
    return None
