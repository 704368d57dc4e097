"""The proof level flags verify and `bootstrap --phase verify|all` share, checked once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuctl.defaults import CUDA_SAMPLE_IMAGE, NCCL_TESTS_IMAGE
from gpuctl.validation import check, image_problem

if TYPE_CHECKING:
    from gpuctl.cli.options import Level
    from gpuctl.core.verify.model import ProofOptions


def proof_options(
    level: Level,
    cuda_image: str,
    nccl_image: str,
    min_busbw: float | None,
    *,
    fabric: tuple[list[str], bool, bool] = ([], False, False),
) -> ProofOptions:
    """`fabric`: --fabric-resource values, --fabric-host-network, --fabric-ipc-lock."""
    from gpuctl.cli.fabric_options import fabric_resources
    from gpuctl.core.verify.model import ProofOptions

    check("--cuda-image", cuda_image, image_problem, CUDA_SAMPLE_IMAGE)
    check("--nccl-image", nccl_image, image_problem, NCCL_TESTS_IMAGE)
    resources, host_network, ipc_lock = fabric
    return ProofOptions(
        level.value,
        cuda_image,
        nccl_image,
        min_busbw,
        fabric_resources=fabric_resources(resources),
        fabric_host_network=host_network,
        fabric_ipc_lock=ipc_lock,
    )
