"""SSH links from the simulated cluster to the real hosts behind `--hosts-from` nodes.

The same connection code and host-key checking as `gpuctl preflight` (gpuctl.hosts.ssh); one
persistent connection per host, reopened when it breaks. A probe is gpuctl's one host probe
(gpuctl.hosts.probe_script), asked only for what a node's truth needs.
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from gpuctl.hosts.host_state import ProbeOutputError, parse_probe_output
from gpuctl.hosts.inventory import NODE_NAME_VAR, load_inventory, node_name
from gpuctl.hosts.probe_script import probe_script
from gpuctl.sim.runtime.containers import Outcome
from gpuctl.sim.runtime.host_nodes import TRUTH_SECTIONS, HostTruth, truth_from_state
from gpuctl.sim.scenario import NodeSpec, Scenario

if TYPE_CHECKING:
    import paramiko

    from gpuctl.hosts.ssh import SshSettings

CONNECT_TIMEOUT_S = 5.0
COMMAND_TIMEOUT_S = 60.0  # a probe's or a signal's; a container's command runs as long as it runs
GRACE_CAP_S = 10.0  # SIGTERM to SIGKILL at most (the sim removes a deleted pod after 1 s)
CLOSE_WAIT_S = 2.0  # the sim stopping waits that long for its commands on a host to end
OUTPUT_LIMIT_BYTES = 1 << 20
READ_BYTES = 32768


def parse_probe(output: str) -> HostTruth:
    """The host's truth from the probe's answer. A host that printed none (no Python) answered SSH:
    reachable, with no working GPUs or nvidia runtime, as before it is prepared."""
    try:
        return truth_from_state(parse_probe_output(output))
    except ProbeOutputError as error:
        return HostTruth(reachable=True, detail=f"the host probe printed no answer: {error}")


@dataclass
class SshHostLink:
    """A HostLink over SSH to one inventory host: one connection, a channel per command."""

    node_name: str
    settings: SshSettings

    def __post_init__(self) -> None:
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()  # held to connect, never while a command runs
        # Its own lock: the engine starts commands and must not wait on a connect in progress.
        self._commands_lock = threading.Lock()
        self._commands: set[SshCommand] = set()  # started and not yet seen to end

    def _connected(self) -> paramiko.SSHClient:
        from gpuctl.hosts.ssh import connect

        with self._lock:
            if self._client is None:
                self._client = connect(self.settings, timeout=CONNECT_TIMEOUT_S)
            return self._client

    def _exec(self, script: str) -> tuple[str, int]:
        from gpuctl.hosts.ssh import run_script

        client = self._connected()
        try:
            result = run_script(client, script, timeout=COMMAND_TIMEOUT_S)
        except Exception:
            self._drop(client)
            raise
        return result.stdout + result.stderr, result.exit_status

    def _drop(self, client: paramiko.SSHClient | None = None) -> None:
        """Close the connection (only `client`, when given: another thread may have reopened it)."""
        with self._lock:
            if self._client is not None and client in (None, self._client):
                self._client.close()
                self._client = None

    def open_session(self) -> tuple[paramiko.Channel, paramiko.SSHClient | None]:
        """A channel for one command, and the connection opened for it alone (None: the shared
        one). sshd allows MaxSessions (10) channels per connection; a host running more long
        commands gets a connection per command beyond them."""
        import paramiko

        from gpuctl.hosts.ssh import connect

        client = self._connected()
        transport = client.get_transport()
        try:
            if transport is None or not transport.is_active():
                raise paramiko.SSHException("the connection to the host closed")
            return transport.open_session(timeout=CONNECT_TIMEOUT_S), None
        except paramiko.ChannelException:
            own = connect(self.settings, timeout=CONNECT_TIMEOUT_S)
            try:
                own_transport = own.get_transport()
                assert own_transport is not None
                return own_transport.open_session(timeout=CONNECT_TIMEOUT_S), own
            except Exception:
                own.close()
                raise
        except (paramiko.SSHException, OSError):
            self._drop(client)
            raise

    def signal_group(self, group: int, signal_name: str) -> None:
        """Send `signal_name` to the host's process group `group` (a command's session)."""
        with contextlib.suppress(Exception):  # a host gone takes the group with it
            self._exec(f"kill -{signal_name} -{group} 2>/dev/null\n")

    def probe(self) -> HostTruth:
        try:
            output, _ = self._exec(probe_script(TRUTH_SECTIONS))
            return parse_probe(output)
        except Exception as error:  # any SSH failure: the node's kubelet stopped posting
            return HostTruth(reachable=False, detail=str(error) or type(error).__name__)

    def start(self, argv: list[str]) -> SshCommand:
        command = SshCommand(self, argv)
        with self._commands_lock:
            self._commands.add(command)
        command.when_done(lambda _: self._forget(command))
        command.begin()
        return command

    def _forget(self, command: SshCommand) -> None:
        with self._commands_lock:
            self._commands.discard(command)

    def close(self) -> None:
        """Stop what still runs on the host (the sim is going away), then disconnect."""
        with self._commands_lock:
            running = list(self._commands)
        for command in running:
            command.stop(CLOSE_WAIT_S / 2)
        deadline = time.monotonic() + CLOSE_WAIT_S
        for command in running:
            command.wait_stopped(max(0.0, deadline - time.monotonic()))
        self._drop()


class SshCommand:
    """A container's command on a host: started in a session of its own (`setsid`, so its
    process group is known and the whole of it can be signalled), read by a thread of its own for
    as long as it runs. Its output is kept up to OUTPUT_LIMIT_BYTES (the newest), as the kubelet
    rotates a container's log."""

    def __init__(self, link: SshHostLink, argv: list[str]) -> None:
        self._link = link
        self._argv = argv
        self._lock = threading.Lock()
        self._output = bytearray()
        self._group: int | None = None  # the host's process group, once the command reported it
        self._reported = False  # the first line (the group) was read
        self._stop_grace: float | None = None  # set once stop() was asked
        self._outcome: Outcome | None = None
        self._listeners: list[Callable[[Outcome], None]] = []
        self._ended = threading.Event()  # the command ended, or its connection was lost
        self._thread = threading.Thread(target=self._run, name=f"gpuctl-sim-{link.node_name}", daemon=True)

    def begin(self) -> None:
        self._thread.start()

    def output(self) -> str:
        with self._lock:
            return self._output.decode(errors="replace")

    def when_done(self, callback: Callable[[Outcome], None]) -> None:
        with self._lock:
            outcome = self._outcome
            if outcome is None:
                self._listeners.append(callback)
                return
        callback(outcome)

    def stop(self, grace_seconds: float) -> None:
        with self._lock:
            if self._stop_grace is not None or self._ended.is_set():
                return
            self._stop_grace = max(0.0, min(grace_seconds, GRACE_CAP_S))
            group = self._group
        if group is not None:  # else the reading thread stops it once the host reports its group
            self._terminate_soon(group)

    def wait_stopped(self, timeout: float) -> bool:
        return self._ended.wait(timeout)

    def _terminate_soon(self, group: int) -> None:
        threading.Thread(target=self._terminate, args=(group,), daemon=True).start()

    def _terminate(self, group: int) -> None:
        """SIGTERM to the command's process group, SIGKILL once the grace is over (the kubelet's
        order); signals go over the link's shared connection, not the command's own channel."""
        self._link.signal_group(group, "TERM")
        if not self._ended.wait(self._stop_grace or 0.0):
            self._link.signal_group(group, "KILL")

    def _run(self) -> None:
        code = None
        try:
            channel, own = self._link.open_session()
        except Exception as error:
            self._append(f"failed to run on the host: {error}\n".encode())
            self._end(128)
            return
        try:
            channel.set_combine_stderr(True)
            channel.exec_command("sh -s")
            channel.sendall(_session_script(self._argv).encode())
            channel.shutdown_write()
            self._read(channel)
            code = channel.recv_exit_status()
        except Exception as error:  # the connection broke under it
            self._append(f"lost the connection to the host: {error}\n".encode())
        finally:
            channel.close()
            if own is not None:
                own.close()
        self._end(code if code is not None and code >= 0 else None)

    def _read(self, channel: paramiko.Channel) -> None:
        """The group line the session script prints first, then the command's output to its end."""
        pending = b""
        while not self._reported:
            chunk = channel.recv(READ_BYTES)
            if not chunk:
                self._append(pending)
                return
            pending += chunk
            line, newline, rest = pending.partition(b"\n")
            if newline:
                self._reported = True
                self._started(line, rest)
        while chunk := channel.recv(READ_BYTES):
            self._append(chunk)

    def _started(self, line: bytes, rest: bytes) -> None:
        text = line.decode(errors="replace").strip()
        if not text.isdigit() or int(text) <= 1:  # no setsid there: that was the command's output
            self._append(line + b"\n" + rest)
            return
        group = int(text)
        with self._lock:
            self._group = group
            stopping = self._stop_grace is not None
        self._append(rest)
        if stopping:
            self._terminate_soon(group)

    def _append(self, data: bytes) -> None:
        with self._lock:
            self._output += data
            del self._output[:-OUTPUT_LIMIT_BYTES]

    def _end(self, code: int | None) -> None:
        """The command ended with `code`. None: its connection was lost, so whether it still runs
        on the host is unknown; its pod stays as it is (as under a kubelet that stopped posting)
        and stopping it still signals its group."""
        if code is None:
            return
        with self._lock:
            outcome = self._outcome = Outcome(log=self._output.decode(errors="replace"), exit_code=code)
            listeners, self._listeners = self._listeners, []
        self._ended.set()
        for listener in listeners:
            listener(outcome)


