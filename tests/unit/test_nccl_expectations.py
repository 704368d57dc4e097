"""The expected all-reduce bandwidth per GPU family and interconnect, looked up from node labels."""

from __future__ import annotations

import pytest

from gpuctl.diagnose import signature_of
from gpuctl.diagnose.scan import find_all
from gpuctl.nccl_expectations import (
    INTERCONNECTS,
    PASS_FRACTION,
    TABLE,
    Expectation,
    UnknownExpectation,
    expected_busbw,
    gpu_family,
    low_bandwidth_hint,
)
from gpuctl.nccl_tests import all_reduce_rows


@pytest.mark.parametrize(
    ("product", "family"),
    [
        ("NVIDIA-H100-80GB-HBM3", "H100"), ("NVIDIA-H100-NVL", "H100"), ("NVIDIA-H200", "H200"),
        ("NVIDIA-A100-SXM4-80GB", "A100"), ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "A100"),
        ("Tesla-T4", "T4"), ("NVIDIA-L4", "L4"), ("NVIDIA-L40S", "L40S"), ("NVIDIA-A10G", "A10G"),
        ("NVIDIA-B200", "B200"), ("NVIDIA-GB200", "GB200"), ("Tesla-V100-SXM2-16GB", "V100"),
        ("NVIDIA-GeForce-RTX-4090", None), ("", None),
    ],
)  # fmt: skip
def test_family_from_the_product_label(product: str, family: str | None) -> None:
    assert gpu_family(product) == family


def test_known_model_and_interconnect_has_a_cited_figure() -> None:
    found = expected_busbw("NVIDIA-H100-80GB-HBM3", "nvswitch")
    assert isinstance(found, Expectation)
    assert (found.busbw_gbps, found.minimum_gbps) == (370.0, 296.0)
    assert found.source.startswith("https://github.com/NVIDIA/")


def test_an_hgx_node_with_nvlinks_down_falls_below_its_minimum() -> None:
    """The fault the check exists for: NCCL over PCIe instead of NVLink on an H100 HGX node."""
    nvswitch = expected_busbw("NVIDIA-H100-80GB-HBM3", "nvswitch")
    pcie = expected_busbw("NVIDIA-H100-80GB-HBM3", "pcie")
    assert isinstance(nvswitch, Expectation)
    assert isinstance(pcie, Expectation)
    assert all_reduce_rows(8, pcie.busbw_gbps)[-1].busbw_gbps < nvswitch.minimum_gbps
    assert all_reduce_rows(8, nvswitch.busbw_gbps)[-1].busbw_gbps >= nvswitch.minimum_gbps


@pytest.mark.parametrize(
    ("product", "interconnect", "family"),
    [("Tesla-T4", "pcie", "T4"), ("NVIDIA-L4", "nvswitch", "L4"), ("Acme-Accelerator-9000", "pcie", None)],
)
def test_unknown_answers_say_why(product: str, interconnect: str, family: str | None) -> None:
    found = expected_busbw(product, interconnect)  # type: ignore[arg-type]
    assert isinstance(found, UnknownExpectation)
    assert found.family == family
    assert found.reason


def test_every_row_is_cited_and_unique() -> None:
    assert len({(row.family, row.interconnect) for row in TABLE}) == len(TABLE)
    for row in TABLE:
        assert row.source.startswith("https://github.com/"), row
        assert row.interconnect in INTERCONNECTS
        assert row.note
        assert row.minimum_gbps == round(row.busbw_gbps * PASS_FRACTION, 1)
    assert {"H100", "A100", "B200"} <= {row.family for row in TABLE}


@pytest.mark.parametrize("interconnect", INTERCONNECTS)
def test_low_bandwidth_hint_names_the_commands_that_confirm_each_cause(interconnect: str) -> None:
    hint = low_bandwidth_hint(interconnect)  # type: ignore[arg-type]
    assert "LnkSta" in hint
    assert "ACSCtl" in hint
    assert ("nvidia-smi nvlink -s" in hint) is (interconnect != "pcie")
    assert ("nvidia-fabricmanager" in hint) is (interconnect == "nvswitch")


WORKLOAD_HINTS = {
    "gpu.fabric-not-ready": (
        "systemctl status nvidia-fabricmanager",
        "systemctl enable --now nvidia-fabricmanager",
    ),
    "cuda.driver-too-old": ("nvidia-smi", "--cuda-image"),
    "cuda.no-device": ("nvidia-smi -L", "--runtime-class nvidia"),
    "cuda.ecc-uncorrectable": ("nvidia-smi -q -d ECC", "nvidia-smi -r"),
    "cuda.devices-unavailable": ("compute_mode", "nvidia-smi -c DEFAULT"),
    "nccl.p2p-unavailable": ("nvidia-smi topo -p2p r", "ACSCtl", "iommu=pt"),
    "nccl.unhandled-system-error": ("/dev/shm", "NCCL_DEBUG=WARN"),
}


@pytest.mark.parametrize(("signature_id", "commands"), WORKLOAD_HINTS.items())
def test_workload_rows_name_the_confirming_command_and_the_fix(
    signature_id: str, commands: tuple[str, ...]
) -> None:
    row = signature_of(signature_id)  # a table row or a catalogue entry
    assert row is not None
    assert all(command in row.hint for command in commands), row.hint


def test_cuda_error_inside_an_nccl_warning_gets_the_cuda_diagnosis() -> None:
    """NCCL wraps CUDA errors; the CUDA row names the cause, not the generic NCCL one."""
    line = "gpu-0:1:2 [0] init.cc:123 NCCL WARN Cuda failure 'system not yet initialized'"
    assert [d.signature_id for d in find_all(line)] == ["gpu.fabric-not-ready"]
