"""The gpuctl_facts action against Ansible's own setup module, both run over SSH on a real test node:
the facts the roles read must be the same (the action replaced setup in the roles, docs/hosts.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.hosts.nodes import TestNode

REPO = Path(__file__).resolve().parents[2]
ACTIONS = REPO / "playbooks" / "roles" / "gpuctl_probe" / "action_plugins"
SETUP_SUBSET = "gather_subset=!all,!min,distribution,platform,python,service_mgr"  # what the roles gathered


def _facts(node: TestNode, module: str, args: str = "") -> dict[str, Any]:
    # ssh's control sockets in a short directory: under HOME in a pytest-xdist worker's tmp_path
    # their path passes the 108 bytes a Unix socket's may have.
    with tempfile.TemporaryDirectory(prefix="cp-", dir="/tmp") as control_dir:
        env = {
            **os.environ,
            "ANSIBLE_HOST_KEY_CHECKING": "True",
            "ANSIBLE_ACTION_PLUGINS": str(ACTIONS),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_SSH_CONTROL_PATH_DIR": control_dir,
        }
        ansible = Path(sys.executable).with_name("ansible")
        argv = [str(ansible), "-i", str(node.inventory), node.name, "--become", "-m", module]
        result = subprocess.run(argv + (["-a", args] if args else []), capture_output=True, text=True,
                                env=env, timeout=120, check=False)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    # "<host> | SUCCESS => {the result as JSON}"
    assert result.stdout.startswith(f"{node.name} | SUCCESS => "), result.stdout
    facts: dict[str, Any] = json.loads(result.stdout.split(" => ", 1)[1])["ansible_facts"]
    return facts


@pytest.mark.hosts
def test_the_facts_action_reads_what_setup_reads(test_nodes: list[TestNode]) -> None:
    node = test_nodes[0]
    ours, setup = _facts(node, "gpuctl_facts"), _facts(node, "setup", SETUP_SUBSET)
    assert set(ours) == {
        "ansible_distribution", "ansible_distribution_version", "ansible_distribution_major_version",
        "ansible_distribution_release", "ansible_os_family", "ansible_kernel", "ansible_architecture",
        "ansible_python", "ansible_service_mgr",
    }  # fmt: skip
    for name, value in ours.items():
        if name == "ansible_python":  # setup's has more keys (version_info, has_sslcontext)
            version = {part: setup[name]["version"][part] for part in ("major", "minor", "micro")}
            assert (value["executable"], value["type"], value["version"]) == (
                setup[name]["executable"],
                setup[name]["type"],
                version,
            )
        else:
            assert value == setup[name], name
    assert (ours["ansible_distribution"], ours["ansible_service_mgr"]) == ("Debian", "systemd")
