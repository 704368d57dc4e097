"""The images of the deeper proof levels (`verify --level cuda|nccl`), pinned.

CUDA_SAMPLE_IMAGE: NVIDIA's CUDA vectorAdd sample (built from NVIDIA/k8s-samples, published on NGC
as nvcr.io/nvidia/k8s/cuda-sample). vectoradd-cuda12.5.0-ubuntu22.04 is the newest tag NVIDIA's own
documentation uses: NVIDIA/cloud-native-docs gpu-operator/getting-started.rst (commit 52dcb7b8,
2026-08-21) and NVIDIA/k8s-device-plugin README.md (commit 1b826acc, 2026-08-19, without the
-ubuntu22.04 suffix). k8s-samples' main branch builds from CUDA 13.0.0 (deployments/container/
Dockerfile), but no public use of a newer tag was found, and NVIDIA/cuda-samples issue #384
(2025-08) reports vectoradd-cuda12.5.0 as the newest on NGC. The sample sits at /cuda-samples/vectorAdd
(gpuctl.cuda_workload.VECTOR_ADD). CUDA 12.5 minor-version compatibility runs it on any 12.x
driver (R525 and later) on the GPUs it was compiled for.

NCCL_TESTS_IMAGE: NVIDIA publishes no image holding only nccl-tests. CoreWeave's public images
(github.com/coreweave/nccl-tests, ghcr.io/coreweave/nccl-tests) are the ones most often used in
Kubernetes NCCL jobs; the tag below is listed in that repository's README.md (commit cb865533,
2026-05-27; NCCL 2.30.4, HPC-X 2.26, amd64 and arm64). CUDA 12.9.1 rather than 13.x: CUDA 13 needs
driver R580 and dropped Volta. nccl-tests is built with MPI=1 at /opt/nccl-tests/build; a single
process with `-g N` drives all of a node's GPUs without mpirun.
"""

from __future__ import annotations

CUDA_SAMPLE_IMAGE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"
NCCL_TESTS_IMAGE = "ghcr.io/coreweave/nccl-tests:12.9.1-devel-ubuntu22.04-nccl2.30.4-1-2eedd7c"
NCCL_TESTS_ALL_REDUCE = "/opt/nccl-tests/build/all_reduce_perf"
