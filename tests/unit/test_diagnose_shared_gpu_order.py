"""Several lines, one cause, for the families a shared or multi-node GPU adds: the layer that
serves the workload (the MPS server, the IMEX daemons of a ComputeDomain) is reported before the
CUDA or wait errors it makes the workload print, whichever line comes first. The lines are real
ones, quoted verbatim from the threads named beside them (as in tests/corpus/failures/)."""

from __future__ import annotations

import pytest

from gpuctl.diagnose.scan import find_all

# NVIDIA/k8s-device-plugin#685: the MPS server dies, and the client sees CUDA's unknown error.
MPS_EXITED = "[2024-04-29 11:22:10.446 Control    73] Server 95 exited with status 1"
MPS_CLIENT = (
    "CUDA error at ../../common/inc/helper_cuda.h:708 code=30(cudaErrorUnknown) "
    '"cudaGetDeviceCount(&device_count)"'
)
# kubernetes-sigs/dra-driver-nvidia-gpu#948 (the IMEX daemon) and #1417 (the workload's CUDA error).
IMEX_REFERENCE = "[ERROR] Failed to get new memory reference with rc: 87"
CUDA_IMPORT = "CUDA error in cuMemImportFromShareableHandle: invalid resource handle"
# kubernetes-sigs/dra-driver-nvidia-gpu: a channel claim waiting for its ComputeDomain (the corpus'
# dra-computedomain-node-not-ready) and the daemon's memory-reference failure (#948).
CD_NOT_READY = (
    "I0523 22:44:58.336698       1 workqueue.go:171] Reconcile: error preparing devices for claim "
    "'<namespace>/<pod-name>-compute-domain-channel-8gwxw:4914da61-1a20-42b3-bf26-981025df4289': "
    "prepare devices failed: error applying config: error asserting ComputeDomain Ready: current node "
    "not ready in ComputeDomain (attempt 1)"
)


@pytest.mark.parametrize(
    ("cause", "consequence", "expected"),
    [
        (MPS_EXITED, MPS_CLIENT, ["kubelet.mps-server-failed", "cuda.999"]),
        (IMEX_REFERENCE, CUDA_IMPORT, ["dra.imex-memory-reference-failed", "cuda.400"]),
        (IMEX_REFERENCE, CD_NOT_READY, ["dra.imex-memory-reference-failed", "dra.computedomain-not-ready"]),
    ],
    ids=["mps-server-before-client", "imex-before-cuda", "imex-before-computedomain-wait"],
)
def test_the_serving_layer_comes_first_whatever_the_line_order(
    cause: str, consequence: str, expected: list[str]
) -> None:
    for text in (f"{cause}\n{consequence}\n", f"{consequence}\n{cause}\n"):
        assert [d.signature_id for d in find_all(text)] == expected
