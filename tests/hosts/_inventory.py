"""The Ansible inventory (and known_hosts) `up` writes for its nodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.hosts._rootfs import ADMIN_USER

GROUP = "gpu_nodes"


def write_known_hosts(path: Path, host_keys: dict[str, str]) -> None:
    """`host_keys`: node address → "ssh-ed25519 AAAA... comment"."""
    lines = [f"{address} {' '.join(key.split()[:2])}\n" for address, key in host_keys.items()]
    path.write_text("".join(lines))


def inventory_document(
    nodes: list[dict[str, Any]], key_file: Path, known_hosts: Path, group_vars: dict[str, Any]
) -> dict[str, Any]:
    hosts = {
        node["name"]: {
            "ansible_host": node["address"],
            "ansible_user": ADMIN_USER,
            "ansible_ssh_private_key_file": str(key_file),
            "ansible_ssh_common_args": (f"-o UserKnownHostsFile={known_hosts} -o StrictHostKeyChecking=yes"),
            "ansible_python_interpreter": "/usr/bin/python3",
            "test_node_root": node["root"],
        }
        for node in nodes
    }
    return {"all": {"children": {GROUP: {"hosts": hosts, "vars": group_vars}}}}


def write_inventory(path: Path, document: dict[str, Any]) -> None:
    header = f"# Written by `python -m tests.hosts.nodes up`; removed by `... down --inventory {path}`.\n"
    path.write_text(header + yaml.safe_dump(document, sort_keys=False, width=200))
