"""Cluster-wide checks of `gpuctl verify`: GPU nodes at all, device plugin, RuntimeClass,
GPU DaemonSet tolerations, driver drift."""

from __future__ import annotations

from collections import Counter

from gpuctl.core.verify.model import Check, NodeResult, VerifyOptions, failed, passed, skipped, warned
from gpuctl.defaults import is_gate_taint_key
from gpuctl.kube.daemonsets import AUTO_TOLERATED_PREFIX, DaemonSetInfo
from gpuctl.kube.nodes import ENFORCED_EFFECTS, NodeInfo, Taint


def gpu_nodes_present(gpu_nodes: list[NodeInfo], allow_empty: bool) -> Check:
    if gpu_nodes:
        return passed("cluster.gpu-nodes", f"{len(gpu_nodes)} GPU node(s)")
    if allow_empty:
        return passed("cluster.gpu-nodes", "no GPU node (allowed by --allow-empty)")
    return failed(
        "cluster.gpu-nodes",
        "no GPU node: no node advertises nvidia.com/gpu or carries an NFD/GFD GPU label",
        "install the device plugin or NFD (`gpuctl bootstrap`), name the nodes with --expect-nodes, "
        "or pass --allow-empty for a cluster without GPUs",
    )


def device_plugin_present(plugins: list[DaemonSetInfo], gpu_nodes: list[NodeInfo]) -> Check:
    if plugins:
        names = ", ".join(f"{ds.namespace}/{ds.name}" for ds in plugins)
        return passed("cluster.device-plugin", f"device plugin DaemonSet: {names}")
    if not gpu_nodes:
        return skipped("cluster.device-plugin", "no GPU node that uses a device plugin")
    return failed(
        "cluster.device-plugin",
        "no NVIDIA device plugin DaemonSet (or GPU Operator) in any namespace",
        "install it: `gpuctl render | kubectl apply -f -` (or the GPU Operator, or NVIDIA's DRA "
        "driver on Kubernetes 1.34+: docs/dra.md)",
    )


def runtime_class(options: VerifyOptions, plugins: list[DaemonSetInfo], existing: set[str]) -> Check:
    wanted = {ds.runtime_class for ds in plugins if ds.runtime_class}
    if options.runtime_class:
        wanted.add(options.runtime_class)
    missing = sorted(wanted - existing)
    if missing:
        return failed(
            "cluster.runtimeclass",
            f"RuntimeClass {', '.join(missing)} not found (needed by --runtime-class or the device plugin)",
            "create it (handler nvidia): `gpuctl render | kubectl apply -f -`",
        )
    if wanted:
        return passed("cluster.runtimeclass", f"RuntimeClass {', '.join(sorted(wanted))} present")
    if "nvidia" in existing:
        return passed("cluster.runtimeclass", "RuntimeClass nvidia present")
    return skipped("cluster.runtimeclass", "no RuntimeClass needed (nvidia is the default runtime)")


def _gpu_taints(gpu_nodes: list[NodeInfo]) -> list[Taint]:
    taints = {
        taint
        for node in gpu_nodes
        for taint in node.taints
        if taint.effect in ENFORCED_EFFECTS and not taint.key.startswith(AUTO_TOLERATED_PREFIX)
    }
    return sorted(taints, key=str)


def daemonset_tolerations(daemonsets: list[DaemonSetInfo], gpu_nodes: list[NodeInfo]) -> Check:
    taints = _gpu_taints(gpu_nodes)
    if not daemonsets:
        return skipped("cluster.daemonset-tolerations", "no GPU DaemonSet")
    if not taints:
        return passed("cluster.daemonset-tolerations", "GPU nodes carry no NoSchedule/NoExecute taint")
    gaps = [(ds, taint) for ds in daemonsets for taint in taints if not ds.tolerates(taint)]
    if not gaps:
        return passed(
            "cluster.daemonset-tolerations", f"{len(daemonsets)} GPU DaemonSet(s) tolerate the GPU taints"
        )
    text = "; ".join(f"{ds.namespace}/{ds.name} does not tolerate {taint}" for ds, taint in gaps)
    # Name the tolerations that are missing, not one the DaemonSets may already have.
    missing = sorted({f"`key: {taint.key}, operator: Exists, effect: {taint.effect}`" for _, taint in gaps})
    hint = (
        f"add the toleration {' and '.join(missing)} to those DaemonSets; "
        "`gpuctl taint-gpu-nodes --dry-run` audits them"
    )
    # The gate alone is a warning (see node_checks.taint_toleration).
    make = (
        failed
        if any(ds.is_device_plugin and not is_gate_taint_key(taint.key) for ds, taint in gaps)
        else warned
    )
    return make("cluster.daemonset-tolerations", text[:500], hint)


def driver_drift(node_results: list[NodeResult], labels_by_node: dict[str, str]) -> Check:
    versions: Counter[str] = Counter()
    for node in node_results:
        version = node.driver_version or labels_by_node.get(node.name, "")
        if version and "," not in version:
            versions[version] += 1
    if not versions:
        return skipped("cluster.driver-drift", "no driver version known (no verification pod ran)")
    if len(versions) == 1:
        return passed("cluster.driver-drift", f"all GPU nodes run driver {next(iter(versions))}")
    spread = ", ".join(f"{version} on {count} node(s)" for version, count in versions.most_common())
    return warned(
        "cluster.driver-drift",
        f"driver versions differ between nodes: {spread}",
        "pin one driver version for all GPU nodes (gpuctl_driver_version in the inventory), "
        "then `gpuctl bootstrap --phase host -i INVENTORY`",
    )
