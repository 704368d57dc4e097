"""What the simulated cluster's controllers share: the store and the engine they run on, the
nodes' effective specs, and each controller's own bookkeeping (written by that controller only).

Controllers import this module, never cluster.py: they learn of writes by watching the store
(Store.watch) and ask for each other's passes by name (`schedule_soon`, ...); cluster.py builds
the state and wires the controllers to it.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuctl.sim.runtime import objects
from gpuctl.sim.runtime.containers import Outcome, RunningCommand
from gpuctl.sim.runtime.engine import Engine
from gpuctl.sim.runtime.plugin_config import PluginConfig
from gpuctl.sim.runtime.sharing import Device
from gpuctl.sim.runtime.store import Store
from gpuctl.sim.scenario import NodeSpec, Scenario, health_at

Obj = dict[str, Any]
INITIAL_AGE_SECONDS = 86400.0  # objects present at start look a day old, like a running cluster
CLUSTER_POLICIES = "clusterpolicies.nvidia.com"  # what the simulated GPU Operator reconciles
GPU_CLUSTERS = "gpuclusters.nvidia.com"  # ... and its GPUCluster (DRA) mode


@dataclass
class PodRuntime:
    """What the kubelet knows about a pod that the API object does not carry."""

    node: str = ""
    gpu_indices: list[int] = field(default_factory=list)  # the physical GPUs behind `devices`
    devices: list[Device] = field(default_factory=list)
    logs: dict[str, str | Callable[[], str]] = field(default_factory=dict)  # callables: built on read
    started: float = 0.0
    restarts: int = 0
    # Each container's log of its last run before the latest (re)start: `kubectl logs --previous`.
    previous_logs: dict[str, str | Callable[[], str]] = field(default_factory=dict)
    # The containers whose command still runs for real (on a node's host), by container name.
    running: dict[str, RunningCommand] = field(default_factory=dict)

    def stop_running(self, grace_seconds: float) -> None:
        """Stop, where they run, the commands of the pod that still run (SIGKILL after the grace)."""
        for command in self.running.values():
            command.stop(grace_seconds)
        self.running.clear()


@dataclass
class OperatorState:
    """What the simulated GPU Operator (operator.py) remembers between reconciles."""

    active: bool = False
    spec: Obj = field(default_factory=dict)  # the reconciled policy's spec
    namespace: str = ""
    original_hosts: dict[str, NodeSpec] = field(default_factory=dict)  # before operands changed them
    waiting_pods: dict[str, tuple[str, str]] = field(default_factory=dict)  # uid → (namespace, name)
    # (app, node) → (namespace, name, uid) of the operand pod last started there
    pods_by_node: dict[tuple[str, str], tuple[str, str, str]] = field(default_factory=dict)


# What other controllers add to the kubelet's pod start (the GPU Operator's operand pods):
# True while a pod's init containers hold its main containers back ...
InitGate = Callable[["ClusterState", Obj], bool]
# ... and what a main container does (None: the kubelet runs its command).
ContainerProgram = Callable[["ClusterState", Obj, Obj], Outcome | None]


class ClusterState(ABC):
    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.store = Store()
        self.engine = Engine(self.store.lock)
        self.node_specs: dict[str, NodeSpec] = {spec.name: spec for spec in scenario.nodes}
        self.node_index = {spec.name: index for index, spec in enumerate(scenario.nodes)}
        self.created_at = time.time() - INITIAL_AGE_SECONDS  # for objects present at start
        self.started_monotonic = time.monotonic()  # the clock of the scenario's `gpuHealth` events
        self.settling = False  # start-up: controllers run synchronously, no events are recorded
        # the kubelet's (and its device manager's)
        self.runtime: dict[str, PodRuntime] = {}  # by pod uid
        self.gpu_holders: dict[str, dict[str, list[Device]]] = {}  # node → pod uid → devices
        self.running_plugins: dict[str, set[str]] = {}  # node → uids of running device-plugin pods
        self.plugin_configs: dict[str, PluginConfig] = {}  # node → config its plugin started with
        self.init_gates: list[InitGate] = []
        self.container_programs: list[ContainerProgram] = []
        # the scheduler's
        self.unscheduled: dict[str, tuple[str, str]] = {}  # pod uid → (namespace, name)
        self.last_failed_scheduling: dict[str, str] = {}  # pod uid → last message
        self.scheduler_nodes: tuple[int, Any] | None = None  # the scheduler's node index, by generation
        # the GPU Operator's
        self.operator = OperatorState()
        self.passes: dict[str, Callable[[], None]] = {}  # controller → its (debounced) pass

    # -- lookups ------------------------------------------------------------------------------
    def node_spec(self, name: str) -> NodeSpec:
        return self.node_specs.get(name) or NodeSpec(name=name)

    def health_spec(self, name: str) -> NodeSpec:
        """The node's spec with the scenario's `gpuHealth` faults as of now."""
        return health_at(self.node_spec(name), time.monotonic() - self.started_monotonic)

    @abstractmethod
    def run_container(
        self, node_name: str, argv: list[str], gpu_indices: list[int], devices: list[Device] | None = None
    ) -> Outcome:
        """A container's command on the node (the cluster knows which nodes real hosts back)."""

    def pod_runtime(self, pod: Obj) -> PodRuntime:
        return self.runtime.setdefault(pod["metadata"]["uid"], PodRuntime())

    def set_gpus(self, uid: str, node_name: str, devices: list[Device]) -> None:
        """Record the devices a pod holds on a node; freeing them retries pending pods."""
        runtime = self.runtime.get(uid)
        if runtime is not None:
            runtime.devices = list(devices)
            runtime.gpu_indices = list(dict.fromkeys(device.gpu for device in devices))
        holders = self.gpu_holders.setdefault(node_name, {})
        if devices:
            holders[uid] = list(devices)
        elif holders.pop(uid, None):
            self.schedule_soon()

    def record_event(self, involved: Obj, reason: str, message: str, **kwargs: Any) -> None:
        if self.settling:
            return
        event = objects.event(involved, reason, message, **kwargs)
        if self.store.get("namespaces", "", event["metadata"]["namespace"]) is not None:
            self.store.add("events", event)

    # -- the controllers' passes, debounced on the engine ---------------------------------------
    def _soon(self, name: str, delay: float) -> None:
        if not self.settling and name in self.passes:
            self.engine.soon(name, self.passes[name], delay=delay)

    def schedule_soon(self) -> None:
        self._soon("scheduler", 0.01)

    def daemonsets_soon(self) -> None:
        self._soon("daemonsets", 0.01)

    def operator_soon(self) -> None:
        if self.operator.active or self.store.count(CLUSTER_POLICIES) or self.store.count(GPU_CLUSTERS):
            self._soon("operator", 0.02)

    def controller_soon(self, name: str) -> None:
        """The named controller's pass (ReplicaSets, disruption budgets), debounced."""
        self._soon(name, 0.01)

    def node_changed(self) -> None:
        """A node's host changed (not only its object): whatever follows nodes looks again."""
        self.schedule_soon()
        self.daemonsets_soon()
        self.operator_soon()