def _session_script(argv: list[str]) -> str:
    """`argv` as the leader of a new session: its pid, printed first, is its process group."""
    inner = 'echo $$; exec "$@"'
    # `; exit`: a shell may exec the last command of its input in place, and setsid run as a
    # group leader forks and returns at once: the session would end with the command running on.
    return f"setsid sh -c {shlex.quote(inner)} gpuctl-sim {shlex.join(argv)}; exit $?\n"


def unreachable_warning(node: str, why: str) -> str:
    """What `sim up` says of a node whose host did not answer at start (the node is NotReady, as
    a real node lifecycle controller shows a node whose kubelet stopped posting)."""
    return f"warning: node {node} is NotReady: its host did not answer: {why} (it turns Ready once it does)"


def links_from_inventory(path: Path) -> list[SshHostLink]:
    """One link per host of the inventory's gpu_nodes group (host keys checked)."""
    from gpuctl.hosts.ssh import resolve

    inventory = load_inventory(path)
    return [
        SshHostLink(node_name(host), resolve(host, insecure_skip_host_key_check=False))
        for host in inventory.hosts
    ]


def with_host_nodes(scenario: Scenario, links: list[SshHostLink]) -> Scenario:
    """The scenario plus one node per linked host (its truth comes from the host, not from here)."""
    taken = {spec.name for spec in scenario.nodes}
    clashes = sorted(taken & {link.node_name for link in links})
    if clashes:
        from gpuctl.errors import ConfigError

        raise ConfigError(
            f"--hosts-from: node name(s) {', '.join(clashes)} are also in the scenario",
            hint=f"rename the scenario's nodes, or set {NODE_NAME_VAR} for those hosts",
        )
    backed = tuple(
        NodeSpec(name=link.node_name, gpus=0, driver="missing", toolkit="missing") for link in links
    )
    return replace(scenario, nodes=scenario.nodes + backed)
