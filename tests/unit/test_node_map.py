"""Inventory host ↔ Kubernetes node (gpuctl bootstrap, sim --hosts-from): the rules in order."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpuctl.core.bootstrap.node_map import map_hosts
from gpuctl.errors import ConfigError
from gpuctl.hosts.inventory import Host, load_inventory, node_name
from gpuctl.hosts.settings import known_settings, validate_inventory
from gpuctl.kube.nodes import NodeInfo, node_from_json
from gpuctl.package_data import role_defaults_files


def _node(name: str, hostname: str = "", address: str = "") -> NodeInfo:
    return node_from_json(
        {
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": hostname or name}},
            "status": {"addresses": [{"type": "InternalIP", "address": address}] if address else []},
        }
    )


NODES = [_node("gpu-a"), _node("ip-10-0-0-7", hostname="worker-7", address="10.0.0.7"), _node("cpu-0")]


def _host(name: str, address: str = "192.0.2.1", **variables: str) -> Host:
    return Host(name=name, address=address, vars=variables)


def test_each_rule_in_turn() -> None:
    hosts = [
        _host("anything", gpuctl_node_name="cpu-0"),  # the explicit variable
        _host("gpu-a"),  # the inventory name
        _host("worker-7", address="10.9.9.9"),  # the hostname label
    ]
    mapping = map_hosts(hosts, NODES, "hosts.yml")
    assert {host: node.name for host, node in mapping.items()} == {
        "anything": "cpu-0",
        "gpu-a": "gpu-a",
        "worker-7": "ip-10-0-0-7",
    }
    by_address = map_hosts([_host("h7", address="10.0.0.7")], NODES, "hosts.yml")
    assert by_address["h7"].name == "ip-10-0-0-7"
    assert node_name(hosts[0]) == "cpu-0"
    assert node_name(hosts[1]) == "gpu-a"


def test_an_explicit_name_that_matches_nothing_does_not_fall_back() -> None:
    with pytest.raises(ConfigError, match="gpuctl_node_name='gpu-x'"):
        map_hosts([_host("gpu-a", gpuctl_node_name="gpu-x")], NODES, "hosts.yml")


def test_two_candidates_are_an_error_naming_both() -> None:
    twins = [_node("n1", hostname="box"), _node("n2", hostname="box")]
    with pytest.raises(ConfigError, match=r"several nodes.*n1, n2"):
        map_hosts([_host("box")], twins, "hosts.yml")


def test_gpuctl_node_name_is_a_known_setting(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yml"
    host = {"ansible_host": "192.0.2.1", "gpuctl_node_name": "gpu-a"}
    path.write_text(yaml.safe_dump({"all": {"children": {"gpu_nodes": {"hosts": {"node-a": host}}}}}))
    warnings = validate_inventory(load_inventory(path), known_settings(role_defaults_files()))
    assert not [warning for warning in warnings if "gpuctl_node_name" in warning]
