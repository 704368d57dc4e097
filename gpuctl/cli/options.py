"""Options shared by several commands, declared once."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from gpuctl.bounds import MIN_BUSBW, REPLICAS
from gpuctl.cli.number_options import number_option


class Output(str, Enum):
    table = "table"
    json = "json"
    junit = "junit"
    ctrf = "ctrf"
    html = "html"
    wide = "wide"
    yaml = "yaml"


class MigStrategy(str, Enum):
    none = "none"
    single = "single"
    mixed = "mixed"


class Sharing(str, Enum):
    none = "none"
    time_slicing = "time-slicing"
    mps = "mps"


SharingOption = Annotated[Sharing, typer.Option("--sharing", help="GPU sharing.")]
ReplicasOption = Annotated[int, number_option(REPLICAS, "Replicas per GPU when sharing.", "N")]
MigStrategyOption = Annotated[MigStrategy, typer.Option("--mig-strategy", help="MIG strategy.")]


class Level(str, Enum):
    """How deep verify proves each node; each level includes the ones before it."""

    smi = "smi"
    cuda = "cuda"
    nccl = "nccl"
    fabric = "fabric"


LevelOption = Annotated[
    Level,
    typer.Option(
        "--level",
        help="Proof level: smi (nvidia-smi sees the GPUs), cuda (+ CUDA vectorAdd on every GPU), "
        "nccl (+ an NCCL all-reduce across each node's GPUs, judged against its model and interconnect), "
        "fabric (+ all-reduce across alike nodes over the network, the node that drags a group down named).",
    ),
]
CudaImageOption = Annotated[
    str, typer.Option("--cuda-image", help="Image of the --level cuda pods (runs /cuda-samples/vectorAdd).")
]
NcclImageOption = Annotated[
    str, typer.Option("--nccl-image", help="Image of the --level nccl pods (nccl-tests' all_reduce_perf).")
]
MinBusbwOption = Annotated[
    Optional[float],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    number_option(
        MIN_BUSBW,
        "--level nccl: the all-reduce bus bandwidth (GB/s) each node must reach, instead of the figure "
        "for its GPU model and gpuctl.io/interconnect label.",
        "GBPS",
    ),
]

FabricResourceOption = Annotated[
    Optional[list[str]],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--fabric-resource",
        help="--level fabric: a network resource NAME=COUNT each worker pod requests (repeatable), "
        "e.g. rdma/ib=1 or vpc.amazonaws.com/efa=4.",
    ),
]
FabricHostNetworkOption = Annotated[
    bool,
    typer.Option(
        "--fabric-host-network",
        help="--level fabric: run the worker and launcher pods in the host's network namespace "
        "(not allowed by the restricted Pod Security profile).",
    ),
]
FabricIpcLockOption = Annotated[
    bool,
    typer.Option(
        "--fabric-ipc-lock",
        help="--level fabric: give the pods IPC_LOCK, which RDMA memory registration needs where the "
        "container runtime's memlock limit is not unlimited (not allowed by the restricted profile).",
    ),
]


class TableOrJson(str, Enum):
    """table and wide for people (kubectl's names), json and yaml (the same document) for tools."""

    table = "table"
    json = "json"
    wide = "wide"
    yaml = "yaml"


Kubeconfig = Annotated[
    Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--kubeconfig",
        help="Kubeconfig file (default: $KUBECONFIG, a colon-separated list, then ~/.kube/config; "
        "in-cluster config inside a pod).",
        show_default=False,
    ),
]
Context = Annotated[
    Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--context",
        help="Kubeconfig context to use (default: current-context).",
        show_default=False,
    ),
]

# Every command's --output: table for people, JSON (a versioned envelope) for machines.
TableOrJsonOutput = Annotated[TableOrJson, typer.Option("--output", "-o", help="Output format.")]
VerifyOutput = Annotated[Output, typer.Option("--output", "-o", help="Output format.")]

_INVENTORY_HELP = "Ansible inventory (YAML or INI) with a group gpu_nodes."
Inventory = Annotated[Path, typer.Option("--inventory", "-i", help=_INVENTORY_HELP, show_default=False)]
OptionalInventory = Annotated[
    Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option("--inventory", "-i", help=_INVENTORY_HELP, show_default=False),
]
Limit = Annotated[
    Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option("--limit", "-l", help="Only these hosts or groups (Ansible pattern).", show_default=False),
]
