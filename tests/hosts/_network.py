"""The test network: one bridge per harness instance in the root namespace, one netns per node.

Every instance claims a free 10.213.<slot>.0/24 (a private range checked against the routes of
this machine) by creating its bridge: `ip link add` fails when the name exists, which makes the
claim atomic between harness runs started at the same time. The nodes get no default route: the
only thing they can reach is the bridge address, where the mirror listens.
"""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass

from tests.hosts._state import HarnessState

SUBNET_PREFIX = "10.213"
FIRST_NODE_HOST = 10


@dataclass(frozen=True)
class Subnet:
    slot: int

    @property
    def network(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network(f"{SUBNET_PREFIX}.{self.slot}.0/24")

    @property
    def bridge(self) -> str:
        return f"gpuctlbr{self.slot}"

    @property
    def gateway(self) -> str:
        return f"{SUBNET_PREFIX}.{self.slot}.1"

    def node_address(self, index: int) -> str:
        return f"{SUBNET_PREFIX}.{self.slot}.{FIRST_NODE_HOST + index}"

    def netns(self, node_name: str) -> str:
        return f"gpuctl-{self.slot}-{node_name}"

    def host_veth(self, index: int) -> str:
        return f"gpuv{self.slot}n{index}"  # at most 15 characters


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=False)


def _checked_ip(*args: str) -> None:
    completed = _ip(*args)
    if completed.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)} failed: {completed.stderr.strip()}")


def _routed_networks() -> list[ipaddress.IPv4Network]:
    routes = []
    for line in _ip("-4", "route", "show", "table", "all").stdout.splitlines():
        destination = line.split()[0] if line.split() else ""
        if destination in ("default", "broadcast", "local", "unreachable"):
            destination = line.split()[1]
        try:
            routes.append(ipaddress.IPv4Network(destination, strict=False))
        except ValueError:
            continue
    return [route for route in routes if route.prefixlen > 0]


def claim_subnet(state: HarnessState) -> Subnet:
    """Create the bridge of the first free slot (recorded in `state`) and address it."""
    routed = _routed_networks()
    for slot in range(1, 255):
        subnet = Subnet(slot)
        if any(subnet.network.overlaps(route) for route in routed):
            continue
        if _ip("link", "add", subnet.bridge, "type", "bridge").returncode != 0:
            continue  # taken by a concurrent (or crashed, unrecorded) harness run
        state.record("link", name=subnet.bridge)
        _checked_ip("addr", "add", f"{subnet.gateway}/24", "dev", subnet.bridge)
        _checked_ip("link", "set", subnet.bridge, "up")
        return subnet
    raise RuntimeError(f"no free {SUBNET_PREFIX}.N.0/24 subnet for the test network")


def add_node_network(state: HarnessState, subnet: Subnet, index: int, node_name: str) -> str:
    """Create the node's netns with eth0 on the bridge; returns the netns name."""
    netns = subnet.netns(node_name)
    state.record("netns", name=netns)
    _checked_ip("netns", "add", netns)
    veth = subnet.host_veth(index)
    state.record("link", name=veth)
    _checked_ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", netns)
    _checked_ip("link", "set", veth, "master", subnet.bridge, "up")
    _checked_ip("-n", netns, "addr", "add", f"{subnet.node_address(index)}/24", "dev", "eth0")
    _checked_ip("-n", netns, "link", "set", "eth0", "up")
    _checked_ip("-n", netns, "link", "set", "lo", "up")
    return netns
