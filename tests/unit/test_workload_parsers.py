"""The CUDA check script and its parser, and the all_reduce_perf formatter and parser, beyond the
real captures of test_corpus_workloads.py: failures, cut-off runs, older nccl-tests output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gpuctl.cuda_workload import (
    ECC_UNCORRECTABLE,
    MARKER,
    NO_RESULT,
    SYSTEM_NOT_READY,
    cuda_check_script,
    format_cuda_check,
    format_vector_add,
    parse_cuda_check,
    parse_vector_add,
)
from gpuctl.nccl_tests import (
    NcclDevice,
    all_reduce_args,
    all_reduce_rows,
    format_all_reduce,
    parse_all_reduce,
)

CAPTURE = (
    Path(__file__).resolve().parents[1]
    / "corpus"
    / "workloads"
    / "all-reduce-perf-h100-80gb-hbm3-2x8gpus.txt"
)
H100 = "NVIDIA H100 80GB HBM3"


def _stand_in(tmp_path: Path, failing_gpu: str, error: str) -> Path:
    """A vectorAdd stand-in: prints the real failure on GPU `failing_gpu`, passes elsewhere."""
    program = tmp_path / "vectorAdd"
    failure = format_vector_add(error).replace("\n", "\\n")
    success = format_vector_add().replace("\n", "\\n")
    program.write_text(
        "#!/bin/sh\n"
        f'if [ "$CUDA_VISIBLE_DEVICES" = {failing_gpu} ]; then printf "{failure}"; exit 1; fi\n'
        f'printf "{success}"\n'
    )
    program.chmod(0o755)
    return program


def test_the_script_runs_every_gpu_and_the_parser_names_the_failing_one(tmp_path: Path) -> None:
    shell = shutil.which("sh")
    assert shell is not None
    script = cuda_check_script(4, str(_stand_in(tmp_path, "2", SYSTEM_NOT_READY)))
    done = subprocess.run([shell, "-c", script], capture_output=True, text=True, check=False)
    check = parse_cuda_check(done.stdout)
    assert done.returncode == 1
    assert [gpu.index for gpu in check.gpus] == [0, 1, 2, 3]
    assert [(gpu.index, gpu.error) for gpu in check.failed] == [(2, SYSTEM_NOT_READY)]
    assert not check.passed


def test_what_the_formatter_writes_is_what_the_script_prints(tmp_path: Path) -> None:
    shell = shutil.which("sh")
    assert shell is not None
    script = cuda_check_script(3, str(_stand_in(tmp_path, "1", ECC_UNCORRECTABLE)))
    done = subprocess.run([shell, "-c", script], capture_output=True, text=True, check=False)
    assert format_cuda_check([None, ECC_UNCORRECTABLE, None]) == (done.stdout, done.returncode)


def test_all_gpus_passing() -> None:
    output, exit_code = format_cuda_check([None] * 8)
    check = parse_cuda_check(output)
    assert (check.passed, exit_code, len(check.gpus)) == (True, 0, 8)


def test_a_run_cut_off_before_its_exit_marker_fails_with_no_result() -> None:
    output = (
        f"{MARKER} gpu 0 begin\n{format_vector_add()}{MARKER} gpu 0 exit 0\n{MARKER} gpu 1 begin\n[Vector"
    )
    check = parse_cuda_check(output)
    assert [(gpu.index, gpu.passed, gpu.exit_code, gpu.error) for gpu in check.gpus] == [
        (0, True, 0, None),
        (1, False, None, NO_RESULT),
    ]


def test_no_marker_at_all_is_no_gpu_proven() -> None:
    assert not parse_cuda_check("exec /bin/sh: no such file or directory\n").passed


@pytest.mark.parametrize(
    ("output", "error"),
    [
        ("[Vector addition of 50000 elements]\nResult verification failed at element 7!\n",
         "Result verification failed at element 7"),
        ("Failed to launch vectorAdd kernel (error code no kernel image is available for execution on "
         "the device)!\n",
         "no kernel image is available for execution on the device"),
        ("[Vector addition of 50000 elements]\nSegmentation fault\n", "Segmentation fault"),
    ],
)  # fmt: skip
def test_vector_add_failures_name_their_error(output: str, error: str) -> None:
    assert parse_vector_add(output).error == error
    assert not parse_vector_add(output).passed


def test_exit_code_zero_without_test_passed_is_not_a_pass() -> None:
    output = f"{MARKER} gpu 0 begin\n[Vector addition of 50000 elements]\n{MARKER} gpu 0 exit 0\n"
    assert parse_cuda_check(output).gpus[0].error == "[Vector addition of 50000 elements]"


# --- all_reduce_perf --------------------------------------------------------------------------
def _devices(count: int) -> list[NcclDevice]:
    return [
        NcclDevice(rank=i, host="gpu-0", device=i, bus_id=f"0000:{0x18 + i:02x}:00", name=H100, pid=42)
        for i in range(count)
    ]


def test_formatted_run_has_the_real_header_and_summary_lines() -> None:
    real = CAPTURE.read_text(encoding="utf-8").splitlines()
    written = format_all_reduce(_devices(8), all_reduce_rows(8, 370.0), layout="2.10").splitlines()
    assert written[0].startswith("# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor)")
    assert written[1:3] == real[1:3]  # "#", "# Using devices"
    table_header = [line for line in real if line.startswith("#  ") and not line.startswith("#  Rank")]
    assert [line for line in written if line in table_header] == table_header
    assert written[-2] == real[-2]  # "# Out of bounds values : 0 OK"


def test_formatted_run_round_trips_through_the_parser() -> None:
    text = format_all_reduce(_devices(8), all_reduce_rows(8, 370.0))
    run = parse_all_reduce(text)
    assert [device.name for device in run.devices] == [H100] * 8
    assert run.largest is not None
    assert run.largest.size_bytes == 8 * 1024**3
    assert run.busbw_gbps == pytest.approx(370.0, rel=0.01)
    assert run.completed
    assert format_all_reduce(run.devices, run.rows, avg_busbw_gbps=run.avg_busbw_gbps) == text


def test_small_messages_pay_latency_and_large_ones_reach_the_link_figure() -> None:
    rows = all_reduce_rows(8, 28.0)
    assert rows[0].busbw_gbps < 0.01
    assert rows[-1].busbw_gbps == pytest.approx(28.0, rel=0.01)


def test_failure_and_warning_lines_and_a_run_cut_short() -> None:
    # Lines quoted from NVIDIA/nccl-tests issues #208 and #5.
    warn = "noodle-4090-0:1896106:1896121 [1] enqueue.cc:47 NCCL WARN Cuda failure 'named symbol not found'"
    failure = "NCCL failure all_reduce.cu:95 'unhandled cuda error'"
    head = format_all_reduce(_devices(2), all_reduce_rows(2, 20.0)).split("           8 ")[0]
    run = parse_all_reduce(f"{head}{warn}\n{failure}\n")
    assert (run.warnings, run.failures) == ((warn,), (failure,))
    assert (run.rows, run.avg_busbw_gbps, run.busbw_gbps, run.completed) == ((), None, None, False)


def test_older_nccl_tests_table_without_root_column() -> None:
    # Header from NVIDIA/nccl issue #583, row from NVIDIA/nccl issue #1244 (nccl-tests before 2.10).
    header = "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error"  # noqa: E501 - verbatim
    row = "           4             1     float     sum    47.54    0.00    0.00  0e+00    49.35    0.00    0.00  4e-07"  # noqa: E501 - verbatim
    run = parse_all_reduce(f"{header}\n{row}\n")
    assert [(r.size_bytes, r.root, r.in_place_time_us, r.in_place_wrong) for r in run.rows] == [
        (4, -1, 49.35, "4e-07")
    ]


def test_failed_validation_is_reported() -> None:
    text = format_all_reduce(_devices(2), all_reduce_rows(2, 20.0, sizes=[8]), out_of_bounds=50)
    assert "# Out of bounds values : 50 FAILED" in text
    assert parse_all_reduce(text).out_of_bounds == 50


def test_the_command_drives_every_gpu_of_the_node() -> None:
    assert all_reduce_args(8) == ("all_reduce_perf", "-b", "8", "-e", "8G", "-f", "2", "-g", "8")
