"""Run a playbook through ansible-runner's Python API in a private data dir (private_data.py).

Secrets: the become password reaches ansible-playbook only through ansible-runner's pexpect
answer to the `BECOME password:` prompt. `suppress_env_files` keeps it out of `env/passwords`, and
ansible-playbook's environment, which ansible-runner records in `artifacts/<ident>/command`, holds
only the variables private_data.child_environment lets through (never GPUCTL_BECOME_PASSWORD); a
kept private data dir is scrubbed of secrets and private keys before it is kept (scrub_kept).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuctl.hosts.private_data import (
    child_environment,
    private_data_dir,
    scrub_kept,
    secret_extra_vars,
    secret_values,
)

BECOME_PROMPT = r"^BECOME password.*:\s*?$"
RUN_IDENT = "bootstrap"
SSH_TIMEOUT_S = 10
# Ansible's default minus `-C`: compressing a LAN session only costs CPU at both ends. ControlPersist
# keeps one SSH connection per host for the whole run; pipelining (below) sends each module over it.
SSH_ARGS = "-o ControlMaster=auto -o ControlPersist=60s"
CLOSE_WAIT_S = 5.0  # for the SSH connections to close once the run is over
PREFORK_CALLBACK = "gpuctl_prefork"  # playbooks/callback_plugins/gpuctl_prefork.py
JOIN_POLL_S = 0.2
CANCEL_GRACE_S = 10.0
REAP_WAIT_S = 5.0


@dataclass(frozen=True)
class RunRequest:
    playbook: Path
    inventory: Path
    limit: str | None = None
    tags: str | None = None
    check: bool = False
    extra_args: tuple[str, ...] = ()
    become_password: str | None = None
    keep_artifacts: bool = False
    # Names of variables of gpuctl's environment that ansible-playbook gets too (--pass-env).
    passed_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunOutcome:
    status: str  # ansible-runner's: successful | failed | canceled | timeout
    rc: int
    interrupted: bool  # Ctrl-C, or the caller's cancel event
    artifacts_dir: Path | None  # kept only with keep_artifacts


# OpenSSH multiplexing sockets are Unix sockets: their path (the directory plus a 40-character
# hash) must fit in 108 bytes, which a long $TMPDIR breaks.
MAX_CONTROL_DIR_LEN = 60


def control_path_dir(private_dir: Path) -> Path:
    """Where ssh's control sockets go: inside the private dir when its path is short enough."""
    inside = private_dir / "cp"
    if len(str(inside)) <= MAX_CONTROL_DIR_LEN:
        return inside
    return Path(tempfile.mkdtemp(prefix="gpuctl-cp-", dir="/tmp"))


def runner_envvars(private_dir: Path, control_dir: Path | None = None) -> dict[str, str]:
    """Ansible settings for every run: host keys checked, no retry files, fast failure on dead hosts."""
    python_bin = str(Path(sys.executable).parent)
    return {
        # ansible-playbook is looked up on PATH: prefer the one installed next to gpuctl.
        "PATH": python_bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_TIMEOUT": str(SSH_TIMEOUT_S),
        "ANSIBLE_PIPELINING": "True",
        "ANSIBLE_SSH_ARGS": SSH_ARGS,
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(control_dir or private_dir / "cp"),
        "ANSIBLE_LOCAL_TEMP": str(private_dir / "tmp"),
        "ANSIBLE_NOCOLOR": "True",
        # The playbooks' prefork callback is opt-in (it tunes ansible-playbook's garbage
        # collector): enabled for gpuctl's runs, beside any callbacks the user enabled.
        "ANSIBLE_CALLBACKS_ENABLED": ",".join(
            filter(None, (os.environ.get("ANSIBLE_CALLBACKS_ENABLED", ""), PREFORK_CALLBACK))
        ),
    }


def command_line(request: RunRequest) -> str:
    args: list[str] = []
    if request.check:
        args += ["--check", "--diff"]
    if request.become_password is not None:
        args.append("--ask-become-pass")
    args += request.extra_args
    return shlex.join(args)


def run_playbook(
    request: RunRequest,
    *,
    on_event: Callable[[Mapping[str, Any]], None],
    cancel: threading.Event,
) -> RunOutcome:
    """Run the playbook in a worker thread; Ctrl-C in this thread cancels it cleanly."""
    private_dir = private_data_dir(keep=request.keep_artifacts)
    control_dir = control_path_dir(private_dir)
    outcome: dict[str, Any] = {"finished": threading.Event()}
    worker = threading.Thread(
        target=_run,
        args=(request,),
        kwargs={
            "private_dir": private_dir,
            "control_dir": control_dir,
            "on_event": on_event,
            "cancel": cancel,
            "outcome": outcome,
        },
        name="ansible-runner",
        daemon=True,
    )
    interrupted = False
    worker.start()
    # Wait on an Event, not Thread.join: a KeyboardInterrupt inside join() can leave the thread
    # looking dead while ansible-playbook still runs.
    finished: threading.Event = outcome["finished"]
    while not finished.is_set():
        try:
            finished.wait(JOIN_POLL_S)
        except KeyboardInterrupt:
            interrupted = True
            cancel.set()
    close_connections(control_dir)
    if not control_dir.is_relative_to(private_dir):
        shutil.rmtree(control_dir, ignore_errors=True)
    if request.keep_artifacts:
        secrets = secret_values(os.environ, request.become_password) | secret_extra_vars(request.extra_args)
        scrub_kept(private_dir, secrets)
    else:
        shutil.rmtree(private_dir, ignore_errors=True)
    if "error" in outcome:
        raise outcome["error"]
    cancelled = interrupted or cancel.is_set()
    return RunOutcome(
        status="canceled" if cancelled else str(outcome.get("status", "failed")),
        rc=int(outcome.get("rc") or 0),
        interrupted=cancelled,
        artifacts_dir=private_dir if request.keep_artifacts else None,
    )


