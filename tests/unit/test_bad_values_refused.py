"""Bad values are refused with one line naming the option or field (exit 2), never silently
accepted, ignored or replaced by a default."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["render", "--namespace", "Bad_NS"], "--namespace 'Bad_NS': not a valid Kubernetes name"),
        (["render", "--runtime-class", "NVIDIA"], "--runtime-class 'NVIDIA': not a valid Kubernetes name"),
        (["render", "--rbac", "--verify-namespace", "a.b"], "--verify-namespace 'a.b'"),
        (["render", "--replicas", "4"], "--replicas has no effect without --sharing"),
        (["render", "--sharing", "none", "--replicas", "4"], "--replicas 4 does not apply to --sharing none"),
        (["render", "--rbac-subject", "User:bob"], "--rbac-subject has no effect without --rbac"),
        (["render", "--image", ""], "--image '': empty"),
        (["verify", "--timeout", "inf"], "--timeout inf: must be a number of seconds from 1 to 86400"),
        (["verify", "--keep-pods", "--no-pods"], "--keep-pods does not apply to --no-pods"),
    ],
)
def test_flags_refused(cli: Callable[..., Any], args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: {message}")
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty scenario file"),
        ("# only a comment\n", "empty scenario file"),
        ("nodes:\n  - name: gpu-{i}\n    count: 1000000\n", "nodes[0].count: must be <= 10000"),
        (
            "nodes:\n  - {name: 'a-{i}', count: 6000}\n  - {name: 'b-{i}', count: 6000}\n",
            "more than 10000 nodes in all",
        ),
        ("forbidden: ['list node', 'frobnicate nodes']\nnodes: [{name: n}]\n", "verb 'frobnicate'"),
        ("forbidden: ['list Nodes']\nnodes: [{name: n}]\n", "resource 'Nodes' must be a lower-case plural"),
    ],
)
def test_scenario_values_refused(tmp_path: Path, content: str, message: str) -> None:
    from gpuctl.errors import ConfigError
    from gpuctl.sim.scenario import load_scenario

    path = tmp_path / "scenario.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")) as raised:
        load_scenario(path)
    assert str(path) in str(raised.value)


def test_weak_kubeconfig_messages_name_the_problem(
    cli: Callable[..., Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = cli("status", "--kubeconfig", tmp_path)
    assert folder.exit_code == 2
    assert f"--kubeconfig {tmp_path}: is a directory" in folder.stderr
    monkeypatch.setenv("KUBECONFIG", "::::")
    empty = cli("status")
    assert empty.exit_code == 2
    assert "KUBECONFIG='::::' names no file" in empty.stderr
    monkeypatch.delenv("KUBECONFIG")
    no_context = tmp_path / "kc"
    no_context.write_text(
        "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: x}}]\n"
    )
    missing = cli("status", "--kubeconfig", no_context)
    assert missing.exit_code == 2
    assert missing.stderr.startswith(f"error: {no_context}: no current-context set, and no --context given")
