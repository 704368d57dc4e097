"""`gpuctl taint-gpu-nodes`."""

from __future__ import annotations

from gpuctl.errors import NotImplementedYet

HELP = "Not implemented yet."


def command() -> None:
    raise NotImplementedYet(
        "gpuctl taint-gpu-nodes: not implemented yet", hint="see the README for what works today"
    )
