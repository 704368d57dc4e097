"""The table of which flag applies where (gpuctl/cli/flag_rules.py): it names real parameters and
real values of the commands it guards, it refuses through the real entry point, and it lets every
combination that does have an effect through."""

from __future__ import annotations

import shlex
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import pytest

from gpuctl.cli import bootstrap, render, taint, verify
from gpuctl.cli.flag_rules import EVERYWHERE, VALUE_RULES, Rule, ValueRule, rules

COMMANDS: dict[str, Callable[..., None]] = {
    "render": render.command,
    "bootstrap": bootstrap.command,
    "verify": verify.command,
    "taint-gpu-nodes": taint.command,
}


def _parameter_types(command: str) -> dict[str, Any]:
    hints = typing.get_type_hints(COMMANDS[command], include_extras=True)
    return {name: typing.get_args(hint)[0] for name, hint in hints.items() if name != "return"}


def _choices(annotation: Any) -> set[object]:
    """The values a parameter can take, where they are few: an enum's, a flag's."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return {member.value for member in annotation}
    if annotation is bool:
        return {True, False}
    return set()


def test_every_rule_names_parameters_and_values_its_commands_have() -> None:
    """A misspelt parameter or value would turn a rule off without a sound: none is."""
    every: list[Rule | ValueRule] = [*rules(), *VALUE_RULES]
    for rule in every:
        for command in rule.commands:
            assert rule.parameter in _parameter_types(command), (command, rule.parameter)
    for rule in rules():
        types = {name: kind for command in rule.commands for name, kind in _parameter_types(command).items()}
        for when in rule.where:
            assert when.parameter in types, (rule.parameter, when.parameter)
            choices = _choices(types[when.parameter])
            assert set(when.values or ()) <= choices or not choices, (rule.parameter, when)


def test_every_bootstrap_option_says_where_it_applies() -> None:
    """Complete by construction: each parameter of the Typer command itself either applies in
    every phase and stack (EVERYWHERE, with why) or has rules, never both, so a new flag without a
    rule fails here rather than being silently ignored by a phase that does not use it."""
    import typer

    from gpuctl.cli.main import app

    group: Any = typer.main.get_command(app)
    parameters = [parameter.name for parameter in group.commands["bootstrap"].params]
    ruled = {rule.parameter for rule in rules() if "bootstrap" in rule.commands}
    unaccounted = [name for name in parameters if name not in ruled and name not in EVERYWHERE["bootstrap"]]
    assert unaccounted == []
    assert ruled & set(EVERYWHERE["bootstrap"]) == set()
    assert set(EVERYWHERE["bootstrap"]) <= set(parameters)


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        ("--phase cluster --max-unavailable 2", "--max-unavailable 2"),
        ("--phase verify --drain-timeout 60", "--drain-timeout 60"),
        ("--phase cluster --force-drain", "--force-drain"),
        ("--phase host -i hosts.yml --max-unavailable 2", "--max-unavailable"),
        ("--phase host -i hosts.yml --force-drain", "--force-drain"),
        ("--phase host -i hosts.yml --level cuda", "--level cuda"),
    ],
)
def test_node_by_node_flags_are_refused_where_no_node_is_upgraded(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: str, flag: str
) -> None:
    """Without the host phase, or with no kubeconfig to reach a cluster, no node is drained."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    result = cli("bootstrap", *shlex.split(args))
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"error: {flag}"), first
    assert "does not apply" in first or "has no effect" in first


@pytest.mark.parametrize(
    "args",
    [
        "--phase host -i NONE --kubeconfig NONE --max-unavailable 2 --drain-timeout 60 --force-drain "
        "--level cuda --cuda-image x/cuda:1",
        "--phase all -i NONE --kubeconfig NONE --max-unavailable 2 --force-drain --level nccl --min-busbw 9",
        "--phase host -i NONE --max-unavailable 3",  # the kubeconfig found as kubectl finds it
    ],
)
def test_node_by_node_flags_get_past_the_table_where_nodes_are_upgraded(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: str
) -> None:
    missing = str(tmp_path / "missing")
    found = tmp_path / "found.kubeconfig"
    found.write_text("apiVersion: v1\nkind: Config\n", encoding="utf-8")
    monkeypatch.setenv("KUBECONFIG", str(found))
    result = cli("bootstrap", *(missing if arg == "NONE" else arg for arg in shlex.split(args)))
    first = result.stderr.splitlines()[0]
    assert result.exit_code == 2, result.output
    assert "does not apply" not in first
    assert "has no effect" not in first


