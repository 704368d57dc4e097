"""`gpuctl bootstrap --phase host`: the host playbooks through ansible-runner, summarised per host."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from gpuctl.core.bootstrap.host_diagnosis import HostDiagnosis, host_diagnosis
from gpuctl.core.bootstrap.reboots import RebootPlan
from gpuctl.errors import ExitCode
from gpuctl.hosts.driver_state import DriverState, from_role_report
from gpuctl.hosts.events import FailedTask, ProgressState
from gpuctl.hosts.inventory import Host, load_inventory
from gpuctl.hosts.private_data import KEPT_CONTENTS
from gpuctl.hosts.runner import RunRequest, run_playbook
from gpuctl.hosts.settings import known_settings, validate_inventory
from gpuctl.hosts.ssh import check_key_files
from gpuctl.package_data import playbooks_dir, role_defaults_files
from gpuctl.shell import command_line

HOST_PLAYBOOK = "site.yml"


@dataclass(frozen=True)
class HostOutcome:
    """Ansible's recap for one host (`ok` counts tasks; `succeeded` is the verdict).

    `completed`: the playbook ran to its recap. A cancelled run, or one ansible stopped before its
    recap, leaves every host incomplete: the tasks that passed do not make a host prepared.
    """

    name: str
    ok_tasks: int
    changed: int
    failed: int
    unreachable: int
    skipped: int
    completed: bool = True
    driver: DriverState | None = None  # what the driver role reported (nvidia-smi, DKMS)
    diagnosis: HostDiagnosis | None = None  # the cause and fix found in its failed task's output
    changed_tasks: tuple[str, ...] = ()  # the tasks that changed it (in check mode: would change it)

    @property
    def succeeded(self) -> bool:
        """The host is prepared: its play ran to the end with no failed or unreachable task."""
        return self.completed and self.failed == 0 and self.unreachable == 0


@dataclass(frozen=True)
class BootstrapResult:
    phase: str
    check: bool
    inventory: str
    playbook: str
    status: str
    hosts: tuple[HostOutcome, ...]
    failed_tasks: tuple[FailedTask, ...]
    duration_s: float
    interrupted: bool = False
    error: str = ""  # ansible stopped before running tasks (syntax error, missing role ...)
    artifacts_dir: str | None = None
    warnings: tuple[str, ...] = ()
    rejected_arguments: bool = False  # ansible-playbook refused its command line (extra args after --)

    @property
    def artifacts_note(self) -> str:
        """Where the run's kept artefacts are and what they hold ("" when none were kept)."""
        return f"artifacts ({KEPT_CONTENTS}) kept in {self.artifacts_dir}" if self.artifacts_dir else ""

    @property
    def ok(self) -> bool:
        return self.status == "successful" and not self.error and all(host.succeeded for host in self.hosts)

    @property
    def exit_code(self) -> ExitCode:
        if self.interrupted:
            return ExitCode.INTERRUPTED
        if self.rejected_arguments:
            return ExitCode.USAGE
        if self.ok:
            return ExitCode.OK
        if self.hosts and all(host.unreachable for host in self.hosts):
            return ExitCode.UNREACHABLE
        return ExitCode.CHECK_FAILED


def run_host_bootstrap(
    *,
    inventory_path: Path,
    limit: str | None = None,
    tags: str | None = None,
    check: bool = False,
    extra_args: tuple[str, ...] = (),
    become_password: str | None = None,
    keep_artifacts: bool = False,
    passed_env: tuple[str, ...] = (),
    reboot_plan: RebootPlan | None = None,
    playbook: Path | None = None,
    on_progress: Callable[[ProgressState], None] | None = None,
    cancel: threading.Event | None = None,
) -> BootstrapResult:
    """Validate the inventory (ConfigError before any host is touched), then run the playbook.
    `reboot_plan`: the hosts not to reboot (reboots.py); None leaves it to the inventory's policy."""
    inventory = load_inventory(inventory_path, limit=limit)
    warnings = validate_inventory(inventory, known_settings(role_defaults_files()))
    for host in inventory.hosts:
        check_key_files(host)
    playbook_path = playbook or playbooks_dir() / HOST_PLAYBOOK
    state, on_event = _progress(inventory.hosts, on_progress)
    plan = reboot_plan or RebootPlan()
    request = RunRequest(
        playbook=playbook_path,
        inventory=inventory_path,
        limit=limit,
        tags=tags,
        check=check,
        extra_args=(*plan.extra_args(), *extra_args),
        become_password=become_password,
        keep_artifacts=keep_artifacts,
        passed_env=passed_env,
    )
    started = time.monotonic()
    outcome = run_playbook(request, on_event=on_event, cancel=cancel or threading.Event())
    hosts = _with_reboot_hints(
        host_outcomes(state, {host.name for host in inventory.hosts}), plan, inventory_path
    )
    return BootstrapResult(
        phase="host",
        check=check,
        inventory=str(inventory_path),
        playbook=str(playbook_path),
        status=outcome.status,
        hosts=hosts,
        failed_tasks=tuple(state.failed_tasks),
        duration_s=round(time.monotonic() - started, 2),
        interrupted=outcome.interrupted,
        error="" if state.final_stats_seen or outcome.interrupted else _early_error(state, outcome.rc),
        artifacts_dir=str(outcome.artifacts_dir) if outcome.artifacts_dir else None,
        warnings=inventory.warnings + warnings,
        rejected_arguments=not state.final_stats_seen and _usage_error(state) != "",
    )


