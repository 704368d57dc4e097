"""Commands printed in hints are pasted into a shell: a path or name with a space, `;` or `$(...)`
must reach the command as the one word it is, and never run as shell syntax (issue 34)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuctl.shell import command_line

# A folder name that runs `touch injected` when a command naming it is pasted unquoted.
HOSTILE = "ops team;touch injected;$(touch injected) x"
KUBECONFIG_WITHOUT_CURRENT_CONTEXT = (
    "apiVersion: v1\nkind: Config\n"
    "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
    "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\n"
)
INVENTORY_WITH_TEXT_PORT = (
    "all:\n  children:\n    gpu_nodes:\n      hosts:\n"
    "        n1: {ansible_host: 127.0.0.1, ansible_port: ssh}\n"
)


@pytest.mark.parametrize(
    ("words", "line"),
    [
        (("gpuctl", "preflight", "-i", "/a b/hosts.yml"), "gpuctl preflight -i '/a b/hosts.yml'"),
        (("kubectl", "-n", "gpuctl", "logs", "pod-1"), "kubectl -n gpuctl logs pod-1"),
        (("kubectl", "get", "resourceslices", "--field-selector", "spec.nodeName=gpu-0.example"), None),
        (("echo", "a;b", "$(id)", "it's", ""), "echo 'a;b' '$(id)' 'it'\"'\"'s' ''"),
    ],
)
def test_command_line_quotes_only_what_the_shell_would_split(
    words: tuple[str, ...], line: str | None
) -> None:
    rendered = command_line(*words)
    assert rendered == (line if line is not None else " ".join(words))
    assert shlex.split(rendered) == list(words)


def test_command_line_takes_paths_and_numbers(tmp_path: Path) -> None:
    folder = tmp_path / HOSTILE
    assert shlex.split(command_line("ls", folder, "-w", 80)) == ["ls", str(folder), "-w", "80"]


def _hint(stderr: str) -> str:
    hints = [line.removeprefix("hint: ") for line in stderr.splitlines() if line.startswith("hint: ")]
    assert len(hints) == 1, stderr
    return hints[0]


def _commands(hint: str) -> list[str]:
    """The commands a hint gives, as a reader copies them: the text between backticks."""
    commands = re.findall(r"`([^`]+)`", hint)
    assert commands, hint
    return commands


def _paste(command: str, cwd: Path) -> list[str]:
    """Run `command` in a real shell, as a user pasting it would, with the program it names replaced
    by one that prints KUBECONFIG and its arguments, a line each."""
    bin_dir = cwd / "bin"
    bin_dir.mkdir(exist_ok=True)
    for program in ("gpuctl", "kubectl", "ansible-inventory"):
        stand_in = bin_dir / program
        stand_in.write_text('#!/bin/sh\nprintf "%s\\n" "KUBECONFIG=${KUBECONFIG-}" "$@"\n', encoding="utf-8")
        stand_in.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    shell = subprocess.run(
        ["/bin/sh", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    assert not (cwd / "injected").exists(), f"pasting {command!r} ran shell syntax from a path"
    return shell.stdout.splitlines()


@pytest.fixture
def hostile_dir(tmp_path: Path) -> Path:
    folder = tmp_path / HOSTILE
    folder.mkdir()
    return folder


def test_inventory_hint_names_the_inventory_as_one_word(
    cli: Callable[..., Any], hostile_dir: Path, tmp_path: Path
) -> None:
    inventory = hostile_dir / "hosts.yml"
    inventory.write_text(INVENTORY_WITH_TEXT_PORT, encoding="utf-8")
    result = cli("preflight", "--inventory", inventory)
    assert result.exit_code == 2, result.output
    (command,) = _commands(_hint(result.stderr))
    assert shlex.split(command) == ["gpuctl", "preflight", "--inventory", str(inventory)]
    assert _paste(command, tmp_path) == ["KUBECONFIG=", "preflight", "--inventory", str(inventory)]


def test_empty_gpu_group_hint_lists_the_hosts_of_that_inventory(
    cli: Callable[..., Any], hostile_dir: Path, tmp_path: Path
) -> None:
    inventory = hostile_dir / "hosts.ini"
    inventory.write_text("[gpu_nodes]\n[other]\nx\n", encoding="utf-8")
    result = cli("preflight", "--inventory", inventory)
    assert result.exit_code == 2, result.output
    (command,) = _commands(_hint(result.stderr))
    assert shlex.split(command) == ["ansible-inventory", "-i", str(inventory), "--graph"]
    assert _paste(command, tmp_path) == ["KUBECONFIG=", "-i", str(inventory), "--graph"]


def test_context_hint_lists_the_contexts_of_that_kubeconfig(
    cli: Callable[..., Any], hostile_dir: Path, tmp_path: Path
) -> None:
    kubeconfig = hostile_dir / "kube config"
    kubeconfig.write_text(KUBECONFIG_WITHOUT_CURRENT_CONTEXT, encoding="utf-8")
    result = cli("status", "--kubeconfig", kubeconfig)
    assert result.exit_code == 2, result.output
    (command,) = _commands(_hint(result.stderr))
    assert shlex.split(command) == ["kubectl", "config", "get-contexts", "--kubeconfig", str(kubeconfig)]
    assert _paste(command, tmp_path) == [
        "KUBECONFIG=",
        "config",
        "get-contexts",
        "--kubeconfig",
        str(kubeconfig),
    ]


def test_context_hint_over_several_kubeconfigs_merges_them_as_kubectl_does(
    cli: Callable[..., Any], hostile_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = hostile_dir / "a config", hostile_dir / "b config"
    for kubeconfig in (first, second):
        kubeconfig.write_text(KUBECONFIG_WITHOUT_CURRENT_CONTEXT, encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", f"{first}{os.pathsep}{second}")
    result = cli("status")
    assert result.exit_code == 2, result.output
    (command,) = _commands(_hint(result.stderr))
    merged = f"KUBECONFIG={first}{os.pathsep}{second}"
    assert _paste(command, tmp_path) == [merged, "config", "get-contexts"]


def test_directory_hint_names_a_file_inside_it(cli: Callable[..., Any], hostile_dir: Path) -> None:
    result = cli("status", "--kubeconfig", hostile_dir)
    assert result.exit_code == 2, result.output
    example = _hint(result.stderr).split("e.g. ", 1)[1]
    assert shlex.split(example) == ["--kubeconfig", str(hostile_dir / "config")]


def test_resume_command_keeps_the_inventory_one_word(hostile_dir: Path) -> None:
    from gpuctl.core.bootstrap import BootstrapRequest, BootstrapRun, PhaseOutcome

    inventory = hostile_dir / "hosts.yml"
    failed_cluster = (PhaseOutcome("host", True, 1.0), PhaseOutcome("cluster", False, 1.0))
    run = BootstrapRun(BootstrapRequest(phase="all", inventory=inventory), failed_cluster)
    commands = [shlex.split(command) for command in run.resume_command.split(" && ")]
    assert commands == [
        ["gpuctl", "bootstrap", "--phase", phase, "-i", str(inventory)] for phase in ("cluster", "verify")
    ]


def test_diagnosis_hints_quote_the_node_they_name() -> None:
    from gpuctl.diagnose import diagnose

    node = "gpu 0;reboot"
    found = diagnose("could not load NVML library: libnvidia-ml.so.1", "plugin-log", node=node)
    assert found is not None
    restart = next(command for command in _commands(found.hint) if command.startswith("kubectl"))
    assert shlex.split(restart)[-2:] == ["--field-selector", f"spec.nodeName={node}"]
