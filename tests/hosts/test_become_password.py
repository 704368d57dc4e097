"""A node whose sudo asks for a password: GPUCTL_BECOME_PASSWORD on a real SSH test node.

The admin keeps SSH key login but loses NOPASSWD: its sudoers entry becomes `ALL=(ALL:ALL) ALL` and
it gets a password. Bootstrap must fail with one clear line (and a hint naming both ways to give the
password) without it, succeed with it, and the password must never be written anywhere: gpuctl's
output (table and JSON), ansible-runner's kept artifacts, the TMPDIR of the run, or the node.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect  # ansible-runner's own dependency: a real terminal for the prompt
import pytest

from tests.hosts.conftest import skip_without_host_requirements
from tests.hosts.nodes import TestNode, down, harness_dir, node_exec, up

pytestmark = [pytest.mark.hosts, pytest.mark.slow]
SECRET = "sudo-pw-7c2e91"  # the test node's sudo password, made up here
SUDOERS = "/etc/sudoers.d/gpuadmin"


@pytest.fixture(scope="module")
def node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestNode]:
    skip_without_host_requirements()
    inventory = tmp_path_factory.mktemp("sudo-password-node") / "hosts.yml"
    (started,) = up(nodes=1, gpus=2, inventory=inventory)
    script = (
        f"echo '{started.ssh_user}:{SECRET}' | chpasswd && "
        f"echo '{started.ssh_user} ALL=(ALL:ALL) ALL' > {SUDOERS} && chmod 0440 {SUDOERS} && visudo -c -q"
    )
    code, _, err = node_exec(started, ["sh", "-c", script])
    assert code == 0, err
    yield started
    down(inventory)


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    tmpdir: Path

    def report(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.stdout)
        return parsed


def gpuctl(tmpdir: Path, *args: str, password: str | None = None) -> Run:
    """gpuctl in a child process, its TMPDIR and state directory (kept artifacts) `tmpdir`, the
    password (if any) only in its environment."""
    tmpdir.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "GPUCTL_BECOME_PASSWORD"} | {
        "TMPDIR": str(tmpdir),
        "XDG_STATE_HOME": str(tmpdir),
    }
    if password is not None:
        env["GPUCTL_BECOME_PASSWORD"] = password
    done = subprocess.run(
        [sys.executable, "-m", "gpuctl", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return Run(done.returncode, done.stdout, done.stderr, tmpdir)


@pytest.fixture(scope="module")
def bootstrapped(node: TestNode, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The real run with the password, its artifacts kept for the grep."""
    tmpdir = tmp_path_factory.mktemp("with-password")
    inventory = str(node.inventory)
    args = ("bootstrap", "--phase", "host", "-i", inventory, "--output", "json", "--keep-artifacts")
    return gpuctl(tmpdir, *args, password=SECRET)


