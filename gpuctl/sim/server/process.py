"""`gpuctl sim up/down` as processes: serve in the foreground until a signal, or detach and
record the server's pid in a sidecar file next to the kubeconfig so `down` can stop it."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuctl.errors import ConfigError, GpuctlError
from gpuctl.held_signals import held_signals
from gpuctl.output_paths import Input, OutputFile, refuse_inputs
from gpuctl.private_files import open_private_log, read_text_nofollow, refuse_link, write_private_file
from gpuctl.shell import command_line
from gpuctl.sim.scenario import Scenario
from gpuctl.sim.server.host_links import links_from_inventory, unreachable_warning, with_host_nodes
from gpuctl.sim.server.http_server import SimServer, authority_data, kubeconfig_text
from gpuctl.sim.server.kubeconfig_merge import (
    KubeconfigClaim,
    check_kubeconfig_target,
    claim_kubeconfig,
    release_kubeconfig,
)
from gpuctl.sim.server.malloc_arenas import limit_malloc_arenas, trim_every

DETACH_TIMEOUT_SECONDS = 30.0
STOP_TIMEOUT_SECONDS = 10.0
TRIM_SECONDS = 2.0  # how often the serving process hands its free heap memory back (malloc_trim)
SWITCH_INTERVAL_S = 0.02  # how often the serving process's threads may take the GIL from another


@dataclass(frozen=True)
class SimRecord:
    """What the sidecar file next to the kubeconfig says about a running simulated cluster."""

    pid: int
    url: str
    kubeconfig: Path
    log: Path | None = None
    created_kubeconfig: bool = True  # False: the sim's entries were merged into the user's file
    previous_context: str = ""
    nodes: int = 0  # the nodes it serves, host-backed ones included
    warnings: tuple[str, ...] = ()  # what `sim up` warns of once it serves (hosts that did not answer)

    @property
    def claim(self) -> KubeconfigClaim:
        return KubeconfigClaim(self.kubeconfig, self.created_kubeconfig, self.previous_context)


def sidecar_path(kubeconfig: Path) -> Path:
    return kubeconfig.with_name(kubeconfig.name + ".sim.json")


def log_path(kubeconfig: Path) -> Path:
    return kubeconfig.with_name(kubeconfig.name + ".sim.log")


def _write_record(record: SimRecord) -> None:
    data = {
        "pid": record.pid,
        "url": record.url,
        "kubeconfig": str(record.kubeconfig),
        "created_kubeconfig": record.created_kubeconfig,
        "previous_context": record.previous_context,
        "nodes": record.nodes,
        "warnings": list(record.warnings),
    }
    write_private_file(sidecar_path(record.kubeconfig), json.dumps(data))


def read_record(kubeconfig: Path) -> SimRecord | None:
    """The sidecar's record; None when there is none, or it is unreadable or a symbolic link."""
    try:
        data = json.loads(read_text_nofollow(sidecar_path(kubeconfig)))
        return SimRecord(
            pid=int(data["pid"]),
            url=str(data["url"]),
            kubeconfig=kubeconfig,
            created_kubeconfig=bool(data.get("created_kubeconfig", True)),
            previous_context=str(data.get("previous_context", "")),
            nodes=int(data.get("nodes", 0)),
            warnings=tuple(str(line) for line in data.get("warnings") or ()),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def missing_folder(kubeconfig: Path) -> Path | None:
    """The first folder on the way to `kubeconfig` that does not exist yet (None: all exist)."""
    missing = None
    for folder in kubeconfig.absolute().parents:
        if folder.exists():
            break
        missing = folder
    return missing


def prepare_kubeconfig_path(kubeconfig: Path, read: Sequence[Input] = ()) -> Path:
    """The absolute kubeconfig path, its folder created; exit 2 when it cannot be written there,
    when it or its record or log is one of the files `sim up` reads (`read`), or when it names a
    file that is not a kubeconfig (gpuctl never overwrites one of those)."""
    written = [kubeconfig, sidecar_path(kubeconfig), log_path(kubeconfig)]
    refuse_inputs(
        (OutputFile("--kubeconfig", kubeconfig, path) for path in written),
        read,
        hint="pass a --kubeconfig path of its own, e.g. `gpuctl sim up --kubeconfig ~/.kube/gpuctl-sim.yaml`",
    )
    kubeconfig = kubeconfig.absolute()
    if kubeconfig.is_dir():
        raise ConfigError(
            f"{kubeconfig}: --kubeconfig is a directory, expected a file path",
            hint="name a file, e.g. "
            f"`{command_line('gpuctl', 'sim', 'up', '--kubeconfig', kubeconfig / 'sim.kubeconfig')}`",
        )
    check_kubeconfig_target(kubeconfig)
    for sidecar in (sidecar_path(kubeconfig), log_path(kubeconfig)):
        refuse_link(sidecar)
    try:
        kubeconfig.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(
            f"{kubeconfig}: cannot create the kubeconfig's folder: {error.strerror or error}",
            hint="pass a --kubeconfig path in a writable folder (e.g. ~/.kube/gpuctl-sim.yaml)",
        ) from error
    return kubeconfig


def _write_kubeconfig(server: SimServer, kubeconfig: Path) -> KubeconfigClaim:
    try:
        certificate = server.certificate.certificate_pem
        return claim_kubeconfig(
            kubeconfig,
            server.url,
            server.token,
            authority_data(certificate),
            kubeconfig_text(server.url, server.token, certificate),
        )
    except OSError as error:
        raise ConfigError(
            f"{kubeconfig}: cannot write the kubeconfig: {error.strerror or error}",
            hint="pass a --kubeconfig path in a writable folder (e.g. ~/.kube/gpuctl-sim.yaml)",
        ) from error


def _load_schemas() -> None:
    """Load the API's object schemas, the Pod's field tree (the client's models package, 0.3 s of
    CPU, then the Pod's ~100 models, imported one by one on first use: 0.2 s) while the cluster
    waits for its first client, not inside the first create that validates its fields; frozen with
    the rest of what lives as long as the process. Pods are the kind clients create by the thousand."""
    from gpuctl.sim.api import kinds, validation

    pods = kinds.lookup("", "v1", "pods")
    assert pods is not None
    validation.kind_shape(pods)
    gc.freeze()


def serve(
    scenario: Scenario,
    kubeconfig: Path,
    on_ready: Callable[[SimServer], None],
    hosts_from: Path | None = None,
) -> None:
    """Serve until interrupted (the caller turns SIGINT/SIGTERM into KeyboardInterrupt); the
    sidecar exists exactly while the server is up."""
    kubeconfig = prepare_kubeconfig_path(kubeconfig)
    limit_malloc_arenas()  # before its threads start allocating (sim/server/malloc_arenas.py)
    trim_every(TRIM_SECONDS)
    links = links_from_inventory(hosts_from) if hosts_from is not None else []
    server = SimServer(with_host_nodes(scenario, links), host_links=links)
    claim: KubeconfigClaim | None = None
    try:
        server.start()
        # This process serves one cluster until it ends: its start-up state lives as long, so
        # the cyclic collector need not walk thousands of nodes and pods at every collection.
        gc.freeze()
        # Its request threads, watches and the engine share one GIL on few cores: handing it over
        # every 5 ms (the default) had a thread wait on it several times per request. 20 ms cut
        # the sim's CPU per pod lifecycle by a tenth (bench/sim_scale.py); a watch event or an
        # answer waits at most that much longer behind a long scheduler pass.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        threading.Thread(target=_load_schemas, name="gpuctl-sim-schemas", daemon=True).start()
        claim = _write_kubeconfig(server, kubeconfig)
        _write_record(
            SimRecord(
                pid=os.getpid(),
                url=server.url,
                kubeconfig=kubeconfig,
                created_kubeconfig=claim.created,
                previous_context=claim.previous_context,
                nodes=len(server.cluster.node_specs),
                warnings=serving_warnings(server),
            )
        )
        on_ready(server)
        threading.Event().wait()  # until KeyboardInterrupt
    except OSError as error:
        raise GpuctlError(
            f"cannot serve the simulated cluster: {error}",
            hint="stop a detached one with `gpuctl sim down`, then rerun `gpuctl sim up`",
        ) from error
    finally:
        server.stop()
        if claim is not None:
            release_kubeconfig(claim)
        record = read_record(kubeconfig)
        if record is not None and record.pid == os.getpid():
            sidecar_path(kubeconfig).unlink(missing_ok=True)


def serving_warnings(server: SimServer) -> tuple[str, ...]:
    """One line per host behind a node that did not answer at start, naming it and why."""
    return tuple(unreachable_warning(node, why) for node, why in server.cluster.prober.unreachable().items())


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        # a zombie child of ours has exited already
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return False
    return True


def _is_sim_process(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return pid_alive(pid)  # no /proc (macOS): trust the pid
    return b"sim" in cmdline and any(b"gpuctl" in part for part in cmdline)


def start_detached(scenario_file: Path | None, kubeconfig: Path, hosts_from: Path | None = None) -> SimRecord:
    """Start `gpuctl sim up` in a new session and return once it serves."""
    kubeconfig = prepare_kubeconfig_path(kubeconfig)
    existing = read_record(kubeconfig)
    if existing is not None and pid_alive(existing.pid) and _is_sim_process(existing.pid):
        raise ConfigError(
            f"{kubeconfig}: a simulated cluster is already running for this kubeconfig (pid {existing.pid})",
            hint=f"stop it with `{command_line('gpuctl', 'sim', 'down', '--kubeconfig', kubeconfig)}`",
        )
    sidecar_path(kubeconfig).unlink(missing_ok=True)
    command = [sys.executable, "-m", "gpuctl", "sim", "up", "--kubeconfig", str(kubeconfig)]
    if scenario_file is not None:
        command += ["--scenario", str(scenario_file.absolute())]
    if hosts_from is not None:
        command += ["--hosts-from", str(hosts_from.absolute())]
    log = log_path(kubeconfig)
    try:
        log_file = open_private_log(log)
    except OSError as error:
        raise ConfigError(
            f"{kubeconfig}: cannot write next to the kubeconfig ({log.name}): {error.strerror or error}",
            hint="pass a --kubeconfig path in a writable folder (e.g. ~/.kube/gpuctl-sim.yaml)",
        ) from error
    child: subprocess.Popen[bytes] | None = None
    try:
        # Ctrl-C or SIGTERM while the server is started arrives once `child` is assigned
        with held_signals(), log_file:
            child = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return _serving(child, kubeconfig, log)
    except BaseException:
        # Timed out, or Ctrl-C/SIGTERM while it started: the caller was never told of a cluster,
        # so none may be left running in its own session, nor a kubeconfig pointing at it.
        if child is not None:
            _abandon(child, kubeconfig)
        raise


def _serving(child: subprocess.Popen[bytes], kubeconfig: Path, log: Path) -> SimRecord:
    """The record of `child` once it serves; GpuctlError when it ends first or takes too long."""
    deadline = time.monotonic() + DETACH_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        record = read_record(kubeconfig)
        if record is not None and record.pid == child.pid:
            return dataclasses.replace(record, kubeconfig=kubeconfig, log=log)
        if child.poll() is not None:
            detail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
            message = next(
                (line for line in detail if line.startswith("error:")), detail[-1] if detail else ""
            )
            raise GpuctlError(
                f"the simulated cluster did not start: {message.removeprefix('error: ')}", hint=f"see {log}"
            )
        time.sleep(0.05)
    raise GpuctlError(
        f"the simulated cluster did not start within {DETACH_TIMEOUT_SECONDS:.0f} s", hint=f"see {log}"
    )


def _abandon(child: subprocess.Popen[bytes], kubeconfig: Path) -> None:
    """Stop `child` and take back whatever of the kubeconfig and record it wrote."""
    _terminate(child.pid)
    child.wait()
    record = read_record(kubeconfig)
    if record is not None and record.pid == child.pid:
        _remove_traces(record)


def _terminate(pid: int) -> None:
    """SIGTERM (the server then takes its kubeconfig and record back itself), SIGKILL if it
    has not ended within STOP_TIMEOUT_SECONDS."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _remove_traces(record: SimRecord) -> None:
    """What a server that was killed (or crashed) could not take back: its kubeconfig or its
    entries in a merged one, and its record."""
    release_kubeconfig(record.claim)
    sidecar_path(record.kubeconfig).unlink(missing_ok=True)


def stop_detached(kubeconfig: Path) -> tuple[SimRecord | None, str]:
    """Stop the simulated cluster that wrote `kubeconfig` (SIGTERM, then SIGKILL) and remove what
    `sim up` wrote: its own kubeconfig (or its entries in a merged one), the record and the log.
    Nothing running is no error: the record (None) and why come back for the caller to say."""
    kubeconfig = kubeconfig.absolute()
    sidecar = sidecar_path(kubeconfig)
    record = read_record(kubeconfig)
    if record is None:
        return None, f"no simulated cluster recorded for {kubeconfig}: nothing to stop"
    why = ""
    if not pid_alive(record.pid) or not _is_sim_process(record.pid):
        why = f"the simulated cluster recorded in {sidecar.name} (pid {record.pid}) was not running"
    else:
        _terminate(record.pid)
    _remove_traces(record)
    log_path(kubeconfig).unlink(missing_ok=True)
    return record, why
