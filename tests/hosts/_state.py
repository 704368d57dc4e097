"""What `up` created, recorded before it is created, so `down` removes exactly that.

Each resource is appended to the state JSON (and the file rewritten) *before* the harness creates
it, so a run that crashes half-way still leaves a complete list behind; tearing down tolerates
resources that never came to exist. Processes are recorded with their start time so a recycled PID
is never signalled.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STOP_GRACE_SECONDS = 15.0
KILL_GRACE_SECONDS = 5.0


def process_start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks), or None when PID is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its closing one.
    fields = stat[stat.rindex(")") + 2 :].split()
    if fields[0] == "Z":
        return None
    return fields[19]


@dataclass
class HarnessState:
    """The state file's content: ordered resources plus facts the nodes need (addresses...)."""

    path: Path
    resources: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> HarnessState:
        data = json.loads(path.read_text())
        return cls(path=path, resources=data["resources"], facts=data["facts"])

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(".tmp")
        partial.write_text(json.dumps({"resources": self.resources, "facts": self.facts}, indent=2))
        partial.replace(self.path)

    def record(self, kind: str, **details: Any) -> None:
        self.resources.append({"kind": kind, **details})
        self.save()

    def record_process(self, pid: int, name: str, *, graceful: bool) -> None:
        """`graceful` processes get SIGTERM first (nspawn then halts its node cleanly)."""
        self.record("process", pid=pid, start=process_start_time(pid), name=name, graceful=graceful)


def _alive(record: dict[str, Any]) -> bool:
    start = process_start_time(record["pid"])
    return start is not None and start == record["start"]


def _signal(record: dict[str, Any], signum: signal.Signals) -> None:
    if _alive(record):
        with contextlib.suppress(ProcessLookupError):
            os.kill(record["pid"], signum)


def _wait_gone(records: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    deadline = time.monotonic() + seconds
    remaining = [r for r in records if _alive(r)]
    while remaining and time.monotonic() < deadline:
        time.sleep(0.1)
        remaining = [r for r in remaining if _alive(r)]
    return remaining


def stop_processes(records: list[dict[str, Any]]) -> list[str]:
    """SIGTERM the graceful ones, then SIGKILL whatever is left; names of the unkillable."""
    for record in records:
        if record["graceful"]:
            _signal(record, signal.SIGTERM)
    left = _wait_gone([r for r in records if r["graceful"]], STOP_GRACE_SECONDS)
    for record in [*left, *records]:
        _signal(record, signal.SIGKILL)
    return [f"{r['name']} (pid {r['pid']})" for r in _wait_gone(records, KILL_GRACE_SECONDS)]


def _run_quietly(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def mounted(path: str) -> bool:
    real = os.path.realpath(path)
    with open("/proc/self/mounts") as mounts:
        return any(line.split()[1] == real for line in mounts)


def _unmount(path: str) -> bool:
    if mounted(path) and _run_quietly(["umount", path]).returncode != 0:
        _run_quietly(["umount", "--lazy", path])
    return mounted(path)


def _delete_netns(name: str) -> bool:
    if Path("/run/netns", name).exists():
        _run_quietly(["ip", "netns", "delete", name])
    return Path("/run/netns", name).exists()


def _delete_link(name: str) -> bool:
    if Path("/sys/class/net", name).exists():
        _run_quietly(["ip", "link", "delete", name])
    return Path("/sys/class/net", name).exists()


def _remove_cgroup(path: str) -> bool:
    remove_cgroup(Path(path))
    return Path(path).exists()


def _remove_dir(path: str) -> bool:
    shutil.rmtree(path, ignore_errors=True)
    return Path(path).exists()


def _remove_file(path: str) -> bool:
    Path(path).unlink(missing_ok=True)
    return False


# kind -> (the record's key, a remover that answers whether the resource is still there)
_REMOVERS: dict[str, tuple[str, Callable[[str], bool]]] = {
    "mount": ("path", _unmount),
    "netns": ("name", _delete_netns),
    "link": ("name", _delete_link),
    "cgroup": ("path", _remove_cgroup),
    "dir": ("path", _remove_dir),
    "file": ("path", _remove_file),
}


def _remove(record: dict[str, Any]) -> str | None:
    """Undo one non-process resource; a problem that remains is returned as text."""
    if record["kind"] not in _REMOVERS:
        return f"unknown resource kind {record['kind']!r}"
    key, remover = _REMOVERS[record["kind"]]
    return f"{record['kind']} {record[key]}" if remover(record[key]) else None


def remove_cgroup(cgroup: Path) -> None:
    """SIGKILL whatever still runs in the node's cgroup tree (a node's last processes, whoever
    started them), then remove the tree, innermost first."""
    if not cgroup.is_dir():
        return
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while time.monotonic() < deadline:
        pids = {int(pid) for procs in cgroup.rglob("cgroup.procs") for pid in procs.read_text().split()}
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
    for directory in sorted((d for d in cgroup.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
        with contextlib.suppress(OSError):
            directory.rmdir()
    with contextlib.suppress(OSError):
        cgroup.rmdir()


def teardown(state: HarnessState) -> list[str]:
    """Remove every recorded resource, newest first; returns what could not be removed."""
    problems = stop_processes([r for r in state.resources if r["kind"] == "process"])
    for record in reversed(state.resources):
        if record["kind"] != "process":
            problem = _remove(record)
            if problem:
                problems.append(problem)
    return problems
