"""`gpuctl bootstrap -K` with no terminal to ask on (CI, a pipe, a cron job): exit 2 naming the
environment variable to set instead, no GetPassWarning and no "Aborted!" from getpass, nothing
started. The process runs in a session of its own, so it has no controlling terminal either, as
under CI; the password in the environment is taken instead of a prompt nobody could answer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# Port 1: nothing listens there, so the host is unreachable, whatever runs on this machine.
HOSTS = "[gpu_nodes]\nn1 ansible_host=127.0.0.1 ansible_port=1\n"


def _bootstrap(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    inventory = tmp_path / "hosts.ini"
    inventory.write_text(HOSTS)
    argv = ["bootstrap", "--phase", "host", "-i", str(inventory), "-K", "--check"]
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
        env={**os.environ, **env},
        check=False,
    )


def test_ask_become_pass_without_a_terminal_names_the_variable(tmp_path: Path) -> None:
    env = {name: value for name, value in os.environ.items() if name != "GPUCTL_BECOME_PASSWORD"}
    os.environ.pop("GPUCTL_BECOME_PASSWORD", None)
    result = _bootstrap(tmp_path, env)
    assert result.returncode == 2, result.stderr
    error, hint = result.stderr.splitlines()
    assert error.startswith("error: --ask-become-pass: standard input is not a terminal")
    assert hint.startswith("hint: set GPUCTL_BECOME_PASSWORD instead of passing -K")
    assert "GetPassWarning" not in result.stderr


def test_ask_become_pass_without_a_terminal_takes_the_variable(tmp_path: Path) -> None:
    """With the variable set, -K does not stop the run: it goes on to the host (unreachable on
    port 1: exit 3), past the password, where getpass used to read /dev/null and abort (exit 1)."""
    result = _bootstrap(tmp_path, {"GPUCTL_BECOME_PASSWORD": "sentinel-sudo-5c1e"})
    assert result.returncode == 3, result.stdout + result.stderr
    assert "UNREACHABLE" in result.stdout
    assert "sentinel-sudo-5c1e" not in result.stdout + result.stderr
