"""SSH links from the simulated cluster to the real hosts behind `--hosts-from` nodes.

The same connection code and host-key checking as `gpuctl preflight` (gpuctl.hosts.ssh); one
persistent connection per host, reopened when it breaks. A probe is gpuctl's one host probe
(gpuctl.hosts.probe_script), asked only for what a node's truth needs.
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from gpuctl.hosts.host_state import ProbeOutputError, parse_probe_output
from gpuctl.hosts.inventory import NODE_NAME_VAR, load_inventory, node_name
from gpuctl.hosts.probe_script import probe_script
from gpuctl.sim.runtime.host_nodes import TRUTH_SECTIONS, HostTruth, truth_from_state
from gpuctl.sim.scenario import NodeSpec, Scenario

if TYPE_CHECKING:
    import paramiko

    from gpuctl.hosts.ssh import SshSettings

CONNECT_TIMEOUT_S = 5.0
COMMAND_TIMEOUT_S = 60.0


def parse_probe(output: str) -> HostTruth:
    """The host's truth from the probe's answer. A host that printed none (no Python) answered SSH:
    reachable, with no working GPUs or nvidia runtime, as before it is prepared."""
    try:
        return truth_from_state(parse_probe_output(output))
    except ProbeOutputError as error:
        return HostTruth(reachable=True, detail=f"the host probe printed no answer: {error}")


@dataclass
class SshHostLink:
    """A HostLink over SSH to one inventory host."""

    node_name: str
    settings: SshSettings

    def __post_init__(self) -> None:
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()

    def _exec(self, script: str) -> tuple[str, int]:
        from gpuctl.hosts.ssh import connect, run_script

        with self._lock:
            if self._client is None:
                self._client = connect(self.settings, timeout=CONNECT_TIMEOUT_S)
            try:
                result = run_script(self._client, script, timeout=COMMAND_TIMEOUT_S)
            except Exception:
                self._drop()
                raise
        return result.stdout + result.stderr, result.exit_status

    def _drop(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def probe(self) -> HostTruth:
        try:
            output, _ = self._exec(probe_script(TRUTH_SECTIONS))
            return parse_probe(output)
        except Exception as error:  # any SSH failure: the node's kubelet stopped posting
            return HostTruth(reachable=False, detail=str(error) or type(error).__name__)

    def run(self, argv: list[str]) -> tuple[str, int]:
        try:
            return self._exec(shlex.join(argv) + "\n")
        except Exception as error:
            return f"failed to run on the host: {error}\n", 128

    def close(self) -> None:
        with self._lock:
            self._drop()


def links_from_inventory(path: Path) -> list[SshHostLink]:
    """One link per host of the inventory's gpu_nodes group (host keys checked)."""
    from gpuctl.hosts.ssh import resolve

    inventory = load_inventory(path)
    return [
        SshHostLink(node_name(host), resolve(host, insecure_skip_host_key_check=False))
        for host in inventory.hosts
    ]


def with_host_nodes(scenario: Scenario, links: list[SshHostLink]) -> Scenario:
    """The scenario plus one node per linked host (its truth comes from the host, not from here)."""
    taken = {spec.name for spec in scenario.nodes}
    clashes = sorted(taken & {link.node_name for link in links})
    if clashes:
        from gpuctl.errors import ConfigError

        raise ConfigError(
            f"--hosts-from: node name(s) {', '.join(clashes)} are also in the scenario",
            hint=f"rename the scenario's nodes, or set {NODE_NAME_VAR} for those hosts",
        )
    backed = tuple(
        NodeSpec(name=link.node_name, gpus=0, driver="missing", toolkit="missing") for link in links
    )
    return replace(scenario, nodes=scenario.nodes + backed)