def close_connections(control_dir: Path) -> None:
    """Close the run's SSH connections now: ControlPersist would keep each open for another 60 s,
    with its socket gone along with the run's private dir, so that no later run could use it."""
    sockets = [path for path in control_dir.glob("*") if path.is_socket()]
    closing = []
    for socket_path in sockets:
        with contextlib.suppress(OSError):  # no ssh on PATH: nothing was opened with it either
            command = ["ssh", "-o", f"ControlPath={socket_path}", "-O", "exit", "gpuctl-run"]
            closing.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    deadline = time.monotonic() + CLOSE_WAIT_S
    for process in closing:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _run(
    request: RunRequest,
    *,
    private_dir: Path,
    control_dir: Path,
    on_event: Callable[[Mapping[str, Any]], None],
    cancel: threading.Event,
    outcome: dict[str, Any],
) -> None:
    import ansible_runner

    def handle(event: Mapping[str, Any]) -> bool:
        on_event(event)
        return True  # also write it to the artifacts (kept with --keep-artifacts)

    cancel_check = _GracefulCancel(cancel)
    try:
        runner = ansible_runner.Runner(
            _runner_config(request, private_dir, control_dir),
            event_handler=handle,
            cancel_callback=cancel_check,
        )
        runner.run()
        outcome.update(status=runner.status, rc=runner.rc)
        cancel_check.reap()
    except Exception as error:  # handed to the calling thread, which raises it there
        outcome["error"] = error
    finally:
        outcome["finished"].set()


def _runner_config(request: RunRequest, private_dir: Path, control_dir: Path) -> Any:
    """ansible-runner's RunnerConfig for the run, ansible-playbook's environment trimmed.

    ansible_runner.run() builds the same RunnerConfig and Runner, but gives the caller no say over
    the environment, which RunnerConfig.prepare() seeds with all of os.environ: built here (the
    RunnerConfig/Runner interface ansible-runner documents), `env` is replaced after prepare().
    """
    from ansible_runner import RunnerConfig

    settings = runner_envvars(private_dir, control_dir)
    passwords = {BECOME_PROMPT: request.become_password} if request.become_password is not None else {}
    config = RunnerConfig(
        private_data_dir=str(private_dir),
        project_dir=str(request.playbook.parent),
        playbook=str(request.playbook),
        inventory=str(request.inventory.resolve()),
        limit=request.limit or None,
        tags=request.tags or None,
        cmdline=command_line(request) or None,
        envvars=settings,
        passwords=passwords,
        suppress_env_files=True,
        ident=RUN_IDENT,
        quiet=True,
    )
    config.prepare()
    config.env = child_environment(
        config.env, inherited=dict(os.environ), settings=settings, passed=request.passed_env
    )
    return config


class _GracefulCancel:
    """ansible-runner's cancel callback: interrupt ansible-playbook first, SIGKILL only if it lingers.

    ansible-runner cancels by SIGKILL to ansible-playbook's process group, but Ansible's workers run
    in sessions of their own and would outlive it; SIGINT lets ansible-playbook stop them itself.
    """

    def __init__(self, cancel: threading.Event) -> None:
        self._cancel = cancel
        self._interrupted_at: float | None = None
        self._workers: list[int] = []

    def __call__(self) -> bool:
        if not self._cancel.is_set():
            return False
        if self._interrupted_at is None:
            self._interrupted_at = time.monotonic()
            playbooks = _ansible_children(os.getpid())
            self._workers = [worker for pid in playbooks for worker in _ansible_children(pid)]
            for pid in playbooks:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGINT)
        return time.monotonic() - self._interrupted_at > CANCEL_GRACE_S

    def reap(self) -> None:
        """After the run: give the workers of a cancelled run a moment, then kill the survivors."""
        deadline = time.monotonic() + REAP_WAIT_S
        while self._workers and time.monotonic() < deadline:
            self._workers = [pid for pid in self._workers if _is_ansible(pid)]
            time.sleep(0.1)
        for pid in self._workers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _is_ansible(pid: int) -> bool:
    try:
        return b"ansible-playbook" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _ansible_children(parent: int) -> list[int]:
    """PIDs of ansible-playbook processes whose parent is `parent` (Linux /proc; none elsewhere)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent and _is_ansible(int(stat.parent.name)):
                found.append(int(stat.parent.name))
    return found
