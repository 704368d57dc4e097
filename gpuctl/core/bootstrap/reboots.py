"""Which hosts the host phase may reboot.

The driver role reboots a host whose new driver needs it (`gpuctl_reboot_policy: if_needed`). A
host that is a node of a live cluster must not go down undrained: when the kubeconfig gpuctl would
use reaches a cluster, the inventory hosts that are its nodes (by gpuctl_node_name, name, hostname
label or address) are passed to the playbooks as held (HELD_HOSTS_VAR), and a needed reboot there
is reported with the drain command and the command that then reboots it, unless `--reboot` says
to reboot them anyway. A cluster that cannot be asked holds every host the same way. Without a
kubeconfig the inventory's policy decides alone, as it always has.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuctl.errors import GpuctlError
from gpuctl.hosts.inventory import NODE_NAME_VAR, Host, load_inventory
from gpuctl.kube.nodes import NodeInfo, list_nodes
from gpuctl.shell import command_line
from gpuctl.urls import redact_url

if TYPE_CHECKING:
    from gpuctl.kube.client import ApiClient

# Read by playbooks/roles/nvidia_driver/vars/main.yml (gpuctl_driver_reboot_allowed).
HELD_HOSTS_VAR = "gpuctl_driver_reboot_held_hosts"


@dataclass(frozen=True)
class RebootPlan:
    """`nodes`: (inventory host, node) for the hosts that are nodes of the cluster at `cluster`;
    `unknown`: why the cluster could not be asked (every host of `hosts` is then held)."""

    hosts: tuple[str, ...] = ()
    cluster: str = ""
    nodes: tuple[tuple[str, str], ...] = ()
    reboot: bool = False  # --reboot
    unknown: str = ""

    @property
    def held(self) -> tuple[str, ...]:
        """The hosts this run must not reboot."""
        if self.reboot:
            return ()
        return self.hosts if self.unknown else tuple(host for host, _ in self.nodes)

    def extra_args(self) -> tuple[str, ...]:
        """ansible-playbook arguments that hold those hosts (none when no host is held)."""
        held = self.held
        return ("-e", json.dumps({HELD_HOSTS_VAR: list(held)})) if held else ()

    def notices(self) -> tuple[str, ...]:
        """What the run will do about reboots, said before it starts ("" where nothing changes)."""
        if self.unknown and not self.reboot:
            return (
                f"not rebooting any host: cannot tell which are nodes of a cluster ({self.unknown}); "
                "a reboot the driver needs is reported instead (--reboot allows it)",
            )
        if self.reboot:
            return tuple(
                f"will reboot {host} (node {node} of the cluster at {self.cluster}) if its NVIDIA driver "
                f"needs a reboot to load, because --reboot was given: drain it first "
                f"(`{command_line('kubectl', 'drain', node, '--ignore-daemonsets')}`)"
                for host, node in self.nodes
            )
        if not self.nodes:
            return ()
        named = ", ".join(f"{host} (node {node})" for host, node in self.nodes)
        return (
            f"not rebooting {named}: nodes of the cluster at {self.cluster} reboot only drained; "
            "a reboot the driver needs is reported instead (--reboot allows it)",
        )

    def hint(self, host: str, inventory: str) -> str:
        """For a held host whose driver needs a reboot: how to reboot it drained ("" if not held)."""
        if host not in self.held:
            return ""
        rerun = command_line(
            "gpuctl", "bootstrap", "--phase", "host", "-i", inventory, "--limit", host, "--reboot"
        )
        node = dict(self.nodes).get(host)
        if node is None:
            return (
                f"not rebooted: gpuctl could not tell whether {host} is a node of a cluster "
                f"({self.unknown}); if it is, drain it (`kubectl drain NODE --ignore-daemonsets`), "
                f"then `{rerun}`"
            )
        drain = command_line("kubectl", "drain", node, "--ignore-daemonsets")
        uncordon = command_line("kubectl", "uncordon", node)
        return (
            f"not rebooted: {host} is node {node} of the cluster at {self.cluster}; drain it (`{drain}`), "
            f"then `{rerun}`, then `{uncordon}`"
        )


def host_reboot_plan(
    api_client: ApiClient | None,
    inventory: Path,
    *,
    limit: str | None = None,
    reboot: bool = False,
    unknown: str = "",
) -> RebootPlan:
    """The plan for the inventory's hosts against the cluster `api_client` reaches; None: no
    kubeconfig (or, with `unknown`, one that could not be loaded)."""
    hosts = load_inventory(inventory, limit=limit).hosts
    if api_client is None:
        return plan_reboots(hosts, None, reboot=reboot, unknown=unknown)
    cluster = redact_url(str(api_client.configuration.host))  # shown in the plan's notices
    try:
        nodes = list_nodes(api_client)
    except GpuctlError as error:  # unreachable, or not allowed to list nodes
        return plan_reboots(hosts, None, cluster=cluster, reboot=reboot, unknown=error.message)
    return plan_reboots(hosts, nodes, cluster=cluster, reboot=reboot)


def plan_reboots(
    hosts: Iterable[Host],
    nodes: list[NodeInfo] | None,
    *,
    cluster: str = "",
    reboot: bool = False,
    unknown: str = "",
) -> RebootPlan:
    """The plan for these inventory hosts; `nodes` None: no cluster (or, with `unknown`, one that
    could not be asked)."""
    hosts = tuple(hosts)
    names = tuple(host.name for host in hosts)
    if nodes is None:
        return RebootPlan(hosts=names, cluster=cluster, reboot=reboot, unknown=unknown)
    found = ((host.name, cluster_node(host, nodes)) for host in hosts)
    matched = tuple((host, node) for host, node in found if node)
    return RebootPlan(hosts=names, cluster=cluster, nodes=matched, reboot=reboot)


def cluster_node(host: Host, nodes: list[NodeInfo]) -> str:
    """The node this host is ("" when none): any node named like it (gpuctl_node_name or inventory
    name), or whose hostname label or address is the host's. Wider than node_map's one-to-one match
    on purpose: for a reboot, any sign that the host is a node counts."""
    names = {host.name, str(host.vars.get(NODE_NAME_VAR) or host.name)}
    for node in nodes:
        if node.name in names or node.hostname in {host.name, host.address} or host.address in node.addresses:
            return node.name
    return ""
