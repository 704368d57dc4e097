"""The sim kubelet's termination message rules (gpuctl/sim/runtime/termination.py)."""

from __future__ import annotations

from gpuctl.sim.runtime import termination
from gpuctl.sim.runtime.containers import Outcome

QUERY = ["nvidia-smi", "--query-gpu=index", "--format=csv"]


def test_output_file_options_are_taken_out_of_nvidia_smis_argv() -> None:
    assert termination.split_output_file([*QUERY, "-f", "/dev/termination-log"]) == (
        QUERY,
        "/dev/termination-log",
    )
    assert termination.split_output_file([*QUERY, "--filename=/tmp/x"]) == (QUERY, "/tmp/x")
    assert termination.split_output_file(["/usr/bin/nvidia-smi", "--filename", "/tmp/y"]) == (
        ["/usr/bin/nvidia-smi"],
        "/tmp/y",
    )
    assert termination.split_output_file(QUERY) == (QUERY, "")
    # Only nvidia-smi's -f is understood: other programs keep their arguments.
    assert termination.split_output_file(["tail", "-f", "/var/log/x"]) == (["tail", "-f", "/var/log/x"], "")


def test_a_succeeding_run_writes_the_file_a_failing_one_prints_its_error() -> None:
    ok = termination.run_redirected(lambda argv: Outcome(log=" ".join(argv)), [*QUERY, "-f", "/out"])
    assert (ok.log, ok.file_path, ok.file_text) == ("", "/out", " ".join(QUERY))
    failing = termination.run_redirected(
        lambda _: Outcome(log="error\n", exit_code=9), [*QUERY, "-f", "/out"]
    )
    assert (failing.log, failing.file_path) == ("error\n", "")


def test_the_message_keeps_the_files_last_4096_bytes() -> None:
    text = "x" * 5000 + "END"
    outcome = Outcome(file_path="/dev/termination-log", file_text=text)
    message = termination.message({"name": "c"}, outcome, "")
    assert len(message.encode()) == 4096
    assert message.endswith("END")
    # A file at another path than terminationMessagePath is no message.
    assert termination.message({"name": "c", "terminationMessagePath": "/other"}, outcome, "") == ""


def test_fallback_to_logs_only_on_error_and_bounded_to_2048_bytes() -> None:
    fallback = {"name": "c", "terminationMessagePolicy": "FallbackToLogsOnError"}
    long_lines = "".join("y" * 100 + "\n" for _ in range(50))
    message = termination.message(fallback, Outcome(exit_code=1), long_lines)
    assert len(message.encode()) == 2048
    assert termination.message(fallback, Outcome(exit_code=0), long_lines) == ""
    assert termination.message({"name": "c"}, Outcome(exit_code=1), long_lines) == ""
    assert termination.message(fallback, Outcome(exit_code=128, start_error="boom"), "") == "boom"
