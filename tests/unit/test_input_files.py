"""Input files that are no regular file: a FIFO nobody writes to, a socket, a huge file. Each is
refused (exit 2, one line naming it and what it is) before anything opens it, never a hang;
`explain` with standard input closed or empty says so; a signature far into a long line is found.

The catalogue (tests/bad_inputs_io.py) holds the cases a table can express (devices, folders,
group_vars errors); these need a FIFO, a socket or a sparse file made here."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.diagnose.scan import WINDOW, find_all
from gpuctl.input_files import TEXT_LIMIT, YAML_LIMIT

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus" / "failures.yaml"
HOSTS = "all:\n  children:\n    gpu_nodes:\n      hosts:\n        n1: {ansible_host: 127.0.0.1}\n"
SECONDS = 20  # far more than any refusal takes; a FIFO opened for reading would block forever


class Hung(BaseException):
    """Raised by the alarm: gpuctl's own error handling does not catch a BaseException."""


@pytest.fixture
def bounded() -> Iterator[None]:
    """Fail the test, rather than hang it, when the command blocks (on a FIFO's open, say)."""

    def hung(_signal: int, _frame: object) -> None:
        raise Hung

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _refused(result: Any, culprit: Path | str, kind: str) -> None:
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("error: ")
    assert str(culprit) in lines[0]
    assert kind in lines[0]
    assert lines[1].startswith("hint: ")
    assert "Traceback" not in result.output


def _inventory_with(tmp_path: Path, name: str) -> Path:
    inventory = tmp_path / "inv" / "hosts.yml"
    inventory.parent.mkdir()
    inventory.write_text(HOSTS)
    (inventory.parent / name).parent.mkdir(parents=True, exist_ok=True)
    return inventory


def _argv_for(where: str, culprit: Path, tmp_path: Path) -> list[str]:
    """A command line reading `culprit` as `where`; the files beside it are written."""
    kubeconfig_out = str(tmp_path / "out.kubeconfig")
    return {
        "inventory": ["preflight", "--inventory", str(culprit)],
        "bootstrap-inventory": ["bootstrap", "--phase", "host", "--inventory", str(culprit)],
        "hosts-from": ["sim", "up", "--hosts-from", str(culprit), "--kubeconfig", kubeconfig_out, "--detach"],
        "scenario": ["sim", "up", "--scenario", str(culprit), "--kubeconfig", kubeconfig_out, "--detach"],
        "demo-scenario": ["demo", "--scenario", str(culprit)],
        "kubeconfig": ["status", "--kubeconfig", str(culprit)],
        "verify-kubeconfig": ["verify", "--kubeconfig", str(culprit)],
        "explain": ["explain", str(culprit)],
    }[where]


