"""Inventory host ↔ Kubernetes node, and how many GPUs each GPU node must show.

A host is the node named by its `gpuctl_node_name` variable, else the node named like the
inventory host, else the one node whose hostname label or address matches the host's address.
A host matching no node, or two, is a one-line error naming the host and the candidates (exit 2),
raised before anything is written.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuctl.errors import ConfigError
from gpuctl.hosts.inventory import NODE_NAME_VAR, Host, node_name
from gpuctl.kube.nodes import GFD_COUNT_LABEL, NodeInfo, as_int


def _candidates(host: Host, nodes: list[NodeInfo]) -> list[NodeInfo]:
    named = [node for node in nodes if node.name == node_name(host)]
    if named or host.vars.get(NODE_NAME_VAR):  # an explicit name is the only candidate
        return named
    keys = {host.name, host.address}
    return [node for node in nodes if node.hostname in keys or host.address in node.addresses]


def map_hosts(hosts: Iterable[Host], nodes: list[NodeInfo], inventory: str) -> dict[str, NodeInfo]:
    """inventory host name → its node; ConfigError for the first host that maps to 0 or 2+ nodes."""
    mapping: dict[str, NodeInfo] = {}
    for host in hosts:
        found = _candidates(host, nodes)
        if len(found) == 1:
            mapping[host.name] = found[0]
            continue
        wanted = host.vars.get(NODE_NAME_VAR)
        how = f"{NODE_NAME_VAR}={wanted!r}" if wanted else f"name, hostname label or address {host.address}"
        if not found:
            close = ", ".join(sorted(node.name for node in nodes)[:8]) or "none"
            raise ConfigError(
                f"{inventory}: host {host.name} matches no Kubernetes node by {how} (nodes: {close})",
                hint=f"set {NODE_NAME_VAR}: NODE for {host.name} in the inventory "
                "(node names: `kubectl get nodes -o wide`)",
            )
        names = ", ".join(node.name for node in found)
        raise ConfigError(
            f"{inventory}: host {host.name} matches several nodes by {how}: {names}",
            hint=f"set {NODE_NAME_VAR}: NODE for {host.name} in the inventory",
        )
    return mapping


def labelled_gpus(node: NodeInfo) -> int | None:
    """GPUs a node without an inventory must show: its nvidia.com/gpu.count label, if any."""
    count = as_int(node.labels.get(GFD_COUNT_LABEL))
    return count if count > 0 else None
