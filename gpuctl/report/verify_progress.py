"""`gpuctl verify`'s live progress on a terminal: the pods created, running and done."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuctl.core.verify.progress import PodProgress, ProgressCounts

if TYPE_CHECKING:
    from rich.console import Console


def progress_line(counts: ProgressCounts) -> str:
    if not counts.pods:
        return f"verify: reading the cluster … {counts.elapsed_s:.0f}s"
    return (
        f"verify: {counts.pods} pod(s) on {counts.nodes} node(s): {counts.created} created, "
        f"{counts.running} running, {counts.done} done … {counts.elapsed_s:.0f}s of {counts.timeout_s:.0f}s"
    )


@contextlib.contextmanager
def live_progress(console: Console) -> Iterator[PodProgress]:
    """A progress to hand to `verify`, shown on `console` until the block ends, then erased."""
    from rich.live import Live
    from rich.text import Text

    progress = PodProgress()
    with Live(
        console=console,
        refresh_per_second=4,
        transient=True,
        get_renderable=lambda: Text(progress_line(progress.counts())),
    ):
        yield progress
