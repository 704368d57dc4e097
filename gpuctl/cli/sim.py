"""`gpuctl sim`: the built-in simulated GPU cluster."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from gpuctl.output_paths import inputs
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.sim.server.http_server import SimServer

app = typer.Typer(
    help="The built-in simulated GPU cluster: a local Kubernetes API with simulated GPU nodes, "
    "a scheduler, a kubelet and the NVIDIA device plugin (scenario format: docs/scenario.md).",
    no_args_is_help=True,
)

ScenarioFile = Annotated[
    Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--scenario",
        help="Scenario YAML (default: the built-in mixed cluster: CPU nodes, healthy 8xH100 nodes, "
        "one node with a driver mismatch, one without the container toolkit).",
        show_default=False,
    ),
]
KubeconfigOut = Annotated[
    Path, typer.Option("--kubeconfig", help="Where to write the kubeconfig of the simulated cluster.")
]


def _merged_note(previous_context: str) -> str:
    before = f" (it was {previous_context!r})" if previous_context else ""
    return (
        f"merged context gpuctl-sim into the existing kubeconfig and made it current{before}; "
        "`gpuctl sim down` takes it out again"
    )


@app.command("up")
def up(
    kubeconfig: KubeconfigOut,
    scenario: ScenarioFile = None,
    detach: Annotated[
        bool, typer.Option("--detach", help="Run in the background; return once it serves.")
    ] = False,
    hosts_from: Annotated[
        Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--hosts-from",
            help="Ansible inventory: one node per host of group gpu_nodes, backed by that host over SSH "
            "(its GPUs, runtime and containers are the host's). Without --scenario: only those nodes, "
            "no device plugin.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve a scenario on 127.0.0.1 (a free port) and write a kubeconfig for it."""
    from gpuctl.sim.scenario import Scenario, default_scenario_path, load_scenario
    from gpuctl.sim.server import process

    read = inputs("scenario", [scenario]) + inputs("--hosts-from inventory", [hosts_from])
    if scenario is None and hosts_from is not None:
        loaded = Scenario(source="--hosts-from")
    else:
        loaded = load_scenario(scenario or default_scenario_path())  # refuse invalid scenarios early
    if hosts_from is not None:
        from gpuctl.hosts.inventory import load_inventory

        hosts = load_inventory(hosts_from).hosts  # refuse a bad inventory before starting anything
        read += inputs("SSH key file", (key for host in hosts for key in host.key_files))
    new_folder = process.missing_folder(kubeconfig)
    process.prepare_kubeconfig_path(kubeconfig, read)  # refuse a path that is not ours to write
    if hosts_from is not None:
        typer.echo(
            f"warning: pods scheduled on the nodes from {hosts_from} run their commands on those hosts "
            "over SSH, as the inventory's user: the kubeconfig this writes is as good as a shell there, "
            "keep it to yourself",
            err=True,
        )
    if new_folder is not None:
        typer.echo(f"created the folder {new_folder} for the kubeconfig", err=True)
    if detach:
        from gpuctl.cli.signals import interruptible

        with interruptible("the simulated cluster was not started; no kubeconfig was written"):
            record = process.start_detached(scenario, kubeconfig, hosts_from)
        for line in record.warnings:
            typer.echo(line, err=True)
        typer.echo(f"simulated cluster serving at {record.url} (pid {record.pid}, {record.nodes} nodes)")
        typer.echo(f"kubeconfig: {record.kubeconfig}")
        if not record.created_kubeconfig:
            typer.echo(_merged_note(record.previous_context))
        typer.echo(f"stop it with: {command_line('gpuctl', 'sim', 'down', '--kubeconfig', kubeconfig)}")
        return

    def announce(server: SimServer) -> None:
        for line in process.serving_warnings(server):
            typer.echo(line, err=True)
        typer.echo(f"simulated cluster serving at {server.url} ({len(server.cluster.node_specs)} nodes)")
        typer.echo(f"kubeconfig: {kubeconfig.absolute()}  (Ctrl-C stops it)")

    from gpuctl.cli.signals import signals_as_interrupt

    # A server stopped by Ctrl-C or SIGTERM ends normally (exit 0) once it stopped serving.
    with signals_as_interrupt(), contextlib.suppress(KeyboardInterrupt):
        process.serve(loaded, kubeconfig, announce, hosts_from)
    typer.echo("simulated cluster stopped")


@app.command("down")
def down(kubeconfig: KubeconfigOut) -> None:
    """Stop the simulated cluster that wrote KUBECONFIG (started with `gpuctl sim up --detach`) and
    remove what `sim up` wrote (its kubeconfig, or its entries in a kubeconfig it merged into)."""
    from gpuctl.sim.server import process

    record, why = process.stop_detached(kubeconfig)
    if why:
        typer.echo(why, err=True)
    if record is not None and not why:
        typer.echo(f"stopped the simulated cluster at {record.url} (pid {record.pid})")
