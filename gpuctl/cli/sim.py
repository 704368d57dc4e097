"""`gpuctl sim`: the built-in simulated GPU cluster."""

from __future__ import annotations

import typer

from gpuctl.errors import NotImplementedYet

app = typer.Typer(help="The built-in simulated GPU cluster.", no_args_is_help=True)


@app.command("up")
def up() -> None:
    """Serve a scenario on 127.0.0.1 and write a kubeconfig."""
    raise NotImplementedYet("gpuctl sim up: not implemented yet")
