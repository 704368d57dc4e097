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
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuctl.errors import ConfigError
from gpuctl.hosts.private_data import kept_artifacts_root, make_private_dirs
from gpuctl.hosts.runner import RunOutcome, RunRequest, run_playbook

# Runs a real ansible-playbook on this machine: a run of its own beside the tiers (.ci/run-tests.sh).
pytestmark = [pytest.mark.playbook]
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


def printing(names: Iterable[str]) -> list[dict[str, Any]]:
    """PLAYBOOK, printing the variables `names`."""
    task = {"name": "Env | print the variables", "ansible.builtin.debug": {"msg": _env_message(names)}}
    return [{**PLAYBOOK[0], "tasks": [task]}]


def _env_message(names: Iterable[str]) -> str:
    return " ".join(f"{name}=[{{{{ lookup('env', '{name}') }}}}]" for name in names)


def project(tmp_path: Path, playbook_text: list[dict[str, Any]] = PLAYBOOK) -> tuple[Path, Path]:
    playbook = tmp_path / "project" / "env.yml"
    playbook.parent.mkdir()
    playbook.write_text(yaml.safe_dump(playbook_text))
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


# Secrets the allow-list passes: Ansible's own configuration, and variables passed on purpose.
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAsentinelkey0f3a\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
EXTRA_PASSWORD = "sentinel-extra-vars-77ab"  # given as `-- -e ansible_become_password=...`
PASSED_SECRETS = {
    "ANSIBLE_BECOME_PASS": "sentinel-become-8c1d",
    "ANSIBLE_VAULT_PASSWORD": "sentinel-vault-pw-6b2e",
    "DEPLOY_TOKEN": "sentinel-deploy-2e7a",
    "REGISTRY_SECRET": "sentinel-registry-51f0",
    "KEY_PASSPHRASE": "sentinel-phrase-a3b9",
    "HOST_SSH_KEY": PRIVATE_KEY,
}


def test_kept_artifacts_hold_no_secret_the_allow_list_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("ANSIBLE_BECOME_ASK_PASS", "False")  # a flag named like a secret
    for name, value in PASSED_SECRETS.items():
        monkeypatch.setenv(name, value)
    playbook, inventory = project(tmp_path, printing(PASSED_SECRETS))
    events: list[Mapping[str, Any]] = []
    passed = tuple(name for name in PASSED_SECRETS if not name.startswith("ANSIBLE_"))
    extra = ("-e", f"gpuctl_unused=1 ansible_become_password={EXTRA_PASSWORD}")
    request = RunRequest(
        playbook=playbook, inventory=inventory, keep_artifacts=True, passed_env=passed, extra_args=extra
    )
    outcome = run_playbook(request, on_event=events.append, cancel=threading.Event())
    assert (outcome.status, outcome.rc) == ("successful", 0), events[-3:]

    message = printed(events)  # ansible-playbook got every one of them
    for name, value in PASSED_SECRETS.items():
        assert f"{name}=[{value}]" in message, name
    assert outcome.artifacts_dir is not None
    kept = outcome.artifacts_dir
    assert files_holding(kept, "PRIVATE KEY") == []
    assert files_holding(kept, "sentinelkey0f3a") == []
    for value in (*PASSED_SECRETS.values(), EXTRA_PASSWORD):
        assert files_holding(kept, value) == []
    (command,) = kept.rglob("artifacts/*/command")
    environment = json.loads(command.read_text())["env"]
    assert {environment[name] for name in PASSED_SECRETS if name != "HOST_SSH_KEY"} == {"[redacted]"}
    assert environment["HOST_SSH_KEY"] == "[redacted]\n"  # the key's block, whatever its name
    assert environment["ANSIBLE_BECOME_ASK_PASS"] == "[redacted]"
    assert files_holding(kept, "Env | print the variables")  # the record is kept, only redacted
    assert "gpuctl_unused=1 ansible_become_password=[redacted]" in " ".join(
        json.loads(command.read_text())["command"]
    )


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