READERS = (
    "inventory",
    "bootstrap-inventory",
    "hosts-from",
    "scenario",
    "demo-scenario",
    "kubeconfig",
    "verify-kubeconfig",
    "explain",
)


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize("where", READERS)
def test_a_fifo_nobody_writes_to_is_refused_not_waited_on(
    where: str, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    fifo = tmp_path / "input.yaml"
    os.mkfifo(fifo)
    _refused(cli(_argv_for(where, fifo, tmp_path)), fifo, "FIFO")


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize("where", ["inventory", "scenario", "kubeconfig", "explain"])
def test_a_socket_is_refused(where: str, tmp_path: Path, cli: Callable[..., Any]) -> None:
    path = tmp_path / "s.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    try:
        _refused(cli(_argv_for(where, path, tmp_path)), path, "a socket")
    finally:
        listener.close()


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize(
    ("where", "limit"),
    [
        ("inventory", YAML_LIMIT),
        ("scenario", YAML_LIMIT),
        ("kubeconfig", YAML_LIMIT),
        ("explain", TEXT_LIMIT),
    ],
)
def test_a_huge_file_is_refused_unread(
    where: str, limit: int, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as handle:  # sparse: no disk, no memory
        handle.truncate(limit + 1)
    _refused(cli(_argv_for(where, huge, tmp_path)), huge, "more than the")


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize("detach", [True, False])
def test_sim_up_does_not_write_its_kubeconfig_into_a_fifo(
    detach: bool, tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """The kubeconfig sim up merges into is read first: a FIFO would block it, and replacing a
    device or FIFO by a file (as root: /dev/null) must never happen."""
    fifo = tmp_path / "kubeconfig"
    os.mkfifo(fifo)
    scenario = tmp_path / "s.yaml"
    scenario.write_text("nodes: [{name: gpu-0, gpus: 8}]\n")
    result = cli("sim", "up", "--scenario", scenario, "--kubeconfig", fifo, *(["--detach"] if detach else []))
    _refused(result, fifo, "FIFO")
    assert stat.S_ISFIFO(fifo.stat().st_mode)


@pytest.mark.usefixtures("bounded")
def test_a_kubeconfig_list_with_a_fifo_is_refused(
    tmp_path: Path, cli: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    fifo = tmp_path / "second"
    os.mkfifo(fifo)
    first = tmp_path / "first"
    first.write_text("apiVersion: v1\nkind: Config\n")
    monkeypatch.setenv("KUBECONFIG", f"{first}{os.pathsep}{fifo}")
    _refused(cli("status"), fifo, "FIFO")


@pytest.mark.usefixtures("bounded")
@pytest.mark.parametrize(
    "name", ["group_vars/all.yml", "host_vars/n1.yml", "group_vars/gpu_nodes/extra.yaml", "extra.yml"]
)
def test_a_fifo_ansible_would_open_is_refused(name: str, tmp_path: Path, cli: Callable[..., Any]) -> None:
    """group_vars/host_vars beside the inventory, and every file of an inventory folder: Ansible
    opens each, and would block on a FIFO."""
    inventory = _inventory_with(tmp_path, name)
    fifo = inventory.parent / name
    os.mkfifo(fifo)
    source = inventory.parent if name == "extra.yml" else inventory
    result = cli("preflight", "--inventory", source)
    _refused(result, name, "FIFO")


@pytest.mark.usefixtures("bounded")
def test_a_huge_group_vars_file_is_refused(tmp_path: Path, cli: Callable[..., Any]) -> None:
    inventory = _inventory_with(tmp_path, "group_vars/all.yml")
    with (inventory.parent / "group_vars" / "all.yml").open("wb") as handle:
        handle.truncate(YAML_LIMIT + 1)
    _refused(cli("preflight", "--inventory", inventory), "group_vars/all.yml", "more than the")


def test_a_fifo_inventory_ends_the_process_at_once(tmp_path: Path) -> None:
    """The whole program, as a user runs it: refused, not blocked in open(2)."""
    fifo = tmp_path / "hosts.yml"
    os.mkfifo(fifo)
    completed = subprocess.run(
        [sys.executable, "-m", "gpuctl", "preflight", "--inventory", str(fifo)],
        capture_output=True, text=True, timeout=60, check=False, cwd=REPO,
    )  # fmt: skip
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith(f"error: {fifo}: inventory is a FIFO")


def _explain_process(**how: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", "explain"],
        capture_output=True, text=True, timeout=60, check=False, cwd=REPO, **how,
    )  # fmt: skip


def test_explain_with_standard_input_closed_says_so() -> None:
    """`gpuctl explain <&-`: Python starts without sys.stdin."""
    completed = subprocess.run(
        [sys.executable, "-m", "gpuctl", "explain"],
        capture_output=True, text=True, timeout=60, check=False, cwd=REPO,
        preexec_fn=lambda: os.close(0),  # the child starts with descriptor 0 closed
    )  # fmt: skip
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.splitlines()[0] == "error: standard input is closed: nothing to explain"
    assert completed.stderr.splitlines()[1].startswith("hint: ")


def test_explain_with_standard_input_empty_says_so() -> None:
    """`gpuctl explain < /dev/null`."""
    completed = _explain_process(stdin=subprocess.DEVNULL)
    assert completed.returncode == 2, completed.stderr
    assert completed.stderr.startswith("error: standard input is empty: nothing to explain\nhint: ")


def test_explain_reads_a_pipe_on_standard_input() -> None:
    completed = _explain_process(input="Failed to initialize NVML: Driver/library version mismatch\n")
    assert completed.returncode == 0, completed.stderr
    assert "smi.driver-mismatch" in completed.stdout


# A fragment cut after "initialization error: " says only that the hook failed; padded after, the
# padding would read as the error's detail: it is not a line a signature can sit anywhere in.
_CUT_AFTER_A_COLON = {"hook-driver-mismatch-dalle"}
ITEMS = [
    item
    for item in yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    if item["expect"]["signature"] and item["id"] not in _CUT_AFTER_A_COLON
]


@pytest.mark.parametrize("item", ITEMS, ids=[item["id"] for item in ITEMS])
def test_a_signature_anywhere_in_a_long_line_is_found(item: dict[str, Any]) -> None:
    """A real corpus line padded to 10,000 characters, before it, after it and around it."""
    text = item["text"]
    fill = 10_000 - len(text)
    padded = {
        "end": "x" * fill + text,
        "start": text + " y" * (fill // 2),
        "middle": "a " * (fill // 4) + text + " b" * (fill // 4),
    }
    for where, line in padded.items():
        assert len(line) > 4 * WINDOW
        found = find_all(line)
        assert found, f"{where}: nothing found"
        assert found[0].signature_id == item["expect"]["signature"], where


def test_explain_finds_a_signature_at_the_end_of_a_long_log_line(
    tmp_path: Path, cli: Callable[..., Any]
) -> None:
    """A JSON log record whose message is 10,000 characters in: found, once."""
    line = '{"level":"error","ts":"2025-01-01T00:00:00Z","context":"' + "k=v " * 2500 + '","msg":"'
    line += 'Failed to initialize NVML: Driver/library version mismatch"}'
    log = tmp_path / "plugin.log"
    log.write_text(f"starting\n{line}\ndone\n")
    result = cli("explain", log, "-o", "json")
    assert result.exit_code == 0, result.output
    assert [match["id"] for match in yaml.safe_load(result.stdout)["matches"]] == ["smi.driver-mismatch"]
