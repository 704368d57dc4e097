"""The GPU Operator's DCGM DaemonSets, as its templates name and label them, are GPU components
the taint audit checks: ClusterPolicy mode (assets/state-dcgm-exporter/0800_daemonset.yaml,
assets/state-dcgm/0400_dcgm.yml) and 26.7's GPUCluster mode (manifests/state-dcgm-exporter/
0700_daemonset.yaml, manifests/state-dcgm/0500_daemonset.yaml), NVIDIA/gpu-operator v26.7.0."""

from __future__ import annotations

import pytest

from gpuctl.core.taint.audit import audit_daemonsets
from gpuctl.kube.daemonsets import daemonset_from_json
from gpuctl.kube.nodes import Taint

GPU_TAINT = Taint("nvidia.com/gpu", "present", "NoSchedule")


def _operand(name: str, image: str) -> dict:
    """An operand DaemonSet as the Operator renders it: its name is its and its pods' `app`."""
    return {
        "metadata": {"name": name, "namespace": "gpu-operator", "labels": {"app": name}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"image": image}]}},
        },
    }


@pytest.mark.parametrize(
    ("name", "image", "component"),
    [
        ("nvidia-dcgm-exporter", "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04", "dcgm-exporter"),
        (
            "nvidia-dcgm-exporter-dra",
            "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04",
            "dcgm-exporter",
        ),
        ("nvidia-dcgm", "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04", "DCGM host engine"),
        ("nvidia-dcgm-dra", "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04", "DCGM host engine"),
        # renamed by hand: still known by its image
        ("gpu-telemetry", "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1-ubuntu22.04", "DCGM host engine"),
    ],
)
def test_the_operators_dcgm_daemonsets_are_gpu_components(name: str, image: str, component: str) -> None:
    assert daemonset_from_json(_operand(name, image)).component == component


def test_an_intolerant_dcgm_host_engine_is_reported() -> None:
    daemonset = daemonset_from_json(_operand("nvidia-dcgm-dra", "nvcr.io/nvidia/cloud-native/dcgm:4.2.3-1"))
    assert [warning.name for warning in audit_daemonsets([daemonset], GPU_TAINT)] == ["nvidia-dcgm-dra"]
