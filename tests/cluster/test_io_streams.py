"""Standard output that closes or fills keeps the command's exit status; `verify --watch -o json`
is NDJSON; `status -o wide` never cuts a value inside a word; a cluster option before the command
keeps its meaning. Real processes, real pipes, a simulated cluster with a failing node."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.interrupt import with_sigint_default

REPO = Path(__file__).resolve().parents[2]
FAILING = {
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-{i}", "count": 2, "gpus": 8},
        {"name": "broken-0", "gpus": 8, "host": {"driver": "missing"}},
    ],
}
# Enough nodes that the table is larger than a pipe's buffer (64 KiB): gpuctl is still writing
# when the reader leaves.
MANY = {
    "devicePlugin": "installed",
    "nodes": [{"name": "gpu-{i}", "count": 1500, "gpus": 8}, FAILING["nodes"][1]],
}


def _gpuctl(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "gpuctl", *(str(arg) for arg in args)]


def _reader_left_before(args: list[str]) -> tuple[int, str]:
    """Run with stdout a pipe whose reader already left (`| head -1` after it exited)."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        completed = subprocess.run(
            args, stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120, check=False, cwd=REPO
        )
    finally:
        os.close(writer)
    return completed.returncode, completed.stderr


def _reader_leaves_after_one_line(args: list[str]) -> tuple[int, str, str]:
    """`gpuctl ... | head -1`: read one line, close the pipe, collect the exit status."""
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    assert process.stdout is not None
    assert process.stderr is not None
    try:
        first = process.stdout.readline()
        process.stdout.close()
        process.wait(timeout=120)
        stderr = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, first, stderr


@pytest.mark.parametrize("output", ["table", "json", "wide"])
def test_a_failing_verify_exits_1_when_its_reader_left(sim: Callable[..., Any], output: str) -> None:
    cluster = sim(FAILING)
    code, stderr = _reader_left_before(
        _gpuctl("verify", "--no-pods", "-o", output, "--kubeconfig", cluster.kubeconfig)
    )
    assert code == 1, stderr
    assert stderr == ""


@pytest.mark.parametrize("output", ["table", "json"])
def test_a_failing_verify_piped_to_head_exits_1(sim: Callable[..., Any], output: str) -> None:
    cluster = sim(MANY)
    code, first, stderr = _reader_leaves_after_one_line(
        _gpuctl("verify", "--no-pods", "-o", output, "--kubeconfig", cluster.kubeconfig)
    )
    assert first.strip(), stderr
    assert code == 1, stderr
    assert "Traceback" not in stderr
    assert "error" not in stderr


def test_a_passing_status_piped_to_head_exits_0(sim: Callable[..., Any]) -> None:
    cluster = sim(MANY)
    code, first, stderr = _reader_leaves_after_one_line(_gpuctl("status", "--kubeconfig", cluster.kubeconfig))
    assert "GPUS" in first
    assert (code, stderr) == (0, "")


def _to_dev_full(args: list[str]) -> subprocess.CompletedProcess[str]:
    with open("/dev/full", "w", encoding="utf-8") as full:
        return subprocess.run(
            args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120, check=False, cwd=REPO
        )


@pytest.mark.parametrize(
    ("command", "code"), [(["status"], 2), (["status", "-o", "json"], 2), (["verify", "--no-pods"], 1)]
)
def test_a_full_standard_output_is_said_with_the_command_status(
    sim: Callable[..., Any], command: list[str], code: int
) -> None:
    """`> /dev/full`: the output is lost, so never exit 0; a failing verify keeps its 1."""
    cluster = sim(FAILING)
    completed = _to_dev_full(_gpuctl(*command, "--kubeconfig", cluster.kubeconfig))
    assert completed.returncode == code, completed.stderr
    error, hint = completed.stderr.splitlines()
    assert error == "error: cannot write standard output: No space left on device"
    assert hint.startswith("hint: free space where standard output goes")


@pytest.mark.parametrize(("command", "code"), [(["status"], 2), (["verify", "--no-pods"], 1)])
def test_a_closed_standard_output_is_said_with_the_command_status(
    sim: Callable[..., Any], command: list[str], code: int
) -> None:
    """`gpuctl status >&-`: Python starts without sys.stdout; no internal error, no traceback."""
    cluster = sim(FAILING)
    completed = subprocess.run(
        _gpuctl(*command, "--kubeconfig", cluster.kubeconfig),
        stderr=subprocess.PIPE, text=True, timeout=120, check=False, cwd=REPO,
        preexec_fn=lambda: os.close(1),  # the child starts with descriptor 1 closed
    )  # fmt: skip
    assert completed.returncode == code, completed.stderr
    error, hint = completed.stderr.splitlines()
    assert error == "error: cannot write standard output: it is closed"
    assert hint.startswith("hint: give the command a standard output")


def test_render_to_a_full_disk_is_exit_2() -> None:
    completed = _to_dev_full(_gpuctl("render"))
    assert completed.returncode == 2
    assert completed.stderr.startswith("error: cannot write standard output")


