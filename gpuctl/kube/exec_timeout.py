"""Run a kubeconfig's credential plugin with a time limit:
`python -I exec_timeout.py SECONDS COMMAND [ARG ...]`.

gpuctl runs every `users[].user.exec` plugin through this script (exec_plugins.py): the kubernetes
client runs a plugin without a time limit, and one that never returns (a login waiting for a
browser nobody opens, a hung cloud CLI) hung gpuctl for ever. Standard library only, as it runs
with `python -I`, which imports nothing from the folder it runs in (the kubeconfig's).

The plugin's output is passed on once it has exited: the client reads it to its end, which a
process the plugin left behind would hold back while it keeps the pipe open. When the limit
passes, the plugin is killed (with its process group, where no terminal is there to answer its
prompts) and this exits with TIMED_OUT and no output.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

TIMED_OUT = 124  # timeout(1)'s status
NOT_FOUND = 127  # a shell's, for a command that cannot be run
NOT_EXECUTABLE = 126


def main(argv: list[str]) -> int:
    seconds, command = float(argv[0]), argv[1:]
    # A person at a terminal may have to answer the plugin (a device-code login): it keeps the
    # terminal, and its own process group, and only it is killed.
    interactive = sys.stdin.isatty()
    try:
        plugin = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=None if sys.stderr.isatty() else subprocess.PIPE,
            start_new_session=not interactive,
        )
    except OSError as error:
        sys.stderr.write(f"{command[0]}: {error.strerror}\n")
        return NOT_EXECUTABLE if isinstance(error, PermissionError) else NOT_FOUND
    try:
        output, errors = plugin.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(plugin, group=not interactive)
        return TIMED_OUT
    sys.stdout.buffer.write(output)
    if errors:
        sys.stderr.buffer.write(errors)
    return plugin.returncode if plugin.returncode >= 0 else 128 - plugin.returncode


def _kill(plugin: subprocess.Popen[bytes], *, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(plugin.pid, signal.SIGKILL)
        else:
            plugin.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        plugin.wait(timeout=1)  # the process only: its pipes may stay open in what it left behind


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
