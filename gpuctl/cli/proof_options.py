"""The proof level flags verify and `bootstrap --phase verify|all` share, checked once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.defaults import CUDA_SAMPLE_IMAGE, NCCL_TESTS_IMAGE
from gpuctl.validation import check, image_problem

if TYPE_CHECKING:
    from gpuctl.cli.options import Level
    from gpuctl.core.verify.model import ProofOptions


def proof_options(level: Level, cuda_image: str, nccl_image: str, min_busbw: float | None) -> ProofOptions:
    from gpuctl.core.verify.model import ProofOptions

    check("--cuda-image", cuda_image, image_problem, CUDA_SAMPLE_IMAGE)
    check("--nccl-image", nccl_image, image_problem, NCCL_TESTS_IMAGE)
    return ProofOptions(level.value, cuda_image, nccl_image, min_busbw)
