"""The GPU Operator's Helm values as gpuctl renders them, one source for `gpuctl render --stack
operator` and `gpuctl bootstrap --phase cluster --stack operator`: the driver and toolkit
containers off where the host layer installed them, CDI, the containerd config and socket of
k3s/RKE2, tolerations of the GPU taint and the GPU nodes' selector (templates/gpu-operator-values.yaml.j2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuctl.defaults import (
    OPERATOR_CHART,
    OPERATOR_CHART_REPO,
    OPERATOR_CHART_VERSION,
    OPERATOR_NAMESPACE,
    OPERATOR_RELEASE,
)
from gpuctl.errors import ConfigError
from gpuctl.helm import Chart, display, upgrade_install_args

VALUES_FILE = "gpu-operator-values.yaml"  # as the helm command in its header names it

DISTRIBUTIONS = ("standard", "k3s", "rke2")
# k3s and RKE2 run their own containerd: the toolkit must edit their config template and reach
# their socket (NVIDIA's GPU Operator docs, "containerd" on K3s/RKE2; RKE2's own docs).
CONTAINERD_ENV: dict[str, tuple[tuple[str, str], ...]] = {
    "k3s": (
        ("CONTAINERD_CONFIG", "/var/lib/rancher/k3s/agent/etc/containerd/config.toml"),
        ("CONTAINERD_SOCKET", "/run/k3s/containerd/containerd.sock"),
    ),
    "rke2": (
        ("CONTAINERD_CONFIG", "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"),
        ("CONTAINERD_SOCKET", "/run/k3s/containerd/containerd.sock"),
    ),
}


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


def template_variables(
    settings: OperatorSettings, node_selector: Iterable[tuple[str, str]]
) -> dict[str, object]:
    """The operator-specific variables of gpu-operator-values.yaml.j2 (the sharing, MIG and taint
    variables are the device plugin's, from gpuctl.core.render)."""
    check_settings(settings)
    install = upgrade_install_args(OPERATOR_RELEASE, OPERATOR_NAMESPACE, settings.chart_ref(), VALUES_FILE)
    return {
        "chart": settings.chart,
        "chart_version": settings.chart_version,
        "helm_command": display(["helm", *install]),
        "driver_enabled": settings.driver_enabled,
        "toolkit_enabled": settings.toolkit_enabled,
        "distribution": settings.distribution,
        "containerd_env": CONTAINERD_ENV.get(settings.distribution, ()),
        "cdi": settings.cdi,
        "node_selector": tuple(node_selector),
    }


def distribution_of(kubelet_versions: Iterable[str]) -> str:
    """k3s or rke2 when the kubelets say so (`v1.31.4+k3s1`, `v1.31.4+rke2r1`), else standard."""
    versions = [version.lower() for version in kubelet_versions]
    for distribution in ("rke2", "k3s"):
        if any(f"+{distribution}" in version for version in versions):
            return distribution
    return "standard"
