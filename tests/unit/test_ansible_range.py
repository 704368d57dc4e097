"""The ansible-core and prometheus_client ranges pyproject.toml declares are the ranges CI runs: this
suite runs on the highest (pip resolves .venv to them), and the roles', plugins' and metrics' tests
run again here on the lowest, in the virtualenv `.ci/install-ansible-lowest.sh` makes (the README's
test command runs it)."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

import ansible.release
import pytest

# Runs a real ansible-playbook on this machine: a run of its own beside the tiers (.ci/run-tests.sh).
pytestmark = [pytest.mark.playbook]
ROOT = Path(__file__).resolve().parents[2]
LOWEST_VENV = ROOT / ".venv-ansible-lowest"
# The tests that run ansible-playbook or load gpuctl's Ansible plugins (ansible-lint is not in the
# lowest venv: it lints with the highest, which is what matters for style).
ROLE_TESTS = (
    "tests/unit/test_playbooks_render.py",
    "tests/unit/test_corpus_hosts.py",
    "tests/unit/test_runner_environment.py",
    "tests/hosts/test_playbooks.py",
)


def _declared(package: str = "ansible-core") -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(lowest allowed, first excluded) of the package's requirement."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        dependencies = tomllib.load(handle)["project"]["dependencies"]
    spec = next(dep for dep in dependencies if dep.startswith(package))
    lowest = re.search(r">=\s*([0-9.]+)", spec)
    below = re.search(r"<\s*([0-9.]+)", spec)
    assert lowest, f"{package} needs a lower bound: {spec}"
    assert below, f"{package} needs an upper bound (a range nobody ran is no promise): {spec}"
    return _version(lowest.group(1)), _version(below.group(1))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def test_this_suite_runs_an_ansible_core_inside_the_declared_range() -> None:
    lowest, below = _declared()
    assert lowest <= _version(ansible.release.__version__) < below


def test_the_roles_and_plugins_pass_on_the_lowest_declared_ansible_core() -> None:
    _passes_on_the_lowest("ansible-core", "-k", "not lint", *ROLE_TESTS)


def test_the_metrics_pass_on_the_lowest_declared_prometheus_client() -> None:
    _passes_on_the_lowest("prometheus_client", "tests/unit/test_metrics.py")


def _passes_on_the_lowest(package: str, *pytest_args: str) -> None:
    """`pytest_args` pass in the lowest venv, which holds the lowest declared `package`."""
    python = LOWEST_VENV / "bin" / "python"
    if not python.exists():
        pytest.skip("no .venv-ansible-lowest: run `bash .ci/install-ansible-lowest.sh`")
    version = subprocess.run(
        [str(python), "-c", f"from importlib.metadata import version; print(version({package!r}))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert _version(version) == _declared(package)[0], f"{LOWEST_VENV} has {package} {version}"
    result = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
        cwd=ROOT,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert re.search(r"\d+ passed", result.stdout), result.stdout[-2000:]