def test_verify_watch_ends_with_the_verdict_once_its_reader_left(sim: Callable[..., Any]) -> None:
    """`verify --watch | head -1`: no waiting for a next line that nobody reads."""
    cluster = sim(FAILING)
    started = time.monotonic()
    code, first, stderr = _reader_leaves_after_one_line(
        _gpuctl("verify", "--watch", "--interval", "60", "--no-pods", "--kubeconfig", cluster.kubeconfig)
    )
    assert first.strip()
    assert code == 1, stderr
    assert time.monotonic() - started < 50  # well before the next run, 60 s later


def test_verify_watch_json_is_one_document_per_line(sim: Callable[..., Any]) -> None:
    cluster = sim(FAILING)
    args = _gpuctl(
        "verify", "--watch", "--interval", "5", "--no-pods", "-o", "json", "--kubeconfig", cluster.kubeconfig
    )
    process = subprocess.Popen(
        with_sigint_default(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    assert process.stdout is not None
    try:
        first = process.stdout.readline()
        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    document = json.loads(first)  # the whole document on the first line
    assert set(document) == {"time", "changes", "verify"}
    assert document["verify"]["schema"] == "gpuctl.verify/v1"
    assert document["verify"]["ok"] is False
    new = {change["subject"]: change["ok"] for change in document["changes"] if change["before"] is None}
    assert {name: new.get(name) for name in ("gpu-0", "gpu-1", "broken-0")} == {
        "gpu-0": True,
        "gpu-1": True,
        "broken-0": False,
    }
    for line in rest.splitlines():  # anything printed before Ctrl-C is a whole document too
        json.loads(line)


LONG = {
    "devicePlugin": "installed",
    "nodes": [
        {
            "name": "ip-10-0-101-23.us-west-2.compute.internal",
            "gpus": 8,
            "gpuProduct": "NVIDIA-H100-80GB-HBM3",
            "taints": [
                {
                    "key": "nvidia.com/gpu.deploy.operands-of-this-pool",
                    "value": "false",
                    "effect": "NoSchedule",
                },
                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
            ],
        },
        {"name": "gpu-0", "gpus": 4},
    ],
}


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("output", ["wide", "table"])
def test_status_never_cuts_a_value_inside_a_word(
    sim: Callable[..., Any],
    cli: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    columns: int,
    output: str,
) -> None:
    """docs/commands.md: tables narrow to the terminal, never below their longest word. Names and
    versions are never cut (the table is wider than COLUMNS when they do not fit); a long taint,
    free text, is folded only where that makes the table fit."""
    cluster = sim(LONG)
    document = json.loads(cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "json").stdout)
    monkeypatch.setenv("COLUMNS", str(columns))
    result = cli("status", "--kubeconfig", cluster.kubeconfig, "-o", output)
    assert result.exit_code == 0, result.output
    words = set(re.findall(r"[^\s,]+", result.stdout))
    wide = ("kubelet_version", "container_runtime", "kernel_version", "os_image") if output == "wide" else ()
    for node in document["nodes"]:
        for value in (node["name"], node["driver"], *(node[key] for key in wide)):
            assert set(str(value).split()) <= words, (value, result.stdout)
    taints = {word for node in document["nodes"] for word in node["taints"]}
    if not taints <= words:
        assert max(len(line) for line in result.stdout.splitlines()) <= columns, result.stdout


def test_status_wide_fits_the_terminal_when_its_words_do(
    sim: Callable[..., Any], cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = sim({"devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 8}]})
    monkeypatch.setenv("COLUMNS", "150")
    result = cli("status", "--kubeconfig", cluster.kubeconfig, "-o", "wide")
    assert max(len(line) for line in result.stdout.splitlines()) <= 150
    assert "containerd://" in result.stdout


def test_a_kubeconfig_before_sim_up_is_the_one_it_writes(tmp_path: Path, cli: Callable[..., Any]) -> None:
    """`gpuctl --kubeconfig X sim up` writes X, as `kubectl --kubeconfig X config ...` writes X;
    `gpuctl --kubeconfig X status` then reads it, and `gpuctl --kubeconfig X sim down` stops it."""
    kubeconfig = tmp_path / "sim.kubeconfig"
    scenario = tmp_path / "s.yaml"
    scenario.write_text("nodes: [{name: gpu-0, gpus: 8}]\n")
    up = cli("--kubeconfig", kubeconfig, "sim", "up", "--scenario", scenario, "--detach")
    try:
        assert up.exit_code == 0, up.output
        assert kubeconfig.is_file()
        status = cli("--kubeconfig", kubeconfig, "status", "-o", "json")
        assert status.exit_code == 0, status.output
        assert json.loads(status.stdout)["cluster_nodes"] == 1
    finally:
        down = cli("--kubeconfig", kubeconfig, "sim", "down")
    assert down.exit_code == 0, down.output
