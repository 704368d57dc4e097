"""The CUDA check script and its parser, and the all_reduce_perf formatter and parser, beyond the
real captures of test_corpus_workloads.py: failures, cut-off runs, older nccl-tests output."""

from __future__ import annotations

import json
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
    NcclRun,
    all_reduce_args,
    all_reduce_rows,
    format_all_reduce,
    parse_all_reduce,
    parse_all_reduce_json,
)

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "workloads"
CAPTURE = CORPUS / "all-reduce-perf-h100-80gb-hbm3-2x8gpus.txt"
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


# --- layouts still in use, and the -J report ------------------------------------------------------
# nccl-tests 2.20.0, the newest release in use (its table keeps 2.17's columns), quoted from
# https://github.com/NVIDIA/dgx-spark-playbooks/pull/103 (2 x GB10) as the thread shows it: the
# header lines without the trailing blanks nccl-tests prints, the run up to its second size.
NEWEST = (
    "# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102\n"
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 1 minBytes 8192 maxBytes 8589934592 step: 2(factor) warmup iters: 10 iters: 100 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"  # noqa: E501 - verbatim
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid 1666603 on spark-d708 device  0 [000f:01:00] NVIDIA GB10\n"
    "#  Rank  1 Group  0 Pid 1669515 on spark-dbf4 device  0 [000f:01:00] NVIDIA GB10\n"
    "#\n"
    "#                                                              out-of-place                       in-place\n"  # noqa: E501 - verbatim
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"  # noqa: E501 - verbatim
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n"  # noqa: E501 - verbatim
    "        8192          2048     float     sum      -1    35.15    0.23    0.23       0    30.33    0.27    0.27       0\n"  # noqa: E501 - verbatim
    "       16384          4096     float     sum      -1    31.67    0.52    0.52       0    30.75    0.53    0.53       0\n"  # noqa: E501 - verbatim
)


def test_the_newest_layout_parses() -> None:
    run = parse_all_reduce(NEWEST)
    assert run.version == "2.20.0"
    assert [device.host for device in run.devices] == ["spark-d708", "spark-dbf4"]
    assert [(row.size_bytes, row.out_of_place_busbw_gbps, row.in_place_busbw_gbps) for row in run.rows] == [
        (8192, 0.23, 0.27), (16384, 0.52, 0.53),
    ]  # fmt: skip
    assert run.busbw_gbps == 0.53
    assert not run.completed  # quoted before its summary


def _json_report(run: NcclRun) -> str:
    """The -J report of `run`, key for key as nccl-tests 2.18.3 writes it (src/util.cu at f727aa2a:
    jsonOutputInit, writeDeviceReport, writeBenchmarkLine*, writeResultFooter, writeErrors)."""

    def placement(time_us: float, algbw: float, busbw: float, wrong: str) -> dict[str, object]:
        return {"time": time_us, "alg_bw": algbw, "bus_bw": busbw, "nwrong": float(wrong)}

    devices = [
        {"rank": d.rank, "group": d.group, "pid": d.pid, "hostname": d.host, "device": d.device,
         "device_hex": d.bus_id, "device_info": d.name}
        for d in run.devices
    ]  # fmt: skip
    results = [
        {"size": r.size_bytes, "count": r.count, "type": r.dtype, "redop": r.redop, "root": f"{r.root:6d}",
         "out_of_place": placement(
             r.out_of_place_time_us, r.out_of_place_algbw_gbps, r.out_of_place_busbw_gbps,
             r.out_of_place_wrong,
         ),
         "in_place": placement(
             r.in_place_time_us, r.in_place_algbw_gbps, r.in_place_busbw_gbps, r.in_place_wrong
         ),
         "actual_iterations": 20, "experiment_name": ""}
        for r in run.rows
    ]  # fmt: skip
    report = {
        "version": 1, "start_time": "2026-09-22 10:00:00", "args": ["all_reduce_perf", "-J", "r.json"],
        "env": [], "nccl_version": 23005,
        "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 500000, "maximum_bytes": 1500000,
                   "step_bytes": 100000, "warmup_iters": 1, "iterations": 20, "aggregated_iterations": 1,
                   "validation": 1, "graph": 0, "blocking_collectives": False, "parallel_init": False,
                   "devices": devices},
        "results": results,
        "out_of_bounds": {"count": run.out_of_bounds, "okay": True},
        "average_bus_bandwidth": {"bandwidth": run.avg_busbw_gbps, "okay": "unchecked"},
        "errors": [], "end_time": "2026-09-22 10:00:05",
    }  # fmt: skip
    return json.dumps(report)


def test_the_json_report_reads_as_the_text_of_the_same_run() -> None:
    text = (CORPUS / "all-reduce-perf-h100-nvl-2x2gpus-nccl-tests-2.18.3.txt").read_text(encoding="utf-8")
    from_text = parse_all_reduce(text)
    from_json = parse_all_reduce_json(_json_report(from_text))
    assert from_json.devices == from_text.devices
    assert from_json.rows == from_text.rows
    assert (from_json.avg_busbw_gbps, from_json.out_of_bounds, from_json.busbw_gbps) == (9.11404, 0, 11.24)
    assert from_json.completed


def test_a_json_report_with_errors_or_no_report_at_all_is_a_failed_run() -> None:
    broken = json.loads(
        _json_report(parse_all_reduce(format_all_reduce(_devices(2), all_reduce_rows(2, 20.0))))
    )
    broken["errors"] = ["unhandled cuda error (run with NCCL_DEBUG=INFO for details)"]
    run = parse_all_reduce_json(json.dumps(broken))
    assert run.failures == ("unhandled cuda error (run with NCCL_DEBUG=INFO for details)",)
    assert not run.completed
    assert (
        parse_all_reduce_json("# nThread 1 nGpus 8").failures[0].startswith("not an nccl-tests JSON report")
    )
    assert parse_all_reduce_json("[]").failures == ("not an nccl-tests JSON report: not an object",)


@pytest.mark.parametrize(
    ("value", "width", "printed"),
    [
        (0.0, 6, "  0.00"), (188.69, 7, " 188.69"), (1463.07, 7, "1463.07"), (10292.6, 7, "10292.6"),
        (162826.0, 7, " 162826"), (1234567.0, 7, "1234567"), (12345678.0, 7, "1.2e+07"),
        (999.99, 6, "999.99"), (1807.89, 6, "1807.9"), (14563.56, 6, " 14564"), (109655.01, 6, "109655"),
        (1777718.25, 6, " 2e+06"),
    ],
)  # fmt: skip
def test_numbers_are_printed_as_nccl_tests_2_17_prints_them(value: float, width: int, printed: str) -> None:
    """src/util.cu getFloatStr (nccl-tests 2.18.3): two decimals while the integer part leaves room
    in the column, then one, then none, then exponent notation."""
    from gpuctl.nccl_tests import _float

    assert _float(value, width) == printed
