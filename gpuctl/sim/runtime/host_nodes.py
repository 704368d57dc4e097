"""Nodes backed by real hosts (`gpuctl sim up --hosts-from INVENTORY`).

Such a node takes its truth from its host, never from the scenario: a `HostLink` (SSH, built by
the server layer) probes the host every PROBE_INTERVAL_S. The node is Ready while the host
answers; its device plugin can advertise the GPUs `nvidia-smi -L` lists, and only when that
command works and the host's container runtime has the nvidia runtime; a container scheduled
there runs its command on the host and returns the host's output and exit code. That command runs
on a thread of its own for as long as it runs (`sleep infinity` included), never on the engine's,
and is stopped on the host when its pod is deleted.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from gpuctl.sim.runtime import kubelet, operator
from gpuctl.sim.runtime.containers import FOREVER, Outcome, RunningCommand
from gpuctl.sim.runtime.objects import node_conditions
from gpuctl.sim.runtime.store import rfc3339

if TYPE_CHECKING:
    from gpuctl.hosts.host_state import HostState
    from gpuctl.sim.runtime.state import ClusterState as Cluster

Obj = dict[str, Any]
PROBE_INTERVAL_S = 1.0
# What a node's truth needs of gpuctl's host probe (the cheap part: it runs every PROBE_INTERVAL_S).
TRUTH_SECTIONS = ("pci", "nvidia_smi", "nvidia_smi_query", "nvidia_runtime")
UNREACHABLE_TAINT = {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}


@dataclass(frozen=True)
class HostTruth:
    """What one probe of a host found."""

    reachable: bool
    gpus: int = 0  # GPUs `nvidia-smi -L` lists
    pci_gpus: int = 0  # NVIDIA GPUs on the PCI bus
    nvidia_smi_works: bool = False
    nvidia_runtime: bool = False  # the container runtime has a runtime named nvidia
    gpu_product: str = ""
    gpu_memory_mib: int = 0
    driver_version: str = ""
    detail: str = ""  # why the host is unreachable


def truth_from_state(state: HostState) -> HostTruth:
    """A reachable host's truth, from what the probe read there (TRUTH_SECTIONS)."""
    listed = state.listed_gpus
    first = state.gpu_rows[0] if state.gpu_rows else None
    return HostTruth(
        reachable=True,
        gpus=len(listed),
        pci_gpus=len(state.gpus),
        nvidia_smi_works=bool(listed),
        nvidia_runtime=state.knows_nvidia_runtime,
        gpu_product=first.name.replace(" ", "-") if first else "",
        gpu_memory_mib=first.memory_mib if first else 0,
        driver_version=first.driver_version if first else "",
    )


class HostLink(Protocol):
    """The way to one host (gpuctl/sim/server/host_links.py implements it over SSH)."""

    node_name: str

    def probe(self) -> HostTruth: ...

    def start(self, argv: list[str]) -> RunningCommand:
        """Start `argv` on the host and return at once: it runs, for as long as it runs, outside
        the engine (whose lock every API request needs)."""
        ...

    def close(self) -> None: ...


class HostProber:
    """One thread probing every linked host; truths are applied on the engine thread."""

    def __init__(self, cluster: Cluster, links: list[HostLink]) -> None:
        self.cluster = cluster
        self.links = {link.node_name: link for link in links}
        self.latest: dict[str, HostTruth] = {}  # node → what the latest probe of its host found
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="gpuctl-sim-hosts", daemon=True)

    def probe_all_now(self) -> None:
        """One synchronous round (start-up): the nodes are right before the server answers."""
        for name, link in self.links.items():
            truth = self.latest[name] = link.probe()
            apply_truth(self.cluster, name, truth)

    def unreachable(self) -> dict[str, str]:
        """Node → why its host did not answer the latest probe."""
        return {name: truth.detail for name, truth in self.latest.items() if not truth.reachable}

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        for link in self.links.values():
            link.close()

    def _loop(self) -> None:
        while not self._stop.wait(PROBE_INTERVAL_S):
            for name, link in self.links.items():
                truth = self.latest[name] = link.probe()
                self.cluster.engine.at(0.0, functools.partial(apply_truth, self.cluster, name, truth))


def apply_truth(cluster: Cluster, name: str, truth: HostTruth) -> None:
    """Make node `name` say what its host says (caller holds the store lock)."""
    # Under the simulated GPU Operator the node's spec is the host's own state plus what its
    # operands installed: the host's truth replaces that own state, the operands are laid on again.
    originals = cluster.operator.original_hosts
    spec = originals.get(name) or cluster.node_specs[name]
    updated = replace(
        spec,
        ready=truth.reachable,
        # The node's GPUs are the physical ones (as a scenario's `gpus`): nvidia-smi's list while it
        # works, else the PCI bus's, so NFD still finds the GPUs of a host without a driver.
        gpus=(truth.gpus if truth.nvidia_smi_works else truth.pci_gpus) if truth.reachable else spec.gpus,
        driver="installed" if truth.nvidia_smi_works else "missing",
        toolkit="configured" if truth.nvidia_runtime else "missing",
        gpu_product=truth.gpu_product or spec.gpu_product,
        gpu_memory_mib=truth.gpu_memory_mib or spec.gpu_memory_mib,
        driver_version=truth.driver_version or spec.driver_version,
    )
    if not truth.reachable:
        updated = replace(updated, driver=spec.driver, toolkit=spec.toolkit)
    if updated == spec:
        return
    if name in originals:
        originals[name] = updated
    else:
        cluster.node_specs[name] = updated
    if updated.ready != spec.ready:
        _set_ready(cluster, name, updated.ready)
    if name in originals:
        operator.sync_host(cluster, name)  # sets the node's spec and refreshes its GPUs
        cluster.operator_soon()  # its validator's stages waiting on the host look again
    else:
        kubelet.refresh_node_gpus(cluster, name)
    cluster.node_changed()


def _set_ready(cluster: Cluster, name: str, ready: bool) -> None:
    node = cluster.store.get("nodes", "", name)
    if node is None:
        return
    conditions = node_conditions(True, rfc3339())
    taints = [t for t in node["spec"].get("taints") or [] if t.get("key") != UNREACHABLE_TAINT["key"]]
    if not ready:
        # The node lifecycle controller marks every condition the kubelet posts, not only Ready.
        for condition in conditions:
            condition.update(
                status="Unknown",
                reason="NodeStatusUnknown",
                message="Kubelet stopped posting node status.",
            )
        taints.append({**UNREACHABLE_TAINT, "timeAdded": rfc3339()})
    updated = dict(node)
    updated["spec"] = (
        {**node["spec"], "taints": taints}
        if taints
        else {k: v for k, v in node["spec"].items() if k != "taints"}
    )
    updated["status"] = dict(node["status"], conditions=conditions)
    cluster.store.put("nodes", updated)


def run_on_host(link: HostLink, argv: list[str]) -> Outcome:
    """A container's command, started on the host: running until the host says it ended (its
    own output and exit code), or until the pod is deleted."""
    if not argv:
        return Outcome(run_seconds=FOREVER)  # the image's entrypoint: nothing of it is on the host
    return Outcome(run_seconds=FOREVER, running=link.start(argv))
