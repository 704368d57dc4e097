"""SSH links from the simulated cluster to the real hosts behind `--hosts-from` nodes.

The same connection code and host-key checking as `gpuctl preflight` (gpuctl.hosts.ssh); one
persistent connection per host, reopened when it breaks. A probe is one remote script.
"""

from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from gpuctl.hosts.inventory import NODE_NAME_VAR, load_inventory, node_name
from gpuctl.hosts.probes import nvidia_gpus, parse_pci
from gpuctl.nvidia_smi import parse_query_csv
from gpuctl.sim.runtime.host_nodes import HostTruth
from gpuctl.sim.scenario import NodeSpec, Scenario

if TYPE_CHECKING:
    import paramiko

    from gpuctl.hosts.ssh import SshSettings

CONNECT_TIMEOUT_S = 5.0
COMMAND_TIMEOUT_S = 60.0
_MARK = "@@gpuctl-probe "
# One round trip: the NVIDIA devices on the PCI bus (what NFD's PCI source sees, driver or not),
# what nvidia-smi says, and whether the container runtime knows "nvidia".
PROBE_SCRIPT = f"""
echo "{_MARK}pci"
for d in /sys/bus/pci/devices/*; do
  v=; dev=; c=; read -r v 2>/dev/null < "$d/vendor"
  [ "$v" = 0x10de ] || continue
  read -r dev 2>/dev/null < "$d/device"; read -r c 2>/dev/null < "$d/class"
  echo "${{d##*/}} 0x10de $dev $c"
done
out=$(nvidia-smi -L 2>&1); rc=$?
echo "{_MARK}smi-rc=$rc"; printf '%s\\n' "$out"
echo "{_MARK}query"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,nounits 2>/dev/null
echo "{_MARK}runtime"
if command -v containerd >/dev/null 2>&1 && containerd config dump 2>/dev/null \\
    | grep -Eq 'runtimes\\.("nvidia"|nvidia)\\]'; then echo nvidia
elif grep -qs '"nvidia"' /etc/docker/daemon.json; then echo nvidia
elif grep -qs 'crio.runtime.runtimes.nvidia' /etc/crio/crio.conf /etc/crio/crio.conf.d/* 2>/dev/null
then echo nvidia
else echo none; fi
"""


def parse_probe(output: str) -> HostTruth:
    sections: dict[str, list[str]] = {"": []}
    current = ""
    smi_rc = 1
    for line in output.splitlines():
        if line.startswith(_MARK):
            key = line[len(_MARK) :]
            if key.startswith("smi-rc="):
                smi_rc = int(key.split("=", 1)[1] or 1)
                current = "smi"
            else:
                current = key
            sections[current] = []
        else:
            sections.setdefault(current, []).append(line)
    listed = [line for line in sections.get("smi", []) if line.startswith("GPU ")]
    truth = HostTruth(
        reachable=True,
        gpus=len(listed) if smi_rc == 0 else 0,
        nvidia_smi_works=smi_rc == 0 and bool(listed),
        nvidia_runtime="nvidia" in sections.get("runtime", []),
        pci_gpus=len(nvidia_gpus(parse_pci("\n".join(sections.get("pci", []))))),
    )
    try:
        rows = parse_query_csv(
            "\n".join(sections.get("query", [])), ("name", "memory.total", "driver_version")
        )
    except ValueError:
        rows = []
    if rows:
        memory = rows[0]["memory.total"]
        truth = replace(
            truth,
            gpu_product=rows[0]["name"].replace(" ", "-"),
            gpu_memory_mib=int(memory) if memory.isdigit() else 0,
            driver_version=rows[0]["driver_version"],
        )
    return truth


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
            output, _ = self._exec(PROBE_SCRIPT)
        except Exception as error:  # any SSH failure: the node's kubelet stopped posting
            return HostTruth(reachable=False, detail=str(error) or type(error).__name__)
        return parse_probe(output)

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
