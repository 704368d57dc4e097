"""SSH to an inventory host with paramiko, resolving settings the way `ssh` under Ansible would.

Order: the inventory (ansible_host/port/user/key, `-o` options in ansible_ssh_common_args and
ansible_ssh_extra_args), then ~/.ssh/config, then ssh's defaults; ssh-agent and the default
identity files are tried too. Host keys are checked against the inventory's UserKnownHostsFile,
~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts; an unknown key is refused unless the caller
explicitly opts out.
"""

from __future__ import annotations

import getpass
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpuctl.hosts.inventory import Host
from gpuctl.shell import command_line

if TYPE_CHECKING:
    import paramiko

DEFAULT_KNOWN_HOSTS = ("~/.ssh/known_hosts", "/etc/ssh/ssh_known_hosts")


@dataclass(frozen=True)
class SshSettings:
    """How to reach one host, after merging inventory, ~/.ssh/config and defaults."""

    hostname: str
    port: int
    user: str
    key_files: tuple[str, ...]
    known_hosts_files: tuple[str, ...]
    check_host_key: bool
    proxy_command: str | None


@dataclass(frozen=True)
class RemoteResult:
    stdout: str
    stderr: str
    exit_status: int


class SshFailure(Exception):
    """The host could not be reached or logged into: a one-line message and a hint."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def resolve(host: Host, *, insecure_skip_host_key_check: bool, ssh_config: Path | None = None) -> SshSettings:
    import paramiko

    config_path = ssh_config or Path("~/.ssh/config").expanduser()
    config = paramiko.SSHConfig.from_path(str(config_path)) if config_path.is_file() else paramiko.SSHConfig()
    looked = config.lookup(host.address)
    identity = [str(Path(path).expanduser()) for path in looked.get("identityfile", [])]
    known = host.known_hosts_files or tuple(str(looked.get("userknownhostsfile", "")).split())
    strict = host.strict_host_key_checking
    if strict is None and "stricthostkeychecking" in looked:
        strict = str(looked["stricthostkeychecking"]).lower() not in ("no", "off", "false")
    return SshSettings(
        hostname=str(looked.get("hostname", host.address)),
        port=host.port or int(looked.get("port", 22)),
        user=host.user or str(looked.get("user") or getpass.getuser()),
        key_files=tuple(path for path in (*host.key_files, *identity) if Path(path).is_file()),
        known_hosts_files=tuple(
            dict.fromkeys(str(Path(p).expanduser()) for p in (*known, *DEFAULT_KNOWN_HOSTS))
        ),
        check_host_key=not insecure_skip_host_key_check and strict is not False,
        proxy_command=host.proxy_command or _optional(looked.get("proxycommand")),
    )


def _optional(value: object) -> str | None:
    return None if value in (None, "", "none") else str(value)


class _AcceptWithoutSaving:
    """Accept an unknown host key for this connection only (the explicit insecure opt-out)."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:  # noqa: ARG002 - paramiko's policy interface
        return None


def connect(settings: SshSettings, *, timeout: float) -> paramiko.SSHClient:
    """An authenticated client, or SshFailure naming the host and what went wrong."""
    import paramiko

    client = paramiko.SSHClient()
    if settings.check_host_key:
        for path in settings.known_hosts_files:
            if Path(path).is_file():
                client.get_host_keys().load(path)
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
    else:
        client.set_missing_host_key_policy(_AcceptWithoutSaving())  # type: ignore[arg-type]
    target = f"{settings.user}@{settings.hostname}:{settings.port}"
    try:
        sock = paramiko.ProxyCommand(settings.proxy_command) if settings.proxy_command else None
        client.connect(
            settings.hostname,
            port=settings.port,
            username=settings.user,
            key_filename=list(settings.key_files) or None,  # type: ignore[arg-type]  # str or list at runtime
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            allow_agent=True,
            look_for_keys=True,
            sock=sock,
        )
    except Exception as error:
        client.close()
        raise _failure(error, target, settings) from error
    return client


def _failure(error: Exception, target: str, settings: SshSettings) -> SshFailure:
    import paramiko

    if isinstance(error, paramiko.BadHostKeyException):
        return SshFailure(
            f"{target}: host key does not match the known_hosts entry (possible man-in-the-middle)",
            f"if the host was reinstalled: `{command_line('ssh-keygen', '-R', settings.hostname)}`, "
            "then record the new key",
        )
    if isinstance(error, paramiko.AuthenticationException):
        return SshFailure(
            f"{target}: authentication failed",
            "check ansible_user and ansible_ssh_private_key_file, or load the key into ssh-agent (`ssh-add`)",
        )
    if isinstance(error, paramiko.SSHException) and "not found in known_hosts" in str(error):
        files = ", ".join(settings.known_hosts_files)
        return SshFailure(
            f"{target}: host key unknown (not in {files})",
            f"verify and record it (`{command_line('ssh-keyscan', settings.hostname)}`), "
            "or --insecure-skip-host-key-check",
        )
    if isinstance(error, (socket.timeout, TimeoutError)):
        return SshFailure(
            f"{target}: connection timed out", "check the address, the network and that sshd runs"
        )
    detail = (
        getattr(error, "strerror", None) or str(error).splitlines()[0] if str(error) else type(error).__name__
    )
    return SshFailure(
        f"{target}: cannot connect: {detail}", "check ansible_host/ansible_port and that sshd runs"
    )


def run_script(client: paramiko.SSHClient, script: str, *, timeout: float) -> RemoteResult:
    """Feed `script` to `sh -s` on the host (no quoting games with long command lines)."""
    stdin, stdout, stderr = client.exec_command("sh -s", timeout=timeout)
    stdin.write(script)
    stdin.channel.shutdown_write()
    out = stdout.read().decode(errors="replace")
    err = stderr.read().decode(errors="replace")
    return RemoteResult(out, err, stdout.channel.recv_exit_status())
