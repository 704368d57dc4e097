"""gpuctl's helm runner with a real helm (v4, from the test extra): locate, version, template a
local chart with gpuctl's GPU Operator values, error surfacing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from gpuctl.core.chart_release import chart_identity
from gpuctl.core.render import RenderOptions, render_manifests
from gpuctl.core.stacks import Stack
from gpuctl.core.stacks.settings import OperatorSettings, distribution_of
from gpuctl.errors import ConfigError, ExitCode
from gpuctl.helm import Chart, Helm, HelmError, display, find_helm, parse_version, supported_version
from tests.helm import HELM, OPERATOR_CHART, needs_helm

CHART = OPERATOR_CHART


def test_no_helm_on_path_is_a_usage_error_naming_the_way_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(ConfigError) as raised:
        find_helm(hint="install helm, or use --stack device-plugin")
    assert raised.value.exit_code == ExitCode.USAGE
    assert "helm not found on PATH" in raised.value.message
    assert "--stack device-plugin" in raised.value.hint


def test_an_explicit_helm_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(ConfigError, match="not an executable file"):
        find_helm(missing)


@needs_helm
def test_the_real_helm_is_found_on_path_and_its_version_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{Path(HELM).parent}{os.pathsep}{os.environ['PATH']}")
    helm = Helm(find_helm())
    version = helm.version()
    assert parse_version(version) is not None
    assert parse_version(version)[0] in (3, 4)  # type: ignore[index]


def test_helm_3_and_4_are_supported_helm_2_is_refused() -> None:
    assert supported_version("v3.16.2+g13654a5\n") == "v3.16.2"
    assert supported_version("v4.2.3+g43e8b7f") == "v4.2.3"
    with pytest.raises(ConfigError, match="not supported"):
        supported_version("Client: v2.17.0+ga690bad")  # Helm 2's `helm version --short`


@needs_helm
def test_helm_failing_surfaces_its_own_message_and_exits_1(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-chart"
    with pytest.raises(HelmError) as raised:
        Helm(Path(HELM)).run(["template", "x", str(missing)])
    assert raised.value.exit_code == ExitCode.CHECK_FAILED
    assert raised.value.message.startswith("helm failed: ")
    assert "no-such-chart" in raised.value.message
    assert "Error:" not in raised.value.message  # helm's own text, without its prefix
    assert f"template x {missing}" in raised.value.hint


@needs_helm
def test_the_chart_renders_gpuctls_values() -> None:
    settings = OperatorSettings(driver_enabled=False, toolkit_enabled=True, distribution="k3s")
    values = render_manifests(RenderOptions(stack=Stack.OPERATOR, operator=settings)).files[0].content
    rendered = Helm(Path(HELM)).template("gpu-operator", "gpu-operator", Chart(str(CHART)), values)
    policy = next(doc for doc in yaml.safe_load_all(rendered) if doc and doc["kind"] == "ClusterPolicy")
    assert policy["spec"]["driver"]["enabled"] is False
    assert policy["spec"]["toolkit"]["enabled"] is True
    env = {item["name"]: item["value"] for item in policy["spec"]["toolkit"]["env"]}
    assert env["CONTAINERD_SOCKET"] == "/run/k3s/containerd/containerd.sock"
    assert env["CONTAINERD_CONFIG"].startswith("/var/lib/rancher/k3s/")
    assert policy["spec"]["cdi"]["enabled"] is True
    assert policy["spec"]["daemonsets"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"key": "gpuctl.io/unproven", "operator": "Exists", "effect": "NoSchedule"},  # the gate
        {"key": "readiness.k8s.io/gpu-proven", "operator": "Exists"},  # the readiness rule's
    ]


@needs_helm
def test_a_chart_helm_cannot_read_is_helms_own_error(tmp_path: Path) -> None:
    (tmp_path / "Chart.yaml").write_text("name: [broken\n")
    with pytest.raises(HelmError, match=r"helm failed: .*Chart\.yaml"):
        Helm(Path(HELM)).template("x", "ns", Chart(str(tmp_path)), "{}")


def test_chart_arguments_for_each_kind_of_reference() -> None:
    assert Chart("nvidia/gpu-operator", "v26.7.2", "https://helm.ngc.nvidia.com/nvidia").args() == [
        "gpu-operator", "--repo", "https://helm.ngc.nvidia.com/nvidia", "--version", "v26.7.2",
    ]  # fmt: skip
    assert Chart("oci://registry.example/charts/gpu-operator", "1.2.3").args() == [
        "oci://registry.example/charts/gpu-operator", "--version", "1.2.3",
    ]  # fmt: skip
    assert Chart("myrepo/gpu-operator", "1.0").args() == ["myrepo/gpu-operator", "--version", "1.0"]
    assert Chart(str(CHART), "ignored").args() == [str(CHART)]
    assert chart_identity(Chart(str(CHART))) == "gpu-operator-v26.7.2"
    assert chart_identity(Chart("oci://r/charts/gpu-operator", "1.2.3")) == "gpu-operator-1.2.3"


def test_the_distribution_comes_from_the_kubelet_versions() -> None:
    assert distribution_of(["v1.31.4+k3s1", "v1.31.4+k3s1"]) == "k3s"
    assert distribution_of(["v1.30.2+rke2r1"]) == "rke2"
    assert distribution_of(["v1.31.0", ""]) == "standard"


def test_a_shown_helm_command_never_holds_a_repo_password() -> None:
    chart = Chart("nvidia/gpu-operator", "v25.3.0", repo_url="https://alice:S3cret@charts.example/nvidia")
    shown = display(["helm", "upgrade", "--install", "gpu-operator", *chart.args()])
    assert "S3cret" not in shown
    assert "--repo https://alice:xxxxx@charts.example/nvidia" in shown


@needs_helm
def test_helm_failing_on_a_repo_with_a_password_shows_it_nowhere() -> None:
    repo = "http://alice:S3cret@127.0.0.1:1/charts"  # nothing listens on port 1
    with pytest.raises(HelmError) as raised:
        Helm(Path(HELM)).run(["template", "x", "gpu-operator", "--repo", repo])
    assert "S3cret" not in raised.value.message
    assert "S3cret" not in raised.value.hint
    assert "http://alice:xxxxx@127.0.0.1:1/charts" in raised.value.hint
