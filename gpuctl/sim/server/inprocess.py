"""A simulated cluster served on loopback for the length of a `with` block (demo, benchmarks)."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from gpuctl.sim.scenario import default_scenario_path, load_scenario
from gpuctl.sim.server.http_server import SimServer


@dataclass(frozen=True)
class ServedCluster:
    server: SimServer
    kubeconfig: Path
    scenario_source: str


@contextlib.contextmanager
def serve(scenario_path: Path | None = None, *, device_plugin: str | None = None) -> Iterator[ServedCluster]:
    """Serve the scenario (default: the built-in mixed cluster) with a kubeconfig in a temporary
    folder; the server stops when the block ends, also on errors and Ctrl-C. `device_plugin`
    overrides the scenario's devicePlugin (absent | installed)."""
    path = scenario_path or default_scenario_path()
    scenario = load_scenario(path)
    if device_plugin is not None:
        scenario = replace(scenario, device_plugin=device_plugin)
    server = SimServer(scenario)
    with tempfile.TemporaryDirectory(prefix="gpuctl-sim-") as workdir:
        server.start()
        try:
            kubeconfig = Path(workdir) / "kubeconfig"
            server.write_kubeconfig(kubeconfig)
            yield ServedCluster(server, kubeconfig, str(path))
        finally:
            server.stop()
