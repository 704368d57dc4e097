"""The whole diagnosis table, in priority order: the first specific match wins, generic rows only
when nothing else does. Each table module holds the rows of one layer."""

from __future__ import annotations

from gpuctl.diagnose.signatures import Signature
from gpuctl.diagnose.table_cluster import CLUSTER
from gpuctl.diagnose.table_container import CONTAINER
from gpuctl.diagnose.table_dra import DRA
from gpuctl.diagnose.table_gpu import GPU
from gpuctl.diagnose.table_host import HOST
from gpuctl.diagnose.table_operator import OPERATOR
from gpuctl.diagnose.table_runtime import RUNTIME
from gpuctl.diagnose.table_scheduling import SCHEDULING
from gpuctl.diagnose.table_workload import WORKLOAD

# OPERATOR before CLUSTER: its driver-image row is a specific image.not-found.
SIGNATURES: tuple[Signature, ...] = (
    *RUNTIME, *CONTAINER, *HOST, *DRA, *GPU, *WORKLOAD, *OPERATOR, *CLUSTER, *SCHEDULING,
)  # fmt: skip
