"""`gpuctl bootstrap`."""

from __future__ import annotations

import functools
import os
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from gpuctl.cli.options import Limit, OptionalInventory, TableOrJson, TableOrJsonOutput
from gpuctl.errors import ConfigError, NotImplementedYet

if TYPE_CHECKING:
    from gpuctl.core.bootstrap import BootstrapResult

HELP = """\
Prepare the GPU hosts of an Ansible inventory (group gpu_nodes): NVIDIA driver, container
toolkit, container runtime configured for the nvidia runtime. `--phase host` runs the shipped
playbooks through ansible-runner with live per-host progress; a second run changes nothing.
Extra ansible-playbook arguments go after `--`. Become password: --ask-become-pass or
GPUCTL_BECOME_PASSWORD (never written to disk). `--phase cluster|verify|all`: not implemented yet.
Exit 0 all hosts prepared, 1 a host failed or was unreachable, 2 bad inventory or flag,
3 no host reachable, 130 interrupted.
"""

PASSWORD_ENV = "GPUCTL_BECOME_PASSWORD"


class Phase(str, Enum):
    host = "host"
    cluster = "cluster"
    verify = "verify"
    all = "all"


def command(
    *,
    phase: Annotated[
        Phase,
        typer.Option(
            "--phase", help="Which layer to prepare (required; host is implemented).", show_default=False
        ),
    ],
    inventory: OptionalInventory = None,
    check: Annotated[bool, typer.Option("--check", help="Dry run: Ansible check mode with diff.")] = False,
    limit: Limit = None,
    tags: Annotated[
        Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--tags", "-t", help="Only tasks with these tags (comma-separated).", show_default=False
        ),
    ] = None,
    output: TableOrJsonOutput = TableOrJson.table,
    keep_artifacts: Annotated[
        bool,
        typer.Option("--keep-artifacts", help="Keep ansible-runner's private data dir and print its path."),
    ] = False,
    ask_become_pass: Annotated[
        bool,
        typer.Option(
            "--ask-become-pass", "-K", help=f"Prompt for the sudo password (or set {PASSWORD_ENV})."
        ),
    ] = False,
    ansible_args: Annotated[
        Optional[list[str]],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Argument(
            help="Extra ansible-playbook arguments, after `--`.", show_default=False, metavar="-- ARGS"
        ),
    ] = None,
) -> None:
    if phase is not Phase.host:
        raise NotImplementedYet(
            f"--phase {phase.value}: not implemented yet (the cluster layer comes in a later release)",
            hint="run `gpuctl bootstrap --phase host --inventory PATH`; `gpuctl render` prints the manifests",
        )
    if inventory is None:
        raise ConfigError(
            "--phase host needs --inventory", hint="pass --inventory PATH (see inventories/sample/)"
        )
    from gpuctl.cli.signals import interruptible

    password = _become_password(ask_become_pass)
    with interruptible("ansible-playbook stopped; a rerun continues where it stopped"):
        result = _run(
            inventory=inventory,
            check=check,
            limit=limit,
            tags=tags,
            output=output,
            keep_artifacts=keep_artifacts,
            password=password,
            extra_args=tuple(ansible_args or ()),
        )
    _emit(result, output)


def _become_password(ask: bool) -> str | None:
    # Taken out of the environment: ansible-runner records the child's environment in its artifacts.
    from_env = os.environ.pop(PASSWORD_ENV, None)
    if ask:
        return str(typer.prompt("BECOME password", hide_input=True, err=True))
    return from_env


def _run(
    *,
    inventory: Path,
    check: bool,
    limit: str | None,
    tags: str | None,
    output: TableOrJson,
    keep_artifacts: bool,
    password: str | None,
    extra_args: tuple[str, ...],
) -> BootstrapResult:
    from gpuctl.core.bootstrap import run_host_bootstrap
    from gpuctl.report.bootstrap_progress import LiveProgress
    from gpuctl.report.console import make_console

    bootstrap = functools.partial(
        run_host_bootstrap,
        inventory_path=inventory,
        limit=limit,
        tags=tags,
        check=check,
        extra_args=extra_args,
        become_password=password,
        keep_artifacts=keep_artifacts,
    )
    if output is TableOrJson.table and sys.stdout.isatty():
        with LiveProgress(make_console()) as live:
            return bootstrap(on_progress=live.update)
    return bootstrap()


def _emit(result: BootstrapResult, output: TableOrJson) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.report import bootstrap as report
    from gpuctl.report.console import make_console

    if result.artifacts_dir and output is TableOrJson.json:
        make_console(stderr=True).print(f"artifacts kept in {result.artifacts_dir}", markup=False)
    emit(result, output, report)
