"""The Helm values of NVIDIA's DRA driver for GPUs as gpuctl renders them, one source for
`gpuctl render --stack dra` and `gpuctl bootstrap --phase cluster --stack dra`
(templates/dra-driver-values.yaml.j2)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuctl.defaults import (
    DRA_DRIVER_CHART,
    DRA_DRIVER_CHART_VERSION,
    DRA_DRIVER_NAMESPACE,
    DRA_DRIVER_RELEASE,
)
from gpuctl.helm import Chart, display, upgrade_install_args

VALUES_FILE = "dra-driver-nvidia-gpu-values.yaml"


@dataclass(frozen=True)
class DraSettings:
    """Which chart to install, and where the hosts keep the NVIDIA driver."""

    chart: str = DRA_DRIVER_CHART
    chart_version: str = DRA_DRIVER_CHART_VERSION
    driver_root: str = "/"  # the host layer installs the driver on the host

    def chart_ref(self) -> Chart:
        return Chart(self.chart, self.chart_version)


def template_variables(
    settings: DraSettings, taint: tuple[str, str], node_selector: Iterable[tuple[str, str]]
) -> dict[str, object]:
    chart = settings.chart_ref()
    install = upgrade_install_args(DRA_DRIVER_RELEASE, DRA_DRIVER_NAMESPACE, chart, VALUES_FILE)
    return {
        "chart": settings.chart,
        "chart_version": settings.chart_version,
        "helm_command": display(["helm", *install]),
        "driver_root": settings.driver_root,
        "taint_key": taint[0],
        "taint_effect": taint[1],
        "node_selector": tuple(node_selector),
    }