@pytest.mark.parametrize(
    "args",
    [
        "--stack operator --chart-version v25.3.0 --distribution k3s --operator-driver --no-operator-toolkit "
        "--sharing mps --replicas 4 --mig-strategy single --taint-key gpu.example.com/x "
        "--node-selector pool=gpu",
        "--gpu-operator --stack operator --chart-version v25.3.0",
        "--gpu-operator --distribution rke2",
        "--stack dra --chart-version 25.8.0 --taint-effect NoExecute --node-selector a.b/c=",
        "--stack device-plugin -n nvidia --runtime-class nvidia-cdi --sharing time-slicing --replicas 8 "
        f"--mig-strategy mixed --image registry.example:5000/nvidia/k8s-device-plugin@sha256:{'0' * 64}",
        "--rbac --rbac-subject Group:system:masters --verify-namespace gpu-proof --log-namespace nvidia",
        "--verify-cronjob --gpuctl-image x/gpuctl:1 --verify-schedule '0 6-18/2 * jan-jun mon-fri'",
        "--verify-cronjob --gpuctl-image localhost:5000/gpuctl:0.1_rc1 --verify-schedule '@every 1h30m'",
    ],
)
def test_render_takes_every_flag_where_it_applies(cli: Any, args: str) -> None:
    result = cli("render", *shlex.split(args))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("---\n")


@pytest.mark.parametrize(
    ("args", "culprit"),
    [
        (
            "bootstrap --phase cluster --stack operator --helm NONE --chart c --chart-version v1 "
            "--distribution k3s --operator-driver --sharing mps --replicas 4 --mig-strategy single "
            "--no-taint --force-conflicts --timeout 5 -i NONE --limit gpu-0",
            "--helm",
        ),
        (
            "bootstrap --phase all -i NONE --stack dra --tags driver --keep-artifacts --pass-env AWS_PROFILE "
            "--reboot --timeout 5 --helm NONE -- -v",
            "--helm",
        ),
        ("bootstrap --phase verify --stack dra --check --timeout 5 --kubeconfig NONE", "NONE"),
        ("verify --watch --interval 60 -o json --kubeconfig NONE", "NONE"),
        ("verify --no-pods --timeout 5 --runtime-class nvidia --kubeconfig NONE", "NONE"),
        ("taint-gpu-nodes --effect NoExecute --yes --dry-run --kubeconfig NONE", "NONE"),
        ("taint-gpu-nodes --remove --key k --effect NoExecute --kubeconfig NONE", "NONE"),
    ],
)
def test_flags_where_they_apply_get_past_the_table(cli: Any, tmp_path: Path, args: str, culprit: str) -> None:
    """These fail later (on NONE: a missing helm or kubeconfig), never on a flag that applies."""
    missing = str(tmp_path / "missing")
    result = cli(*(missing if arg == "NONE" else arg for arg in shlex.split(args)))
    first = result.stderr.splitlines()[0]
    assert result.exit_code == 2, result.output
    assert "does not apply" not in first
    assert "has no effect" not in first
    assert (missing if culprit == "NONE" else culprit) in first


def test_a_typed_value_counts_even_when_it_is_the_default(cli: Any) -> None:
    """The table asks where a value came from: a default never trips it, a typed one does."""
    assert cli("render", "--sharing", "none").exit_code == 0
    refused = cli("render", "--stack", "dra", "--sharing", "none")
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: --sharing none does not apply to --stack dra (DRA shares")
    assert refused.stderr.splitlines()[1] == (
        "hint: e.g. `gpuctl render --stack operator --sharing none`, or drop --sharing"
    )
