"""The gpuctl_facts action's script (playbooks/roles/gpuctl_probe/files/host_facts.py) on real release
files (tests/corpus/os-release.yaml), and the command the action runs, run here by a real shell."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests import module_file

REPO = Path(__file__).resolve().parents[2]
ROLE = REPO / "playbooks" / "roles" / "gpuctl_probe"
RELEASES = yaml.safe_load((REPO / "tests" / "corpus" / "os-release.yaml").read_text(encoding="utf-8"))
HOST_FACTS = module_file.load(ROLE / "files" / "host_facts.py")
ACTION = module_file.load(ROLE / "action_plugins" / "gpuctl_facts.py")


@pytest.mark.parametrize("release", RELEASES, ids=[release["id"] for release in RELEASES])
def test_distribution_facts_are_ansibles(release: dict[str, Any]) -> None:
    files: dict[str, str] = release["files"]
    assert HOST_FACTS.distribution(lambda path: files.get(path, "")) == release["expect"]


def test_a_debian_point_release_comes_from_debian_version() -> None:
    files = {"/etc/os-release": RELEASES[0]["files"]["/etc/os-release"], "/etc/debian_version": "10.13\n"}
    facts = HOST_FACTS.distribution(lambda path: files.get(path, ""))
    assert (facts["distribution_version"], facts["distribution_major_version"]) == ("10.13", "10")


def test_an_unknown_system_keeps_its_name_and_no_family() -> None:
    files = {"/etc/os-release": 'NAME="Arch Linux"\nID=arch\n'}
    facts = HOST_FACTS.distribution(lambda path: files.get(path, ""))
    assert facts == {
        "distribution": "Arch",
        "distribution_version": "NA",
        "distribution_major_version": "NA",
        "distribution_release": "NA",
        "os_family": "Arch",
    }


@pytest.mark.parametrize("interpreter", ["auto", "auto_silent", sys.executable])
def test_the_command_prints_the_facts_as_setup_names_them(interpreter: str) -> None:
    command = ACTION.facts_command(interpreter)
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert sorted(facts) == sorted(f"ansible_{name}" for name in (
        "distribution", "distribution_version", "distribution_major_version", "distribution_release",
        "os_family", "kernel", "architecture", "python", "service_mgr"))  # fmt: skip
    assert facts["ansible_kernel"] == os.uname().release
    if interpreter == sys.executable:
        assert facts["ansible_python"]["executable"] == sys.executable


def test_a_host_without_python_gets_a_message_and_exit_127() -> None:
    command = ACTION.facts_command("auto")
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True,
                          env={"PATH": "/nonexistent"}, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 127
    assert done.stderr == "no Python interpreter found (python3, /usr/libexec/platform-python, python)\n"


def _ad_hoc(*args: str) -> subprocess.CompletedProcess[str]:
    """The action run by Ansible itself, on this machine (connection local)."""
    env = {**os.environ, "ANSIBLE_ACTION_PLUGINS": str(ROLE / "action_plugins"), "ANSIBLE_NOCOLOR": "1"}
    ansible = Path(sys.executable).with_name("ansible")
    argv = [str(ansible), "localhost", "-c", "local", "-m", "gpuctl_facts", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)


def test_ansible_runs_the_action_with_the_interpreter_templated() -> None:
    done = _ad_hoc("-e", 'ansible_python_interpreter="{{ \\"/usr/bin/python3\\" }}"')
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("localhost | SUCCESS => ")
    result = json.loads(done.stdout.split(" => ", 1)[1])
    assert result["changed"] is False
    assert result["ansible_facts"]["ansible_python"]["executable"] == "/usr/bin/python3"


def test_an_interpreter_the_host_lacks_fails_with_the_shells_words() -> None:
    done = _ad_hoc("-e", "ansible_python_interpreter=/nonexistent/python3")
    assert done.returncode != 0
    result = json.loads(done.stdout.split(" => ", 1)[1])
    assert result["msg"].startswith("reading facts failed (exit 127): ")  # the shell's own line after it
    assert result["msg"].endswith("/nonexistent/python3: not found")
