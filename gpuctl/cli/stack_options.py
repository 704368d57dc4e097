"""Options of the cluster stack (`--stack`) shared by `gpuctl render` and `gpuctl bootstrap`, and
the GPU Operator's chart and values options."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from gpuctl.core.stacks import Stack
from gpuctl.defaults import DRA_DRIVER_CHART, DRA_DRIVER_CHART_VERSION, OPERATOR_CHART, OPERATOR_CHART_VERSION

if TYPE_CHECKING:
    from gpuctl.core.stacks.settings import DraSettings

__all__ = ["Stack"]  # the core's enum is the CLI's --stack choice


class Distribution(str, Enum):
    auto = "auto"
    standard = "standard"
    k3s = "k3s"
    rke2 = "rke2"


StackOption = Annotated[
    Stack,
    typer.Option(
        "--stack",
        help="Cluster stack: gpuctl's device plugin manifests, NVIDIA's GPU Operator (Helm), or DRA.",
    ),
]
DistributionOption = Annotated[
    Distribution,
    typer.Option(
        "--distribution",
        help="Kubernetes distribution, for the toolkit's containerd config and socket paths "
        "(--stack operator); auto: from the kubelet versions (bootstrap), standard (render).",
    ),
]
OperatorDriverOption = Annotated[
    bool,
    typer.Option(
        "--operator-driver/--no-operator-driver",
        help="Let the GPU Operator install the driver (driver.enabled=true); default: off, the "
        "host layer (`bootstrap --phase host`) installs it.",
        show_default=False,
    ),
]
OperatorToolkitOption = Annotated[
    bool,
    typer.Option(
        "--operator-toolkit/--no-operator-toolkit",
        help="Let the GPU Operator install the container toolkit (toolkit.enabled=true); "
        "default: off, the host layer installs it.",
        show_default=False,
    ),
]
ChartOption = Annotated[
    str,
    typer.Option(
        "--chart",
        help="The chart: REPO/NAME, oci://REFERENCE or a local chart directory (the GPU Operator's; "
        "with --stack dra the default is NVIDIA's DRA driver chart).",
    ),
]
ChartVersionOption = Annotated[str, typer.Option("--chart-version", help="Chart version to pin.")]
HelmOption = Annotated[
    Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option("--helm", help="The helm binary (default: helm on PATH).", show_default=False),
]
DEFAULT_CHART = OPERATOR_CHART
DEFAULT_CHART_VERSION = OPERATOR_CHART_VERSION


def dra_settings(chart: str, chart_version: str) -> DraSettings:
    """--stack dra: the DRA driver's chart unless --chart/--chart-version name another."""
    from gpuctl.core.stacks.settings import DraSettings

    return DraSettings(
        chart=DRA_DRIVER_CHART if chart == DEFAULT_CHART else chart,
        chart_version=DRA_DRIVER_CHART_VERSION if chart_version == DEFAULT_CHART_VERSION else chart_version,
    )
