"""A real ansible-playbook run on this machine against localhost, with this Python: how tests run
the roles and the Ansible plugins beside the playbooks without test nodes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ANSIBLE_PLAYBOOK = Path(sys.executable).with_name("ansible-playbook")


def run_playbook(
    playbook: Path, *args: str, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`ansible-playbook ARGS PLAYBOOK` for localhost over the local connection, with this Python as
    its interpreter, output captured; `env` replaces this process's environment (colour always off)."""
    argv = [str(ANSIBLE_PLAYBOOK), "-i", "localhost,", "-c", "local",
            "-e", f"ansible_python_interpreter={sys.executable}", *args, str(playbook)]  # fmt: skip
    environment = {**(os.environ if env is None else env), "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run(argv, capture_output=True, text=True, env=environment, timeout=timeout, check=False)
