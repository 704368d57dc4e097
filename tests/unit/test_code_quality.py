"""The project's own standards, enforced by the test command: ruff and mypy (strict) are clean."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The Python that runs on the controller: gpuctl, its tests and benchmarks, and the Ansible plugins
# beside the playbooks (the scripts under a role's files/ run on the hosts, on their Python).
PYTHON_PATHS = [
    "gpuctl",
    "tests",
    "bench",
    "playbooks/callback_plugins",
    "playbooks/roles/gpuctl_probe/action_plugins",
]


def _tool(name: str) -> str:
    beside_python = Path(sys.executable).with_name(name)
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def test_ruff_check_is_clean() -> None:
    result = subprocess.run(
        [_tool("ruff"), "check", *PYTHON_PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    result = subprocess.run(
        [_tool("ruff"), "format", "--check", *PYTHON_PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_is_clean() -> None:
    result = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_help_lists_every_command_without_heavy_imports() -> None:
    code = (
        "import sys; from gpuctl.cli.main import run; rc = run(['--help']);"
        "heavy = [m for m in ('kubernetes', 'ansible_runner', 'paramiko', 'ansible') if m in sys.modules];"
        "print('HEAVY', heavy)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    for command in ("bootstrap", "verify", "taint-gpu-nodes", "preflight", "status", "render", "sim", "demo"):
        assert command in result.stdout
    assert "HEAVY []" in result.stdout
