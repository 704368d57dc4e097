"""Runs owned by a process (a pytest session) are torn down by the next `up` once that owner died.

Nodes brought up from the command line outlive the command by design and have no owner: only
`down` removes them. Nodes a test session brings up name the session as owner; when the session
is killed before its fixtures' teardown ran, the next `up` on this machine finds the run here,
sees the owner gone and removes the orphaned nodes, so crashed sessions do not pile up.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tests.hosts._state import HarnessState, process_start_time, teardown

REGISTRY = Path("/run/gpuctl-test/runs")


def _entry(state_file: Path) -> Path:
    return REGISTRY / (hashlib.sha256(str(state_file).encode()).hexdigest()[:16] + ".json")


def register(state: HarnessState, owner_pid: int | None) -> None:
    """Remember the run (and its owner, if any) before it creates anything."""
    if owner_pid is not None:
        state.facts["owner"] = {"pid": owner_pid, "start": process_start_time(owner_pid)}
        state.save()
    REGISTRY.mkdir(parents=True, exist_ok=True)
    _entry(state.path).write_text(json.dumps({"state": str(state.path)}))


def unregister(state_file: Path) -> None:
    _entry(state_file).unlink(missing_ok=True)


def _orphaned(state: HarnessState) -> bool:
    owner = state.facts.get("owner")
    if not owner:
        return False
    return bool(process_start_time(owner["pid"]) != owner["start"])


def sweep_orphans(log: Callable[[str], None]) -> None:
    """Tear down every registered run whose owner process is gone."""
    for entry in sorted(REGISTRY.glob("*.json")) if REGISTRY.is_dir() else []:
        state_file = Path(json.loads(entry.read_text())["state"])
        if not state_file.exists():
            entry.unlink(missing_ok=True)
            continue
        state = HarnessState.load(state_file)
        if _orphaned(state):
            log(f"up: removing orphaned test nodes of {state_file.parent} (their owner died)")
            if not teardown(state):
                shutil.rmtree(state_file.parent, ignore_errors=True)
                entry.unlink(missing_ok=True)
