"""A failing helm's error names the helm catalogue's cause and fix after the failed command."""

from __future__ import annotations

from gpuctl.core.chart_release import explained
from gpuctl.helm import HelmError


def test_a_known_helm_message_gets_its_cause_and_fix_after_the_command() -> None:
    error = HelmError(
        "helm failed: INSTALLATION FAILED: cannot re-use a name that is still in use",
        hint="the command was: helm upgrade --install gpu-operator nvidia/gpu-operator",
    )
    found = explained(error)
    assert found.message == error.message
    assert found.hint.startswith("the command was: helm upgrade --install gpu-operator")
    assert "a release of that name already exists" in found.hint
    assert "helm uninstall RELEASE -n NAMESPACE" in found.hint
    assert found.exit_code == error.exit_code


def test_the_ngc_repository_refusing_its_index_names_an_outage_first() -> None:
    error = HelmError(
        'helm failed: looks like "https://helm.ngc.nvidia.com/nvidia" is not a valid chart repository '
        "or cannot be reached: failed to fetch https://helm.ngc.nvidia.com/nvidia/index.yaml : "
        "401 Unauthorized",
        hint="the command was: helm upgrade --install gpu-operator nvidia/gpu-operator",
    )
    assert "NGC is failing on its side" in explained(error).hint


def test_an_unknown_helm_message_is_left_as_it_is() -> None:
    error = HelmError("helm failed: this stand-in chart cannot be installed", hint="the command was: helm x")
    assert explained(error) is error
