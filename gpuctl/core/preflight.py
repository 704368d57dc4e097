"""`gpuctl preflight`: read-only SSH probes of every GPU host, in parallel, one remote command each
(gpuctl's one host probe, which the roles run too)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from gpuctl.errors import ExitCode
from gpuctl.hosts.findings import Finding
from gpuctl.hosts.host_state import ProbeOutputError, parse_probe_output
from gpuctl.hosts.inventory import Host, load_inventory
from gpuctl.hosts.probe_script import probe_script
from gpuctl.hosts.probes import host_findings
from gpuctl.hosts.settings import known_settings, validate_inventory
from gpuctl.hosts.ssh import SshFailure, SshSettings, check_key_files, connect, resolve, run_script
from gpuctl.package_data import role_defaults_files

CONNECT_TIMEOUT_S = 10.0
SCRIPT_TIMEOUT_S = 90.0
MAX_PARALLEL_HOSTS = 32


@dataclass(frozen=True)
class HostReport:
    name: str
    address: str
    reachable: bool
    findings: tuple[Finding, ...]
    pci_gpus: int | None = None  # NVIDIA GPUs on the PCI bus, None when the probe did not run

    @property
    def ok(self) -> bool:
        """The host can be bootstrapped: reachable and no failed finding."""
        return self.reachable and all(finding.status != "fail" for finding in self.findings)


@dataclass(frozen=True)
class PreflightResult:
    inventory: str
    hosts: tuple[HostReport, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(host.ok for host in self.hosts)

    @property
    def exit_code(self) -> ExitCode:
        if not any(host.reachable for host in self.hosts):
            return ExitCode.UNREACHABLE
        return ExitCode.OK if self.ok else ExitCode.CHECK_FAILED


def run_preflight(
    *,
    inventory_path: Path,
    limit: str | None = None,
    insecure_skip_host_key_check: bool = False,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ssh_config: Path | None = None,
) -> PreflightResult:
    """Validate the inventory (ConfigError before any connection), then probe every host."""
    inventory = load_inventory(inventory_path, limit=limit)
    warnings = validate_inventory(inventory, known_settings(role_defaults_files()))
    for host in inventory.hosts:
        check_key_files(host)
    workers = min(MAX_PARALLEL_HOSTS, len(inventory.hosts))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="preflight") as pool:
        reports = pool.map(
            lambda host: probe_host(
                host,
                insecure_skip_host_key_check=insecure_skip_host_key_check,
                connect_timeout_s=connect_timeout_s,
                ssh_config=ssh_config,
            ),
            inventory.hosts,
        )
        hosts = tuple(reports)
    return PreflightResult(inventory=str(inventory_path), hosts=hosts, warnings=inventory.warnings + warnings)


def probe_host(
    host: Host,
    *,
    insecure_skip_host_key_check: bool,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    ssh_config: Path | None = None,
) -> HostReport:
    """Connect, run the probe once, and turn what it read into findings."""
    settings = resolve(host, insecure_skip_host_key_check=insecure_skip_host_key_check, ssh_config=ssh_config)
    try:
        client = connect(settings, timeout=connect_timeout_s)
    except SshFailure as failure:
        return HostReport(
            host.name, settings.hostname, False, (Finding("ssh", "fail", failure.message, failure.hint),)
        )
    try:
        result = run_script(client, probe_script(), timeout=SCRIPT_TIMEOUT_S)
    except Exception as error:  # any transport failure is reported on this host, never a traceback
        message = (
            f"{settings.user}@{settings.hostname}: the probe script did not finish: {error or 'timed out'}"
        )
        finding = Finding("ssh", "fail", message, "check the host's load and rerun `gpuctl preflight`")
        return HostReport(host.name, settings.hostname, True, (finding,))
    finally:
        client.close()
    try:
        state = parse_probe_output(result.stdout)
    except ProbeOutputError:
        said = (result.stderr.strip().splitlines() or [result.stdout.strip() or "no output"])[-1]
        finding = Finding(
            "probe",
            "fail",
            f"the probe script did not answer (exit {result.exit_status}): {said}",
            "install python3 on the host (Ansible needs it too), then rerun `gpuctl preflight`",
        )
        return HostReport(host.name, settings.hostname, True, (_ssh_finding(settings), finding))
    findings = [_ssh_finding(settings), *host_findings(host.name, settings.user, state, host.vars)]
    return HostReport(host.name, settings.hostname, True, tuple(findings), len(state.gpus))


def _ssh_finding(settings: SshSettings) -> Finding:
    target = f"{settings.user}@{settings.hostname}:{settings.port}"
    if settings.check_host_key:
        return Finding("ssh", "pass", f"connected to {target}, host key verified")
    return Finding(
        "ssh",
        "warn",
        f"connected to {target} WITHOUT checking its host key",
        hint="record the host key in known_hosts, then drop the insecure option",
    )
