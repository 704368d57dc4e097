"""Node-by-node work in a worker thread, and the hooks through which the CLI watches it: the
host phase (gpuctl.core.bootstrap.host_phase) and the migration run their plans through here."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from gpuctl.core.upgrade.run import StepProgress, UpgradeContext, run_upgrade

Done = TypeVar("Done")

if TYPE_CHECKING:
    from gpuctl.core.upgrade.model import UpgradePlan, UpgradeResult


@dataclass(frozen=True)
class UpgradeHooks:
    """How the CLI watches: the plan before anything is touched, and each step as it goes."""

    on_plan: Callable[[UpgradePlan], None] | None = None
    on_step: StepProgress | None = None


def finish_step_in_flight(plan: UpgradePlan, context: UpgradeContext) -> UpgradeResult:
    """Run the plan in a worker thread; a KeyboardInterrupt here (Ctrl-C, SIGTERM) asks it to stop
    after the step in flight, and the result says it was interrupted."""
    return in_worker_thread(lambda should_stop: run_upgrade(plan, replace(context, should_stop=should_stop)))


def in_worker_thread(work: Callable[[Callable[[], bool]], Done]) -> Done:
    """`work(should_stop)` in a worker thread; a KeyboardInterrupt in this one makes `should_stop`
    true, and this thread waits for `work` to end (node-by-node work stops after its step in flight)."""
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpuctl-upgrade") as pool:
        future = pool.submit(work, stop.is_set)
        while True:
            try:
                return future.result()
            except KeyboardInterrupt:
                stop.set()
