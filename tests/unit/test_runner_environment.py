"""What a host run leaves on disk: gpuctl's ansible-runner driver runs a real ansible-playbook against
this machine (local connection) with secret-looking variables in gpuctl's environment; ansible-playbook
never sees them, so neither its output nor ansible-runner's kept record of the run holds them, and
kept artifacts sit 0700 under the user's own state directory."""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.errors import ConfigError
from gpuctl.hosts.private_data import kept_artifacts_root, make_private_dirs
from gpuctl.hosts.runner import RunOutcome, RunRequest, run_playbook

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "sentinel-aws-4b1f",
    "GITHUB_TOKEN": "sentinel-gh-93ce",
    "GPUCTL_BECOME_PASSWORD": "sentinel-sudo-77d0",
    "https_proxy": "http://user:sentinel-proxy-5a2e@proxy.invalid:3128",
    "ANSIBLE_GALAXY_TOKEN": "sentinel-galaxy-c0de",
}
PASSED = ("GPUCTL_TEST_PASSED", "passed-on-purpose-1e9a")
# The playbook prints what its environment holds of each variable.
PLAYBOOK = [
    {
        "name": "Env | what ansible-playbook sees",
        "hosts": "gpu_nodes",
        "gather_facts": False,
        "tasks": [
            {
                "name": "Env | print the variables",
                "ansible.builtin.debug": {
                    "msg": " ".join(
                        f"{name}=[{{{{ lookup('env', '{name}') }}}}]" for name in [*SECRETS, PASSED[0]]
                    )
                },
            }
        ],
    }
]


def project(tmp_path: Path) -> tuple[Path, Path]:
    playbook = tmp_path / "project" / "env.yml"
    playbook.parent.mkdir()
    playbook.write_text(yaml.safe_dump(PLAYBOOK))
    host = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {"controller": host}}}}})
    )
    return playbook, inventory


def run_with_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, keep: bool
) -> tuple[RunOutcome, list[Mapping[str, Any]]]:
    for name, value in (*SECRETS.items(), PASSED):
        monkeypatch.setenv(name, value)
    playbook, inventory = project(tmp_path)
    events: list[Mapping[str, Any]] = []
    request = RunRequest(playbook=playbook, inventory=inventory, keep_artifacts=keep, passed_env=(PASSED[0],))
    outcome = run_playbook(request, on_event=events.append, cancel=threading.Event())
    assert (outcome.status, outcome.rc) == ("successful", 0), events[-3:]
    return outcome, events


def printed(events: list[Mapping[str, Any]]) -> str:
    (message,) = [
        event["event_data"]["res"]["msg"]
        for event in events
        if event.get("event") == "runner_on_ok"
        and event["event_data"].get("task") == "Env | print the variables"
    ]
    return str(message)


def files_holding(folder: Path, secret: str) -> list[str]:
    return [
        str(path) for path in folder.rglob("*") if path.is_file() and secret.encode() in path.read_bytes()
    ]


def test_ansible_playbook_sees_only_what_it_needs_and_what_was_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, events = run_with_secrets(tmp_path, monkeypatch, keep=False)
    message = printed(events)
    for name in SECRETS:
        assert f"{name}=[]" in message, message
    assert f"{PASSED[0]}=[{PASSED[1]}]" in message


def test_kept_artifacts_hold_no_variable_that_was_not_passed_on_purpose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    outcome, _ = run_with_secrets(tmp_path, monkeypatch, keep=True)

    assert outcome.artifacts_dir is not None
    kept = outcome.artifacts_dir
    assert kept.parent == state / "gpuctl" / "artifacts"
    assert kept.name.startswith("bootstrap-")
    for folder in (kept, kept.parent, kept.parent.parent, state):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    (command,) = kept.rglob("artifacts/*/command")
    environment = json.loads(command.read_text())["env"]
    assert environment[PASSED[0]] == PASSED[1]  # the record is real, and holds what was passed
    assert environment["HOME"] == os.environ["HOME"]
    for secret in SECRETS.values():
        assert files_holding(kept, secret) == []
    assert not set(SECRETS) & set(environment)


def test_kept_artifacts_default_to_the_users_local_state(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert kept_artifacts_root() == isolated_home / ".local" / "state" / "gpuctl" / "artifacts"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # the XDG spec: ignored
    assert kept_artifacts_root() == isolated_home / ".local" / "state" / "gpuctl" / "artifacts"


def test_the_artifacts_directory_is_made_private_and_a_planted_link_refused(tmp_path: Path) -> None:
    opened = tmp_path / "open" / "artifacts"
    opened.mkdir(parents=True, mode=0o755)
    opened.chmod(0o755)
    make_private_dirs(opened)
    assert stat.S_IMODE(opened.stat().st_mode) == 0o700

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    planted = tmp_path / "planted" / "artifacts"
    planted.parent.mkdir()
    planted.symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="not a directory of this user"):
        make_private_dirs(planted)