def _progress(
    hosts: tuple[Host, ...], on_progress: Callable[[ProgressState], None] | None
) -> tuple[ProgressState, Callable[[object], None]]:
    """The run's progress state and the ansible-runner event handler that feeds it."""
    state = ProgressState()
    for host in hosts:
        state.add_host(host.name)

    def on_event(event: object) -> None:
        if isinstance(event, dict):
            state.apply(event)
        if on_progress is not None:
            on_progress(state)

    return state, on_event


def host_outcomes(state: ProgressState, names: set[str]) -> tuple[HostOutcome, ...]:
    """Per-host outcomes of the inventory's hosts, each with the cause and fix found in its failed
    task's output; only a run that reached its recap completes them."""
    _, progress = state.snapshot()
    reports = state.host_stats("gpuctl_driver_state")
    outcomes = (
        HostOutcome(
            p.name,
            p.ok,
            p.changed,
            p.failed,
            p.unreachable,
            p.skipped,
            state.final_stats_seen,
            diagnosis=host_diagnosis(p.name, state.failed_tasks),
            changed_tasks=tuple(task for host, task in state.changed_tasks if host == p.name),
        )
        for p in progress
        if p.name in names
    )
    return tuple(
        replace(host, driver=from_role_report(reports[host.name])) if host.name in reports else host
        for host in outcomes
    )


def _with_reboot_hints(
    hosts: tuple[HostOutcome, ...], plan: RebootPlan, inventory: Path
) -> tuple[HostOutcome, ...]:
    """Each host whose driver needs the reboot this run held back, with how to reboot it drained."""
    return tuple(
        replace(host, driver=replace(host.driver, hint=plan.hint(host.name, str(inventory))))
        if host.driver is not None and host.driver.reboot_required
        else host
        for host in hosts
    )


def _usage_error(state: ProgressState) -> str:
    """ansible-playbook's own command-line error (argparse: `ansible-playbook: error: ...`)."""
    return state.usage_error


def _early_error(state: ProgressState, rc: int) -> str:
    """Why ansible-playbook stopped before its recap: its last ERROR line, else its last line."""
    lines = list(state.tail)
    errors = [line.strip() for line in lines if "ERROR" in line]
    text = _usage_error(state) or (errors[-1] if errors else (lines[-1].strip() if lines else ""))
    return " ".join(f"ansible-playbook exited with {rc}: {text or 'no output'}".split())


# Ansible's words when sudo on the host asks for a password it was not given, or rejects it.
_SUDO_PASSWORD = re.compile(r"(Missing|Incorrect) sudo password", re.IGNORECASE)


def failed_task_hint(task: FailedTask, inventory: str) -> str:
    password = _SUDO_PASSWORD.search(task.message)
    rerun = command_line(
        "gpuctl", "bootstrap", "--phase", "host", "--inventory", inventory, "--limit", task.host
    )
    if password:
        problem = "asks for a password" if password.group(1).lower() == "missing" else "refused the password"
        return (
            f"sudo on {task.host} {problem}: set GPUCTL_BECOME_PASSWORD or pass --ask-become-pass, "
            f"then `{rerun}`"
        )
    if task.unreachable:
        probe = command_line("gpuctl", "preflight", "--inventory", inventory, "--limit", task.host)
        return f"check SSH to the host: `{probe}`"
    return f"fix the cause, then `{rerun}`"
