"""ansible-runner events → per-host progress and the failing tasks (pure, unit-tested).

Counts follow Ansible's own recap: `ok` includes `changed`; the final `playbook_on_stats` event
replaces the running counts with Ansible's authoritative ones.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

TAIL_LINES = 40
MESSAGE_LIMIT = 400
# The whole output a failed task printed (msg, stderr, stdout), kept for its diagnosis: the line that
# names the cause (a DKMS or apt error) is often not among the last ones `message` shows.
DETAIL_LIMIT = 20_000
_STATS_KEYS = {
    "ok": "ok",
    "changed": "changed",
    "failures": "failed",
    "dark": "unreachable",
    "skipped": "skipped",
}


@dataclass(frozen=True)
class HostProgress:
    name: str
    current_task: str = ""
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0
    done: bool = False


@dataclass(frozen=True)
class FailedTask:
    host: str
    task: str
    message: str
    unreachable: bool = False
    action: str = ""
    detail: str = ""  # the task's whole output, up to DETAIL_LIMIT characters


@dataclass
class ProgressState:
    """Mutable view of a running playbook, fed by runner events from the runner's thread."""

    hosts: dict[str, HostProgress] = field(default_factory=dict)
    play: str = ""
    failed_tasks: list[FailedTask] = field(default_factory=list)
    final_stats_seen: bool = False
    # The playbook's set_stats data (ansible-runner's `artifact_data`), e.g. gpuctl_driver_state.
    custom_stats: dict[str, Any] = field(default_factory=dict)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    # ansible-playbook's own command-line error; its usage text that follows pushes it out of `tail`.
    usage_error: str = ""
    # (host, task) of each task that changed (in check mode: would change) a host, in order.
    changed_tasks: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def apply(self, event: Mapping[str, Any]) -> None:
        with self.lock:
            self._apply(event)

    def add_host(self, name: str) -> None:
        """List a host before its first event, so progress shows every host from the start."""
        with self.lock:
            self._host(name)

    def host_stats(self, key: str) -> dict[str, Mapping[str, Any]]:
        """Per-host values the playbook reported with set_stats under `key` ({host: value})."""
        with self.lock:
            value = self.custom_stats.get(key)
        if not isinstance(value, Mapping):
            return {}
        return {str(host): data for host, data in value.items() if isinstance(data, Mapping)}

    def snapshot(self) -> tuple[str, tuple[HostProgress, ...]]:
        with self.lock:
            return self.play, tuple(self.hosts.values())

    def _apply(self, event: Mapping[str, Any]) -> None:
        for line in str(event.get("stdout") or "").splitlines():
            if line.strip():
                self.tail.append(line)
            if "ansible-playbook: error:" in line:
                self.usage_error = line.strip()
        kind = str(event.get("event", ""))
        data = event.get("event_data") or {}
        if kind == "playbook_on_play_start":
            self.play = str(data.get("play", ""))
        elif kind == "playbook_on_stats":
            self._apply_stats(data)
        elif kind.startswith("runner_on_") and data.get("host"):
            self._apply_host_event(kind, data)

    def _host(self, name: str) -> HostProgress:
        return self.hosts.setdefault(name, HostProgress(name))

    def _apply_host_event(self, kind: str, data: Mapping[str, Any]) -> None:
        name = str(data["host"])
        host = self._host(name)
        task = str(data.get("task", ""))
        result = data.get("res") or {}
        if kind == "runner_on_start":
            self.hosts[name] = replace(host, current_task=task)
        elif kind == "runner_on_ok":
            changed = bool(result.get("changed")) if isinstance(result, Mapping) else False
            self.hosts[name] = replace(host, ok=host.ok + 1, changed=host.changed + int(changed))
            if changed:
                self.changed_tasks.append((name, task))
        elif kind == "runner_on_skipped":
            self.hosts[name] = replace(host, skipped=host.skipped + 1)
        elif kind == "runner_on_failed" and not data.get("ignore_errors"):
            self.hosts[name] = replace(host, failed=host.failed + 1)
            self.failed_tasks.append(_failed_task(name, task, data, unreachable=False))
        elif kind == "runner_on_unreachable":
            self.hosts[name] = replace(host, unreachable=host.unreachable + 1)
            self.failed_tasks.append(_failed_task(name, task, data, unreachable=True))

    def _apply_stats(self, data: Mapping[str, Any]) -> None:
        self.final_stats_seen = True
        artifact_data = data.get("artifact_data")
        if isinstance(artifact_data, Mapping):
            self.custom_stats = dict(artifact_data)
        names = {name for key in _STATS_KEYS for name in (data.get(key) or {})}
        for name in sorted(names):
            count = {field_: int((data.get(key) or {}).get(name, 0)) for key, field_ in _STATS_KEYS.items()}
            self.hosts[name] = HostProgress(
                name,
                ok=count["ok"],
                changed=count["changed"],
                failed=count["failed"],
                unreachable=count["unreachable"],
                skipped=count["skipped"],
                done=True,
            )


def _failed_task(host: str, task: str, data: Mapping[str, Any], *, unreachable: bool) -> FailedTask:
    result = data.get("res") or {}
    return FailedTask(host, task, failure_message(result), unreachable, _action(data), failure_detail(result))


def _action(data: Mapping[str, Any]) -> str:
    return str(data.get("resolved_action") or data.get("task_action") or "")


def failure_message(result: Any) -> str:
    """The most telling line(s) of a failed task result, shortened to one line."""
    if not isinstance(result, Mapping):
        return _one_line(str(result))
    items = result.get("results")
    if isinstance(items, list):
        failed_items = [item for item in items if isinstance(item, Mapping) and item.get("failed")]
        if failed_items:
            return failure_message(failed_items[0])
    message = str(result.get("msg") or "").strip()
    detail = str(result.get("stderr") or result.get("module_stderr") or result.get("stdout") or "").strip()
    if detail and (not message or "non-zero return code" in message or "MODULE FAILURE" in message):
        last = [line for line in detail.splitlines() if line.strip()][-3:]
        message = f"{message}: {' | '.join(last)}" if message else " | ".join(last)
    return _one_line(message or "task failed without a message")


def failure_detail(result: Any) -> str:
    """Everything a failed task result printed (msg, stderr, stdout; of its failed loop items), one
    part a line, up to DETAIL_LIMIT characters."""
    if not isinstance(result, Mapping):
        return str(result)[:DETAIL_LIMIT]
    items = result.get("results")
    parts = [
        failure_detail(item)
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, Mapping) and item.get("failed")
    ]
    keys = ("msg", "stderr", "module_stderr", "stdout", "module_stdout")
    parts += [str(result[key]) for key in keys if result.get(key)]
    return "\n".join(parts)[:DETAIL_LIMIT]


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MESSAGE_LIMIT else line[: MESSAGE_LIMIT - 1] + "…"
