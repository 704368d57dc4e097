"""Proof levels (`gpuctl verify --level smi|cuda|nccl`): each deeper level is one module here
behind `ProofLevel`: the workload its pod runs (image, command, volumes), the judgement of the
pod's output, and its check id. rounds.py runs them, one round per level after the nvidia-smi
round, for any stack: the stack's allocation gives the pods their GPUs (`planned_pods`), the
level decides what runs on them.

smi is the base round (run.py): nvidia-smi in the pod each allocation plans, judged by
pod_judgement.py and the allocation's own checks.
"""

from __future__ import annotations

from gpuctl.core.verify.levels.base import ProofLevel
from gpuctl.core.verify.levels.cuda import CUDA
from gpuctl.core.verify.levels.nccl import NCCL
from gpuctl.core.verify.model import LEVELS

__all__ = ["ProofLevel", "levels_through"]

_DEEPER: dict[str, ProofLevel] = {"cuda": CUDA, "nccl": NCCL}


def levels_through(level: str) -> tuple[ProofLevel, ...]:
    """The deeper levels `--level level` runs on each node, in order (none for smi); fabric, which
    runs across nodes, follows them (rounds.py, fabric.py)."""
    return tuple(_DEEPER[name] for name in LEVELS[1 : LEVELS.index(level) + 1] if name in _DEEPER)
