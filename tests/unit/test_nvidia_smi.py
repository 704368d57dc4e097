"""nvidia-smi formats: the emulation and the parsers agree, and errors are told apart from data."""

import pytest

from gpuctl.nvidia_smi import (
    DRIVER_MISMATCH,
    VERIFY_ARGS,
    VERIFY_QUERY_FIELDS,
    fake_gpus,
    parse_list,
    parse_query_csv,
    run_nvidia_smi,
)

GPUS = fake_gpus("gpu-0", 8, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")


def test_fake_gpus_are_stable_and_distinct() -> None:
    again = fake_gpus("gpu-0", 8, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")
    other = fake_gpus("gpu-1", 8, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")
    assert [g.uuid for g in GPUS] == [g.uuid for g in again]
    assert {g.uuid for g in GPUS}.isdisjoint(g.uuid for g in other)
    assert len({g.pci_bus_id for g in GPUS}) == 8
    assert GPUS[0].name == "NVIDIA H100 80GB HBM3"
    assert GPUS[0].cuda_version == "12.4"


def test_list_round_trips() -> None:
    stdout, code = run_nvidia_smi(["-L"], GPUS)
    assert code == 0
    assert stdout.splitlines()[0] == f"GPU 0: NVIDIA H100 80GB HBM3 (UUID: {GPUS[0].uuid})"
    assert [g.uuid for g in parse_list(stdout)] == [g.uuid for g in GPUS]


def test_verify_query_round_trips() -> None:
    stdout, code = run_nvidia_smi(list(VERIFY_ARGS[1:]), GPUS[:4])
    assert code == 0
    rows = parse_query_csv(stdout, VERIFY_QUERY_FIELDS)
    assert [row["index"] for row in rows] == ["0", "1", "2", "3"]
    assert rows[0]["memory.total"] == "81559"
    assert rows[0]["driver_version"] == "550.90.07"


def test_query_with_header_and_units_parses_the_same() -> None:
    stdout, _ = run_nvidia_smi(["--query-gpu=index,memory.total", "--format=csv"], GPUS[:2])
    assert stdout.splitlines()[0] == "index, memory.total [MiB]"
    assert stdout.splitlines()[1] == "0, 81559 MiB"
    assert parse_query_csv(stdout, ("index", "memory.total")) == [
        {"index": "0", "memory.total": "81559"},
        {"index": "1", "memory.total": "81559"},
    ]


def test_select_by_index_and_bad_field() -> None:
    stdout, _ = run_nvidia_smi(["-L", "-i", "2"], GPUS)
    assert parse_list(stdout)[0].index == 2
    stdout, code = run_nvidia_smi(["--query-gpu=bogus", "--format=csv"], GPUS)
    assert code == 2
    assert 'Field "bogus"' in stdout


def test_plain_table_names_driver_and_gpus() -> None:
    stdout, code = run_nvidia_smi([], GPUS[:2])
    assert code == 0
    assert "Driver Version: 550.90.07" in stdout
    assert stdout.count("NVIDIA H100 80GB") == 2


def test_nvml_error_text_is_not_data() -> None:
    with pytest.raises(ValueError, match="expected 6"):
        parse_query_csv(DRIVER_MISMATCH[0], VERIFY_QUERY_FIELDS)
    with pytest.raises(ValueError, match="unexpected"):
        parse_list(DRIVER_MISMATCH[0])


def test_no_gpus_visible() -> None:
    assert run_nvidia_smi(["-L"], []) == ("No devices were found\n", 6)
