"""The simulated cluster's wiring: each controller's watches and pass, the objects present at
start, start-up settling, and what the API asks of the cluster (container runs, deletions)."""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Iterable
from typing import Any

from gpuctl.sim.runtime import (
    containers,
    daemonsets,
    disruption,
    dra,
    dra_claims,
    fabric_workload,
    host_nodes,
    kubelet,
    mig_containers,
    mpi_operator,
    objects,
    operand_pods,
    operator,
    replicasets,
    scheduler,
)
from gpuctl.sim.runtime.sharing import Device
from gpuctl.sim.runtime.state import ClusterState
from gpuctl.sim.runtime.store import rfc3339
from gpuctl.sim.scenario import Scenario

Obj = dict[str, Any]
OPERATOR_SETTLE_PASSES = 8  # each gets the operands one stage further (driver, toolkit, plugin, validator)


class Cluster(ClusterState):
    def __init__(self, scenario: Scenario, host_links: Iterable[host_nodes.HostLink] = ()) -> None:
        super().__init__(scenario)
        self.host_links = {link.node_name: link for link in host_links}
        self.prober = host_nodes.HostProber(self, list(self.host_links.values()))
        self._wire()
        self._populate()

    def _wire(self) -> None:
        """Each controller watches the kinds it reads and offers its pass; nothing else links them."""
        self.passes.update(
            scheduler=functools.partial(scheduler.run_pass, self),
            daemonsets=functools.partial(daemonsets.reconcile, self),
            operator=functools.partial(operator.reconcile, self),
            **{
                replicasets.PASS: functools.partial(replicasets.reconcile, self),
                disruption.PASS: functools.partial(disruption.reconcile, self),
                mpi_operator.PASS: functools.partial(mpi_operator.reconcile, self),
            },
        )
        scheduler.watch(self)
        kubelet.watch(self)
        if self.scenario.uses_dra:
            dra_claims.watch(self)
        daemonsets.watch(self)
        operator.watch(self)
        replicasets.watch(self)
        disruption.watch(self)
        if self.scenario.mpi_operator == "installed":
            mpi_operator.watch(self)
        self.init_gates.append(operand_pods.init_blocked)
        self.container_programs.append(operand_pods.outcome)
        self.container_programs.append(fabric_workload.outcome)  # mpirun and its workers' sshd

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
        created = self.created_at
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
            if self.scenario.mpi_operator == "installed":
                mpi_operator.install(self, created)
            # Settle synchronously: a cluster that "already has" the device plugin is up before
            # start() returns, without events, as if it had been running for a day.
            self.settling = True
            try:
                daemonsets.reconcile(self)
                scheduler.run_pass(self)
                daemonsets.reconcile(self)
                for _ in range(OPERATOR_SETTLE_PASSES if self.scenario.gpu_operator is not None else 0):
                    operator.reconcile(self)
                    daemonsets.reconcile(self)
                    scheduler.run_pass(self)
            finally:
                self.settling = False

    def start(self) -> None:
        self.engine.start()
        self.operator_soon()  # anything the start-up settling left to converge
        self._play_gpu_health()
        if self.host_links:
            self.prober.start()

    def stop(self) -> None:
        self.prober.stop()
        self.engine.stop()
        self.store.close()

    def _play_gpu_health(self) -> None:
        """The DRA driver's health check (`gpuHealth` fault xid): at each event of a DRA node, its
        kubelet plugin publishes the device's health taint, or takes it off."""
        elapsed = time.monotonic() - self.started_monotonic
        for spec in self.scenario.nodes:
            if spec.gpu_allocation != "dra":
                continue
            for event in spec.gpu_health:
                if event.after_seconds > 0:
                    self.engine.at(
                        max(0.0, event.after_seconds - elapsed),
                        functools.partial(dra.republish, self, spec.name),
                    )

    # -- what the kubelet asks of the cluster ---------------------------------------------------
    def run_container(
        self, node_name: str, argv: list[str], gpu_indices: list[int], devices: list[Device] | None = None
    ) -> containers.Outcome:
        """A container's command: on the node's host when a host backs it and its runtime has
        the nvidia runtime (else, as on a real node, no GPU is injected), emulated otherwise.
        `devices`: what the plugin allocated, so MIG devices show in nvidia-smi as given."""
        spec = self.health_spec(node_name)
        link = self.host_links.get(node_name)
        if link is not None and spec.toolkit == "configured":
            return host_nodes.run_on_host(link, argv)
        if devices and any(device.mig >= 0 for device in devices):
            return mig_containers.run_argv(argv, spec, devices, self.scenario.pod_run_seconds)
        return containers.run_argv(argv, spec, gpu_indices, self.scenario.pod_run_seconds)

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
