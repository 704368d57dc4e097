"""`gpuctl completion bash|zsh|fish`: print the shell's completion script."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

HELP = """\
Print a shell completion script. Load it now with `source <(gpuctl completion bash)` (bash),
`source <(gpuctl completion zsh)` (zsh) or `gpuctl completion fish | source` (fish); or save it
where your shell loads completions (e.g. ~/.local/share/bash-completion/completions/gpuctl).
"""

# The environment variable the script sets when it asks gpuctl for completions (Click's convention).
COMPLETE_VAR = "_GPUCTL_COMPLETE"


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def register_shells() -> None:
    """Teach Click the shells' completion protocols (Typer's classes); only needed when completing."""
    from typer._completion_classes import completion_init

    completion_init()


def command(shell: Annotated[Shell, typer.Argument(help="The shell.", show_default=False)]) -> None:
    from typer._completion_shared import get_completion_script

    register_shells()
    typer.echo(get_completion_script(prog_name="gpuctl", complete_var=COMPLETE_VAR, shell=shell.value))
