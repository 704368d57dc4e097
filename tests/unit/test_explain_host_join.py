"""`explain node/NAME --inventory`: the host probe's state joined to the cluster's symptom (pure
functions, with host states parsed by the probe's own parser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuctl.core.explain_subject.evidence import Clue, clue, diagnose_text
from gpuctl.core.explain_subject.host import host_clues, inventory_host, joined
from gpuctl.errors import ConfigError
from gpuctl.hosts.host_state import parse_host_state

PLUGIN_LOG = (
    "W1128 06:33:59.581742       1 factory.go:88] Failed to initialize NVML: could not load NVML library."
)
SMI_LIST = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5a1e6a3c-1f0e-4a4e-9d0e-000000000000)"
NOT_LOADED = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
    "latest NVIDIA driver is installed and running."
)


def _host(*, nvidia_runtime: bool, smi_rc: int = 0, smi_out: str = SMI_LIST, **more: Any) -> Any:
    return parse_host_state({
        "nvidia_smi": {"rc": smi_rc, "stdout": smi_out},
        "modules": ["nvidia"] if smi_rc == 0 else [],
        "runtimes": {"containerd": "containerd containerd.io 1.7.22 7f7fdf5f"},
        "nvidia_runtime": {"containerd": nvidia_runtime},
        **more,
    })  # fmt: skip


def _plugin_symptom() -> Clue:
    return clue(
        "pod kube-system/nvidia-device-plugin-x log",
        PLUGIN_LOG,
        diagnose_text(PLUGIN_LOG, ("plugin-log",), node="gpu-0"),
    )


def test_a_host_without_the_nvidia_runtime_is_the_root_of_the_plugins_symptom() -> None:
    host = host_clues(_host(nvidia_runtime=False), "gpu-0", "gpu-0", "hosts.yml")
    cause = joined(_plugin_symptom(), host)
    assert cause is not None
    assert cause.diagnosis is not None
    assert cause.diagnosis.signature_id == "host.no-nvidia-runtime"
    assert cause.diagnosis.hint == "gpuctl bootstrap --phase host -i hosts.yml --limit gpu-0"
    assert "no nvidia runtime" in cause.diagnosis.cause
    assert "in the cluster: the device plugin cannot load libnvidia-ml.so" in cause.diagnosis.cause
    assert cause.evidence.source == "host gpu-0 probe"
    assert cause.evidence.text == "container runtime containerd: no nvidia runtime configured"


def test_a_healthy_host_leaves_the_cluster_cause_and_adds_its_evidence() -> None:
    host = host_clues(_host(nvidia_runtime=True), "gpu-0", "gpu-0", "hosts.yml")
    symptom = _plugin_symptom()
    assert joined(symptom, host) is symptom
    texts = [found.evidence.text for found in host]
    assert texts == [
        "driver working: nvidia-smi answers; kernel module nvidia loaded",
        "container runtime containerd: nvidia runtime configured (containerd)",
    ]


def test_a_driver_that_does_not_load_is_named_when_the_cluster_shows_nothing() -> None:
    host = host_clues(_host(nvidia_runtime=True, smi_rc=9, smi_out=NOT_LOADED), "h1", "gpu-0", "hosts.yml")
    cause = joined(None, host)
    assert cause is not None
    assert cause.diagnosis is not None
    assert cause.diagnosis.signature_id == "host.driver-reboot-required"
    assert "kernel module nvidia not loaded" in cause.evidence.text
    assert cause.diagnosis.hint.startswith("reboot gpu-0")


def test_an_unrelated_cluster_cause_wins_over_the_host() -> None:
    taint = "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: x}."
    from gpuctl.diagnose import diagnose_scheduling

    symptom = clue("event FailedScheduling", taint, diagnose_scheduling(taint, node="gpu-0"))
    host = host_clues(_host(nvidia_runtime=False), "gpu-0", "gpu-0", "hosts.yml")
    assert joined(symptom, host) is symptom


def test_the_host_is_found_by_name_or_address(tmp_path: Path) -> None:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        "all:\n  children:\n    gpu_nodes:\n      hosts:\n"
        "        h1: {ansible_host: 10.0.0.5}\n        gpu-1: {ansible_host: 10.0.0.6}\n"
    )
    assert inventory_host(inventory, "gpu-1", ()).name == "gpu-1"
    assert inventory_host(inventory, "node-a", ("10.0.0.5",)).name == "h1"
    with pytest.raises(ConfigError, match=r"no host of .* is node node-b"):
        inventory_host(inventory, "node-b", ("10.9.9.9",))
