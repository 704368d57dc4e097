"""The simulated cluster's state and wiring: store, engine, controllers, bookkeeping."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuctl.sim.runtime import (
    containers,
    daemonsets,
    dra,
    dra_claims,
    host_nodes,
    kubelet,
    mig_containers,
    objects,
    operator,
    plugin_runtime,
    podstatus,
    scheduler,
)
from gpuctl.sim.runtime.engine import Engine
from gpuctl.sim.runtime.plugin_config import PluginConfig
from gpuctl.sim.runtime.sharing import Device
from gpuctl.sim.runtime.store import Store, rfc3339
from gpuctl.sim.scenario import NodeSpec, Scenario

Obj = dict[str, Any]
INITIAL_AGE_SECONDS = 86400.0  # objects present at start look a day old, like a running cluster


@dataclass
class PodRuntime:
    """What the kubelet knows about a pod that the API object does not carry."""

    node: str = ""
    gpu_indices: list[int] = field(default_factory=list)  # the physical GPUs behind `devices`
    devices: list[Device] = field(default_factory=list)
    logs: dict[str, str | Callable[[], str]] = field(default_factory=dict)  # callables: built on read
    started: float = 0.0
    restarts: int = 0


class Cluster:
    def __init__(self, scenario: Scenario, host_links: Iterable[host_nodes.HostLink] = ()) -> None:
        self.scenario = scenario
        self.store = Store()
        self.engine = Engine(self.store.lock)
        self.node_specs: dict[str, NodeSpec] = {spec.name: spec for spec in scenario.nodes}
        self.node_index = {spec.name: index for index, spec in enumerate(scenario.nodes)}
        self.runtime: dict[str, PodRuntime] = {}  # by pod uid
        self.gpu_holders: dict[str, dict[str, list[Device]]] = {}  # node → pod uid → devices
        self.unscheduled: dict[str, tuple[str, str]] = {}  # pod uid → (namespace, name)
        self.last_failed_scheduling: dict[str, str] = {}  # pod uid → last message
        self.scheduler_nodes: tuple[int, Any] | None = None  # the scheduler's node index, by generation
        self.running_plugins: dict[str, set[str]] = {}  # node → uids of running device-plugin pods
        self.plugin_configs: dict[str, PluginConfig] = {}  # node → config its plugin started with
        self.settling = False
        self.operator = operator.OperatorState()  # the GPU Operator the sim plays (ClusterPolicy)
        self.created_at = time.time() - INITIAL_AGE_SECONDS  # for objects present at start
        self.host_links = {link.node_name: link for link in host_links}
        self.prober = host_nodes.HostProber(self, list(self.host_links.values()))
        self._populate()

    # -- start-up ------------------------------------------------------------------------------
    def _populate(self) -> None:
        # Thousands of nodes and pods are created here and all stay: the cyclic collector,
        # triggered by the allocations, would traverse the growing store again and again
        # (nearly half the start-up time of 5,000 nodes). Reference counting still frees.
        collecting = gc.isenabled()
        gc.disable()
        try:
            self._populate_objects()
        finally:
            if collecting:
                gc.enable()

    def _populate_objects(self) -> None:
        created = time.time() - INITIAL_AGE_SECONDS
        with self.store.lock:
            for name in (*objects.SYSTEM_NAMESPACES, *self.scenario.extra_namespaces):
                if self.store.get("namespaces", "", name) is None:
                    self.store.add("namespaces", objects.namespace(name), created)
            for index, spec in enumerate(self.scenario.nodes):
                node = self.store.add("nodes", objects.node(spec, index, self.scenario), created)
                self.store.add("leases.coordination.k8s.io", objects.node_lease(node), created)
            self.prober.probe_all_now()
            if self.scenario.device_plugin == "installed":
                self.store.add("daemonsets.apps", objects.device_plugin_daemonset(), created)
            dra.install(self, created)
            if self.scenario.gpu_operator is not None:
                operator.install(self, self.scenario.gpu_operator, created)
            # Settle synchronously: a cluster that "already has" the device plugin is up before
            # start() returns, without events, as if it had been running for a day.
            self.settling = True
            try:
                daemonsets.reconcile(self)
                scheduler.run_pass(self)
                daemonsets.reconcile(self)
                if self.scenario.gpu_operator is not None:
                    operator.settle(self)
            finally:
                self.settling = False

    def start(self) -> None:
        self.engine.start()
        self.operator_soon()  # anything the start-up settling left to converge
        if self.host_links:
            self.prober.start()

    def stop(self) -> None:
        self.prober.stop()
        self.engine.stop()
        self.store.close()

    # -- lookups ------------------------------------------------------------------------------
    def node_spec(self, name: str) -> NodeSpec:
        return self.node_specs.get(name) or NodeSpec(name=name)

    def run_container(
        self, node_name: str, argv: list[str], gpu_indices: list[int], devices: list[Device] | None = None
    ) -> containers.Outcome:
        """A container's command: on the node's host when a host backs it and its runtime has
        the nvidia runtime (else, as on a real node, no GPU is injected), emulated otherwise.
        `devices`: what the plugin allocated, so MIG devices show in nvidia-smi as given."""
        spec = self.node_spec(node_name)
        link = self.host_links.get(node_name)
        if link is not None and spec.toolkit == "configured":
            return host_nodes.run_on_host(link, argv, self.scenario.pod_run_seconds)
        if devices and any(device.mig >= 0 for device in devices):
            return mig_containers.run_argv(argv, spec, devices, self.scenario.pod_run_seconds)
        return containers.run_argv(argv, spec, gpu_indices, self.scenario.pod_run_seconds)

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

    # -- hooks called by the API after a write (caller holds the store lock) -------------------
    def pod_created(self, pod: Obj) -> None:
        if pod.get("spec", {}).get("nodeName"):
            kubelet.admit(self, pod)
        else:
            self.unscheduled[pod["metadata"]["uid"]] = (pod["metadata"]["namespace"], pod["metadata"]["name"])
            self.schedule_soon()

    def pod_removed(self, pod: Obj) -> None:
        uid = pod["metadata"]["uid"]
        self.unscheduled.pop(uid, None)
        self.last_failed_scheduling.pop(uid, None)
        self.runtime.pop(uid, None)
        node_name = pod.get("spec", {}).get("nodeName")
        self.set_gpus(uid, node_name or "", [])
        if node_name and podstatus.is_device_plugin(pod):
            self.running_plugins.get(node_name, set()).discard(uid)
            kubelet.refresh_node_gpus(self, node_name)
        elif node_name and plugin_runtime.is_mps_daemon_pod(pod):
            kubelet.refresh_node_gpus(self, node_name)
        if self.scenario.uses_dra:
            dra.pod_stopped(self, pod)
            dra_claims.pod_removed(self, pod)
        if pod["metadata"].get("ownerReferences"):
            self.daemonsets_soon()

    def node_changed(self) -> None:
        self.schedule_soon()
        self.daemonsets_soon()

    def daemonset_changed(self) -> None:
        self.daemonsets_soon()

    def custom_resource_changed(self) -> None:
        """A custom resource (or its CRD) was written or deleted: a ClusterPolicy drives the Operator."""
        self.operator_soon()

    def operator_soon(self) -> None:
        if not self.settling and (self.operator.active or self.store.count(operator.CLUSTER_POLICIES)):
            self.engine.soon("operator", lambda: operator.reconcile(self), delay=0.02)

    def schedule_soon(self) -> None:
        if not self.settling:
            self.engine.soon("scheduler", lambda: scheduler.run_pass(self), delay=0.01)

    def daemonsets_soon(self) -> None:
        """DaemonSets follow nodes and pods; so does the Operator (node labels, operand readiness)."""
        if not self.settling:
            self.engine.soon("daemonsets", lambda: daemonsets.reconcile(self), delay=0.01)
            self.operator_soon()

    def record_event(self, involved: Obj, reason: str, message: str, **kwargs: Any) -> None:
        if self.settling:
            return
        event = objects.event(involved, reason, message, **kwargs)
        if self.store.get("namespaces", "", event["metadata"]["namespace"]) is not None:
            self.store.add("events", event)

    # -- deletion -----------------------------------------------------------------------------
    def delete_pod(self, pod: Obj, grace_seconds: int | None) -> Obj:
        """Delete now, or mark terminating and remove after the (capped) grace period."""
        return kubelet.delete_pod(self, pod, grace_seconds)

    def delete_namespace(self, namespace: Obj, namespaced_resources: Iterable[str]) -> Obj:
        """Mark the namespace terminating, empty it of the given resources, remove it once no pod is left."""
        name = namespace["metadata"]["name"]
        terminating = dict(namespace)
        terminating["metadata"] = dict(namespace["metadata"], deletionTimestamp=rfc3339())
        terminating["status"] = {"phase": "Terminating"}
        self.store.put("namespaces", terminating)
        for resource in namespaced_resources:
            for obj in self.store.items(resource, name):
                if resource == "pods":
                    kubelet.delete_pod(self, obj, 0)
                else:
                    self.store.remove(resource, name, obj["metadata"]["name"])
        self.engine.at(0.2, lambda: self._finish_namespace(name))
        return terminating

    def _finish_namespace(self, name: str) -> None:
        if not self.store.items("pods", name):
            self.store.remove("namespaces", "", name)
        else:
            self.engine.at(0.2, lambda: self._finish_namespace(name))
