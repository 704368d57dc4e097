"""-n/--namespace is context, as in kubectl: every command of gpuctl takes it, before or after the
subcommand (gpuctl/cli/argv.py). Where the command has nothing namespaced it changes nothing: the
run with `-n x` ends exactly as the run without (same exit code, same output), never refused.

The commands are walked from the Typer app itself, so a new command without a row here fails."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from gpuctl.cli.main import app

SCENARIO = {"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "gpu-0", "gpus": 1}]}
# A cheap run of each command ({kc}: the sim's kubeconfig, {dir}: a folder of the test's): some
# end in an error of their own (a missing file), which `-n x` must leave exactly as it is.
RUNS = {
    "bootstrap": "bootstrap --phase verify --check --kubeconfig {kc}",
    "verify": "verify --no-pods --kubeconfig {kc}",
    "taint-gpu-nodes": "taint-gpu-nodes --dry-run --kubeconfig {kc}",
    "preflight": "preflight -i {dir}/missing.yml",
    "status": "status --kubeconfig {kc}",
    "render": "render",
    "demo": "demo --scenario {dir}/missing.yml",
    "explain": "explain node/gpu-0 --kubeconfig {kc}",
    "completion": "completion bash",
    "version": "version",
    "sim up": "sim up --scenario {dir}/missing.yml --kubeconfig {dir}/sim.kubeconfig --detach",
    "sim down": "sim down --kubeconfig {dir}/missing.kubeconfig",
}
# Commands with something namespaced, where -n is used, not ignored (verify's pods, explain's pod:
# not reached by the runs above, which create no pod and explain a node).
USED = {"render"}


def _commands() -> list[str]:
    found: list[str] = []

    def walk(command: Any, path: list[str]) -> None:
        for name, sub in getattr(command, "commands", {}).items():
            if getattr(sub, "commands", None) is None:
                found.append(" ".join([*path, name]))
            else:
                walk(sub, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_command_has_a_run() -> None:
    assert sorted(RUNS) == sorted(_commands())


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from gpuctl.sim.scenario import parse_scenario
    from gpuctl.sim.server.http_server import SimServer

    server = SimServer(parse_scenario(SCENARIO, "scenario")).start()
    yield server.write_kubeconfig(tmp_path_factory.mktemp("sim") / "sim.kubeconfig")
    server.stop()


@pytest.mark.parametrize("command", sorted(RUNS))
@pytest.mark.parametrize("where", ["after", "before", "long"])
def test_n_is_context_that_changes_nothing_where_nothing_is_namespaced(
    cli: Any, kubeconfig: Path, tmp_path: Path, command: str, where: str
) -> None:
    argv = shlex.split(RUNS[command].format(kc=kubeconfig, dir=tmp_path))
    plain = cli(*argv)
    words = len(command.split())
    with_n = {
        "after": [*argv, "-n", "x"],
        "before": ["-n", "x", *argv],
        "long": [*argv[:words], "--namespace=x", *argv[words:]],
    }[where]
    result = cli(*with_n)
    if command in USED:  # taken, and used: render's device plugin manifests go into it
        assert result.exit_code == 0, result.stderr
        assert 'namespace: "x"' in result.stdout
        return
    assert "namespace" not in result.stderr.lower().replace(str(tmp_path), "")
    assert "-n" not in result.stderr.split()
    assert (result.exit_code, _same(result.stdout)) == (plain.exit_code, _same(plain.stdout)), result.stderr
    assert _same(result.stderr) == _same(plain.stderr)


def _same(text: str) -> str:
    """Output with what differs from one run to the next (times, pod names) left out."""
    return "\n".join(line for line in text.splitlines() if not any(ch.isdigit() for ch in line))