@pytest.fixture(scope="module")
def verbose_rerun(node: TestNode, bootstrapped: Run, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The no-op re-run with the table and ansible-playbook -vvv, which prints every become command."""
    assert bootstrapped.code == 0, bootstrapped.stdout + bootstrapped.stderr
    tmpdir = tmp_path_factory.mktemp("verbose-rerun")
    args = ("bootstrap", "--phase", "host", "-i", str(node.inventory), "--keep-artifacts", "--", "-vvv")
    return gpuctl(tmpdir, *args, password=SECRET)


def files_holding(folder: Path, secret: str) -> list[str]:
    return [
        str(path) for path in folder.rglob("*") if path.is_file() and secret.encode() in path.read_bytes()
    ]


def test_preflight_warns_that_sudo_wants_a_password(node: TestNode, tmp_path: Path) -> None:
    """Preflight's probe asks sudo only `sudo -n true`: it never needs the password, and never shows it."""
    run_ = gpuctl(tmp_path / "tmp", "preflight", "-i", str(node.inventory), "-o", "json", password=SECRET)
    assert run_.code == 0, run_.stdout + run_.stderr  # a warning: the host can be bootstrapped
    sudo = {f["id"]: f for f in run_.report()["hosts"][0]["findings"]}["sudo"]
    assert (sudo["status"], sudo["message"]) == ("warn", f"sudo asks {node.ssh_user} for a password")
    assert "GPUCTL_BECOME_PASSWORD" in sudo["hint"]
    assert SECRET not in run_.stdout + run_.stderr


def test_without_the_password_bootstrap_fails_with_one_clear_line(node: TestNode, tmp_path: Path) -> None:
    run_ = gpuctl(tmp_path / "tmp", "bootstrap", "--phase", "host", "-i", str(node.inventory))
    assert run_.code == 1  # a host failed (see `gpuctl bootstrap --help`)
    error, hint = run_.stderr.strip().splitlines()
    assert error == f"{node.name}: task 'Preflight | gather facts' failed: Task failed: Missing sudo password"
    assert hint.strip().startswith(
        f"hint: sudo on {node.name} asks for a password: set GPUCTL_BECOME_PASSWORD or pass --ask-become-pass"
    )
    assert hint.strip().endswith(f"--limit {node.name}`")


def test_a_wrong_password_is_refused_and_not_shown(node: TestNode, tmp_path: Path) -> None:
    wrong = "not-the-password-4410"
    args = ("bootstrap", "--phase", "host", "-i", str(node.inventory), "-o", "json")
    run_ = gpuctl(tmp_path / "tmp", *args, password=wrong)
    assert run_.code == 1
    (failed,) = run_.report()["failed_tasks"]
    assert failed["message"] == "Task failed: Incorrect sudo password"
    assert failed["hint"].startswith(f"sudo on {node.name} refused the password")
    assert wrong not in run_.stdout + run_.stderr


def test_with_the_password_bootstrap_prepares_the_node(node: TestNode, bootstrapped: Run) -> None:
    report = bootstrapped.report()
    assert bootstrapped.code == 0, report
    assert report["ok"] is True
    assert report["hosts"][0]["changed"] > 0
    code, out, _ = node_exec(node, ["nvidia-smi", "-L"])
    assert code == 0
    assert len(out.splitlines()) == 2


def test_the_rerun_changes_nothing(verbose_rerun: Run) -> None:
    assert verbose_rerun.code == 0, verbose_rerun.stdout + verbose_rerun.stderr
    assert "1 of 1 host(s) prepared, 0 change(s)" in verbose_rerun.stdout


def test_the_password_is_written_nowhere(node: TestNode, bootstrapped: Run, verbose_rerun: Run) -> None:
    for run_ in (bootstrapped, verbose_rerun):
        assert SECRET not in run_.stdout + run_.stderr
        artifacts = [
            line.split()[-1] for line in (run_.stdout + run_.stderr).splitlines() if ") kept in " in line
        ]
        assert len(artifacts) == 1, run_.stdout + run_.stderr
        kept = Path(artifacts[0].rstrip(";,"))
        assert kept.parent == run_.tmpdir / "gpuctl" / "artifacts"
        assert any(path.name == "stdout" for path in kept.rglob("*"))  # the grep below reads real files
        assert files_holding(run_.tmpdir, SECRET) == []  # the artifacts and whatever else the run left
    # Everything the runs wrote on the node: its overlay's upper layer, and its tmpfs /run and /tmp.
    assert files_holding(harness_dir(node.inventory) / "node-0" / "upper", SECRET) == []
    code, out, _ = node_exec(node, ["grep", "-rlaF", "--", SECRET, "/run", "/tmp"])
    assert (code, out) == (1, "")  # grep: no match


@pytest.mark.usefixtures("bootstrapped")
def test_ask_become_pass_prompts_on_the_terminal_without_echo(node: TestNode, tmp_path: Path) -> None:
    """-K: the prompt on a real terminal (a pty), the answer typed there, not echoed, used by Ansible."""
    env = {k: v for k, v in os.environ.items() if k != "GPUCTL_BECOME_PASSWORD"} | {"TMPDIR": str(tmp_path)}
    args = ["-m", "gpuctl", "bootstrap", "--phase", "host", "-i", str(node.inventory), "-K"]
    terminal = pexpect.spawn(
        sys.executable, args, env=env, encoding="utf-8", timeout=300, dimensions=(50, 200)
    )
    terminal.expect("BECOME password")
    prompt = str(terminal.before) + str(terminal.after)
    terminal.sendline(SECRET)
    terminal.expect(pexpect.EOF)
    terminal.close()
    screen = prompt + str(terminal.before)
    assert terminal.exitstatus == 0, screen
    assert "1 of 1 host(s) prepared, 0 change(s)" in screen
    assert SECRET not in screen
    assert files_holding(tmp_path, SECRET) == []
