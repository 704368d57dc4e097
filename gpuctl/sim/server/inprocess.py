"""A simulated cluster served on loopback for the length of a `with` block (demo, benchmarks)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gpuctl.sim.scenario import default_scenario_path, load_scenario
from gpuctl.sim.server.http_server import SimServer


@dataclass(frozen=True)
class ServedCluster:
    server: SimServer
    kubeconfig: Path
    scenario_source: str


@contextlib.contextmanager
def serve(scenario_path: Path | None = None) -> Iterator[ServedCluster]:
    """Serve the scenario (default: the built-in mixed cluster) with a kubeconfig in a temporary
    folder; the server stops when the block ends, also on errors and Ctrl-C."""
    path = scenario_path or default_scenario_path()
    server = SimServer(load_scenario(path))
    with tempfile.TemporaryDirectory(prefix="gpuctl-sim-") as workdir:
        server.start()
        try:
            kubeconfig = Path(workdir) / "kubeconfig"
            server.write_kubeconfig(kubeconfig)
            yield ServedCluster(server, kubeconfig, str(path))
        finally:
            server.stop()
