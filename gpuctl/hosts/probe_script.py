"""gpuctl's one host probe as a shell script for SSH (`gpuctl preflight`, the sim's host links).

The probe is the roles' own script (playbooks/roles/gpuctl_probe/files/host_probe.py, which they
run through `raw`); here it goes to the host's Python inside a shell script fed to `sh -s`: one
SSH channel, one round trip. Its answer is read by gpuctl.hosts.host_state.
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Sequence

from gpuctl.package_data import playbooks_dir

PROBE_FILE = ("roles", "gpuctl_probe", "files", "host_probe.py")
# As the gpuctl_facts action picks one: platform-python on EL 8 without python3.
PYTHONS = ("python3", "/usr/libexec/platform-python", "python")
END_MARK = "GPUCTL_PROBE"


@functools.cache
def probe_source() -> str:
    return playbooks_dir().joinpath(*PROBE_FILE).read_text(encoding="utf-8")


def probe_script(sections: Sequence[str] | None = None) -> str:
    """A POSIX shell script running the probe for the `host` sections named (all of them by
    default) with the first Python the host has; it prints one JSON line, or says why not on stderr
    and exits 127."""
    request = shlex.quote(json.dumps({"host": list(sections) if sections is not None else True}))
    pythons = " ".join(shlex.quote(python) for python in PYTHONS)
    return (
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:$PATH\n"
        f"for python in {pythons}; do\n"
        '  command -v "$python" >/dev/null 2>&1 || continue\n'
        f"  exec \"$python\" - {request} <<'{END_MARK}'\n"
        f"{probe_source()}\n{END_MARK}\n"
        "done\n"
        f'echo "no Python interpreter found ({", ".join(PYTHONS)})" >&2\n'
        "exit 127\n"
    )
