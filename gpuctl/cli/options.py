"""Options shared by several commands, declared once."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer


class Output(str, Enum):
    table = "table"
    json = "json"
    junit = "junit"


class TableOrJson(str, Enum):
    table = "table"
    json = "json"


Kubeconfig = Annotated[
    Optional[Path],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--kubeconfig",
        help="Kubeconfig file (default: $KUBECONFIG, a colon-separated list, then ~/.kube/config; "
        "in-cluster config inside a pod).",
        show_default=False,
    ),
]
Context = Annotated[
    Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
    typer.Option(
        "--context",
        help="Kubeconfig context to use (default: current-context).",
        show_default=False,
    ),
]
