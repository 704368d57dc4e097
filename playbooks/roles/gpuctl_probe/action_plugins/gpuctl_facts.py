"""gpuctl_facts: the facts gpuctl's roles read, gathered by files/host_facts.py in one command and
set as the setup module sets them (ansible_facts.distribution, .kernel, .python.executable, ...).

`setup`, even with only the collectors the roles read, cost each host ~300 ms of CPU per run, over
a tenth of a no-op host bootstrap's work: measured in bench/host-speed-log.md. Read-only, so it
runs in check mode too. The interpreter is the host's ansible_python_interpreter where one is set,
else the first of PYTHONS the host has, as Ansible's discovery would pick on the supported systems.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from ansible.plugins.action import ActionBase

SCRIPT = (Path(__file__).resolve().parents[1] / "files" / "host_facts.py").read_text(encoding="utf-8")
PYTHONS = ("python3", "/usr/libexec/platform-python", "python")  # platform-python: EL 8 without python3


def facts_command(interpreter: str) -> str:
    """The shell command that prints the facts as JSON with `interpreter` ("auto...": the first found)."""
    script = shlex.quote(SCRIPT)
    if not interpreter.startswith("auto"):
        return f"{shlex.quote(interpreter)} -c {script}"
    found = " ".join(shlex.quote(python) for python in PYTHONS)
    return (
        f'for python in {found}; do command -v "$python" >/dev/null 2>&1 && exec "$python" -c {script}; '
        f'done; echo "no Python interpreter found ({", ".join(PYTHONS)})" >&2; exit 127'
    )


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        # Templated as Ansible templates it for a module ("{{ ansible_playbook_python }}", say).
        configured = (task_vars or {}).get("ansible_python_interpreter") or "auto"
        interpreter = str(self._templar.template(configured))
        answer = self._low_level_execute_command(facts_command(interpreter), sudoable=True)
        try:
            facts = json.loads(answer.get("stdout") or "")
        except ValueError:
            # The last line said, stderr's where there is one.
            said = f"{answer.get('stdout') or ''}\n{answer.get('stderr') or ''}".strip().splitlines()
            reason = said[-1] if said else "no output"
            result.update(failed=True, msg=f"reading facts failed (exit {answer.get('rc')}): {reason}")
            return result
        result.update(ansible_facts=facts, changed=False)
        return result
