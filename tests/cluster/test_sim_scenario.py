"""Scenario files: every invalid input names the file and the field; `{i}` expansion; defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuctl.errors import ConfigError
from gpuctl.sim.scenario import default_scenario_path, load_scenario, parse_scenario


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"nodes": [{"name": "gpu", "gpus": -1}]}, "scenario.yaml: nodes[0].gpus: must be >= 0"),
        ({"nodes": [{"name": "gpu", "gpus": "8"}]}, "scenario.yaml: nodes[0].gpus: must be an integer"),
        ({"nodes": [{"name": "gpu", "gpu": 8}]}, "scenario.yaml: nodes[0].gpu: unknown field"),
        ({"node": []}, "scenario.yaml: node: unknown field"),
        ({"nodes": [{"name": "a"}, {"name": "a"}]}, "scenario.yaml: nodes[1].name: duplicate node name 'a'"),
        (
            {"nodes": [{"name": "g-{i}", "count": 2}, {"name": "g-1"}]},
            "scenario.yaml: nodes[1].name: duplicate node name 'g-1'",
        ),
        ({"devicePlugin": "maybe"}, "scenario.yaml: devicePlugin: must be one of absent, installed"),
        (
            {"nodes": [{"name": "g", "host": {"driver": "broken"}}]},
            "scenario.yaml: nodes[0].host.driver: must be one of installed, missing, mismatch",
        ),
        (
            {"nodes": [{"name": "g", "host": {"toolkit": "no"}}]},
            "scenario.yaml: nodes[0].host.toolkit: must be one of configured, missing, unconfigured",
        ),
        ({"nodes": [{"name": "g", "ready": "yes"}]}, "scenario.yaml: nodes[0].ready: must be true or false"),
        ({"nodes": [{"gpus": 1}]}, "scenario.yaml: nodes[0].name: required"),
        (
            {"nodes": [{"name": "Bad_Name"}]},
            "scenario.yaml: nodes[0].name: 'Bad_Name' is not a valid node name",
        ),
        (
            {"nodes": [{"name": "g", "count": 3}]},
            "scenario.yaml: nodes[0].name: must contain {i} when count > 1",
        ),
        (
            {"nodes": [{"name": "g", "gpus": 2, "unhealthyGpus": 3}]},
            "nodes[0].unhealthyGpus: must be <= gpus",
        ),
        (
            {"nodes": [{"name": "g", "taints": [{"key": "k", "effect": "Sometimes"}]}]},
            "scenario.yaml: nodes[0].taints[0].effect: must be one of NoSchedule",
        ),
        (
            {"nodes": [{"name": "g", "labels": {"a": True}}]},
            "scenario.yaml: nodes[0].labels.a: keys and values",
        ),
        (
            {"nodes": [{"name": "g", "nvidiaSmi": {"stdout": 3}}]},
            "nodes[0].nvidiaSmi.stdout: must be a string",
        ),
        ({"podStartSeconds": -1}, "scenario.yaml: podStartSeconds: must be >= 0"),
        ({"kubernetesVersion": "1.31"}, "scenario.yaml: kubernetesVersion: must look like v1.31.2"),
        ({"nodes": {"name": "g"}}, "scenario.yaml: nodes: must be a list"),
        ({"imagePullFailures": "x"}, "scenario.yaml: imagePullFailures: must be a list"),
        ({"forbidden": ["list"]}, "scenario.yaml: forbidden[0]: must be 'VERB RESOURCE'"),
        (["nodes"], "scenario.yaml: (top level): must be a mapping"),
    ],
)
def test_invalid_scenarios_name_the_field(data: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_scenario(data, "scenario.yaml")
    assert message in caught.value.message
    assert "\n" not in caught.value.message
    assert "docs/scenario.md" in caught.value.hint


def test_count_expands_names_and_keeps_every_field() -> None:
    scenario = parse_scenario(
        {
            "kubernetesVersion": "v1.30.4",
            "podStartSeconds": 2,
            "devicePlugin": "installed",
            "nodes": [
                {
                    "name": "gpu-{i}",
                    "count": 3,
                    "gpus": 4,
                    "gpuProduct": "NVIDIA-A100-SXM4-80GB",
                    "gpuMemoryMiB": 81920,
                    "driverVersion": "535.183.01",
                    "host": {"driver": "mismatch", "toolkit": "missing"},
                    "unhealthyGpus": 1,
                    "ready": False,
                    "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
                    "labels": {"pool": "a100"},
                    "nvidiaSmi": {"stdout": "hello\n", "exitCode": 3},
                },
                {"name": "cpu-{i}", "count": 2},
            ],
        }
    )
    assert [node.name for node in scenario.nodes] == ["gpu-0", "gpu-1", "gpu-2", "cpu-0", "cpu-1"]
    gpu = scenario.nodes[2]
    assert (gpu.gpus, gpu.gpu_product, gpu.gpu_memory_mib, gpu.driver_version) == (
        4,
        "NVIDIA-A100-SXM4-80GB",
        81920,
        "535.183.01",
    )
    assert (gpu.driver, gpu.toolkit, gpu.unhealthy_gpus, gpu.ready) == ("mismatch", "missing", 1, False)
    assert gpu.taints[0].to_api() == {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    assert dict(gpu.labels) == {"pool": "a100"}
    assert gpu.nvidia_smi is not None
    assert (gpu.nvidia_smi.stdout, gpu.nvidia_smi.exit_code) == ("hello\n", 3)
    assert (scenario.kubernetes_version, scenario.pod_start_seconds, scenario.device_plugin) == (
        "v1.30.4",
        2.0,
        "installed",
    )
    assert scenario.nodes[3].gpus == 0


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("nodes:\n  - name: a\n    gpus: [1\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_scenario(path)
    assert f"{path}: line " in caught.value.message
    assert "invalid YAML" in caught.value.message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="scenario file not found"):
        load_scenario(tmp_path / "absent.yaml")


def test_an_explicit_empty_node_list_is_an_empty_cluster(tmp_path: Path) -> None:
    # An empty file is refused (tests/unit/test_bad_values_refused.py); `nodes: []` says it on purpose.
    path = tmp_path / "empty.yaml"
    path.write_text("nodes: []\n", encoding="utf-8")
    assert load_scenario(path).nodes == ()


def test_builtin_default_is_a_mixed_cluster() -> None:
    scenario = load_scenario(default_scenario_path())
    hosts = {(node.gpus > 0, node.driver, node.toolkit) for node in scenario.nodes}
    assert (False, "installed", "configured") in hosts
    assert (True, "installed", "configured") in hosts
    assert (True, "mismatch", "configured") in hosts
    assert (True, "installed", "missing") in hosts
    assert scenario.device_plugin == "installed"
