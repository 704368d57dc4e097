"""What the user chose for the stacks installed from a Helm chart (the GPU Operator's, the DRA
driver's): which chart, and what the values depend on. Plain data that gpuctl.core.render_options
carries, so it sits below the stack modules that render and install it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuctl.defaults import (
    DRA_DRIVER_CHART,
    DRA_DRIVER_CHART_VERSION,
    OPERATOR_CHART,
    OPERATOR_CHART_REPO,
    OPERATOR_CHART_VERSION,
)
from gpuctl.errors import ConfigError
from gpuctl.helm import Chart

DISTRIBUTIONS = ("standard", "k3s", "rke2")


@dataclass(frozen=True)
class OperatorSettings:
    """What gpuctl knows that the chart's values depend on, and which chart to install."""

    driver_enabled: bool = False  # False: the host layer installed the driver
    toolkit_enabled: bool = False  # False: the host layer installed the container toolkit
    distribution: str = "standard"  # standard | k3s | rke2: where containerd keeps its config
    cdi: bool = True
    chart: str = OPERATOR_CHART
    chart_version: str = OPERATOR_CHART_VERSION

    def chart_ref(self) -> Chart:
        """The chart to install; the default reference comes with NVIDIA's repository URL, so no
        `helm repo add` is needed."""
        repo = OPERATOR_CHART_REPO if self.chart == OPERATOR_CHART else ""
        return Chart(self.chart, self.chart_version, repo)


def check_settings(settings: OperatorSettings) -> None:
    if settings.distribution not in DISTRIBUTIONS:
        raise ConfigError(
            f"--distribution {settings.distribution}: must be one of {', '.join(DISTRIBUTIONS)}",
            hint="e.g. --distribution k3s",
        )
    if not settings.chart.strip():
        raise ConfigError("--chart: empty", hint=f"e.g. --chart {OPERATOR_CHART}")


def distribution_of(kubelet_versions: Iterable[str]) -> str:
    """k3s or rke2 when the kubelets say so (`v1.31.4+k3s1`, `v1.31.4+rke2r1`), else standard."""
    versions = [version.lower() for version in kubelet_versions]
    for distribution in ("rke2", "k3s"):
        if any(f"+{distribution}" in version for version in versions):
            return distribution
    return "standard"


@dataclass(frozen=True)
class DraSettings:
    """Which chart to install, and where the hosts keep the NVIDIA driver."""

    chart: str = DRA_DRIVER_CHART
    chart_version: str = DRA_DRIVER_CHART_VERSION
    driver_root: str = "/"  # the host layer installs the driver on the host
    # More of the driver's feature gates to turn on (its Alpha sharing gates, TimeSlicingSettings
    # and MPSSupport, when a migration carries the device plugin's sharing over).
    feature_gates: tuple[str, ...] = ()

    def chart_ref(self) -> Chart:
        return Chart(self.chart, self.chart_version)
