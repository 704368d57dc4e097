"""kubectl habits: -n/--namespace, -o wide|yaml, global flags on either side of the subcommand,
shell completion, -V."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
import yaml

from tests.polling import wait_until


def _cluster(sim: Any) -> Any:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8}],
        }
    )
    wait_until(lambda: set(cluster.allocatable_gpus().values()) == {8}, "GPUs advertised")
    return cluster


def test_output_yaml_is_the_json_document(sim: Any, cli: Any) -> None:
    cluster = _cluster(sim)
    as_json = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    as_yaml = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "yaml"])
    assert as_yaml.exit_code == 0, as_yaml.output
    assert yaml.safe_load(as_yaml.stdout) == json.loads(as_json.stdout)
    verified = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "yaml", "--no-pods"])
    assert yaml.safe_load(verified.stdout)["schema"] == "gpuctl.verify/v1"


def test_output_wide_adds_columns_and_every_problem(sim: Any, cli: Any) -> None:
    cluster = _cluster(sim)
    args = ["verify", "--kubeconfig", str(cluster.kubeconfig), "--expect-gpus", "4", "--no-pods"]
    table = cli([*args, "-o", "table"])
    wide = cli([*args, "-o", "wide"])
    assert wide.exit_code == table.exit_code == 1
    assert "SHARING" in wide.stdout
    assert "SHARING" not in table.stdout
    assert "PROBLEMS + HINTS" in wide.stdout
    for command in ("status", "taint-gpu-nodes"):
        extra = ["--dry-run"] if command == "taint-gpu-nodes" else []
        result = cli([command, "--kubeconfig", str(cluster.kubeconfig), *extra, "-o", "wide"])
        assert result.exit_code == 0, result.output
        assert "gpu-0" in result.stdout


def test_namespace_short_flag(sim: Any, cli: Any) -> None:
    cluster = _cluster(sim)
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-n", "short-ns", "-o", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["namespace"] == "short-ns"
    rendered = cli(["render", "-n", "plugins"])
    assert rendered.exit_code == 0, rendered.output
    assert 'namespace: "plugins"' in rendered.stdout


def test_global_flags_on_either_side_of_the_subcommand(
    sim: Any, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --debug and --no-color set these in the process's environment: undone after this test
    monkeypatch.setenv("GPUCTL_DEBUG", "0")
    monkeypatch.setenv("NO_COLOR", "")
    cluster = _cluster(sim)
    before = cli(["--kubeconfig", str(cluster.kubeconfig), "status", "-o", "json"])
    assert before.exit_code == 0, before.output
    after = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "--no-color", "--debug", "-o", "json"])
    assert after.exit_code == 0, after.output
    assert json.loads(after.stdout) == json.loads(before.stdout)
    context = cli([f"--kubeconfig={cluster.kubeconfig}", "--context", "nope", "status"])
    assert context.exit_code == 2
    assert "nope" in context.stderr


def test_version_short_flag(cli: Any) -> None:
    long, short = cli(["--version"]), cli(["-V"])
    assert short.exit_code == 0
    assert short.stdout == long.stdout
    assert short.stdout.startswith("gpuctl ")


def test_arguments_after_double_dash_are_not_reordered() -> None:
    from gpuctl.cli.argv import reorder

    args = ["bootstrap", "-i", "hosts.yml", "--", "--debug", "--context", "x"]
    assert reorder(args) == args
    assert reorder(["--context", "c", "sim", "up", "--debug"]) == ["--debug", "sim", "up", "--context", "c"]


def test_completion_scripts_and_completions() -> None:
    gpuctl = [sys.executable, "-m", "gpuctl"]
    for shell in ("bash", "zsh", "fish"):
        script = subprocess.run([*gpuctl, "completion", shell], capture_output=True, text=True, check=True)
        assert "_GPUCTL_COMPLETE" in script.stdout, shell
    bad = subprocess.run([*gpuctl, "completion", "tcsh"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    env = {
        **os.environ,
        "_GPUCTL_COMPLETE": "complete_bash",
        "COMP_WORDS": "gpuctl verify --keep",
        "COMP_CWORD": "2",
    }
    words = subprocess.run(gpuctl, capture_output=True, text=True, check=True, env=env).stdout.split()
    assert words == ["--keep-pods"]
    env |= {"COMP_WORDS": "gpuctl ver", "COMP_CWORD": "1"}
    assert subprocess.run(gpuctl, capture_output=True, text=True, check=True, env=env).stdout.split() == [
        "verify",
        "version",
    ]
