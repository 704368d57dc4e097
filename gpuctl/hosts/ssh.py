"""SSH to an inventory host with paramiko, resolving settings the way `ssh` under Ansible would.

Order: the inventory (ansible_host/port/user/key, `-o` options in ansible_ssh_common_args and
ansible_ssh_extra_args), then ~/.ssh/config, then ssh's defaults; ssh-agent and the default
identity files are tried too. Host keys are checked against the inventory's UserKnownHostsFile,
~/.ssh/known_hosts and /etc/ssh/ssh_known_hosts; an unknown key is refused unless the caller
explicitly opts out.

This is the boundary to paramiko: its log records and warnings are kept off the user's terminal
and each of its exceptions becomes one SshFailure line whose hint fits the cause (a key the host
does not accept is not a wrong port). The keys are read here, before connecting, so an unreadable
or passphrase-protected key is named as such, not as whatever paramiko last tried.
"""

from __future__ import annotations

import getpass
import logging
import socket
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError
from gpuctl.hosts.inventory import Host
from gpuctl.shell import command_line

if TYPE_CHECKING:
    import paramiko

DEFAULT_KNOWN_HOSTS = ("~/.ssh/known_hosts", "/etc/ssh/ssh_known_hosts")
# The identity files ssh tries when none is configured (DSA keys are gone from OpenSSH).
DEFAULT_IDENTITIES = ("~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa")


def _paramiko() -> ModuleType:
    """paramiko, quiet: its import-time deprecation warnings (ciphers it still lists) and its log
    records (`Exception (client): ...`, tracebacks at ERROR) never reach stderr; _failure says
    what went wrong in one line."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import paramiko
    logger = logging.getLogger("paramiko")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = False
    return paramiko


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
    default_key_files: tuple[str, ...] = field(default=())  # ~/.ssh/id_*: tried, never required

    @property
    def target(self) -> str:
        return f"{self.user}@{self.hostname}:{self.port}"


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


def check_key_files(host: Host) -> None:
    """The inventory's key file of `host` exists (ssh would only warn and try other keys, and the
    host's refusal would then blame the wrong thing); ConfigError (exit 2) naming host and field."""
    for path in host.key_files:
        if "{{" not in path and not Path(path).is_file():  # a Jinja template is Ansible's to render
            why = "is a folder" if Path(path).is_dir() else "no such file"
            raise ConfigError(
                f"host {host.name}: {host.key_var}: {path}: {why}",
                hint=f"point {host.key_var} of {host.name} at its private key, then rerun",
            )


def resolve(host: Host, *, insecure_skip_host_key_check: bool, ssh_config: Path | None = None) -> SshSettings:
    lib = _paramiko()
    check_key_files(host)
    config_path = ssh_config or Path("~/.ssh/config").expanduser()
    config = lib.SSHConfig.from_path(str(config_path)) if config_path.is_file() else lib.SSHConfig()
    looked = config.lookup(host.address)
    identity = [str(Path(path).expanduser()) for path in looked.get("identityfile", [])]
    known = host.known_hosts_files or tuple(str(looked.get("userknownhostsfile", "")).split())
    strict = host.strict_host_key_checking
    if strict is None and "stricthostkeychecking" in looked:
        strict = str(looked["stricthostkeychecking"]).lower() not in ("no", "off", "false")
    key_files = tuple(dict.fromkeys(path for path in (*host.key_files, *identity) if Path(path).is_file()))
    defaults = (str(Path(path).expanduser()) for path in DEFAULT_IDENTITIES)
    return SshSettings(
        hostname=str(looked.get("hostname", host.address)),
        port=host.port or _config_port(looked.get("port"), config_path),
        user=host.user or str(looked.get("user") or getpass.getuser()),
        key_files=key_files,
        known_hosts_files=tuple(
            dict.fromkeys(str(Path(p).expanduser()) for p in (*known, *DEFAULT_KNOWN_HOSTS))
        ),
        check_host_key=not insecure_skip_host_key_check and strict is not False,
        proxy_command=host.proxy_command or _optional(looked.get("proxycommand")),
        default_key_files=tuple(path for path in defaults if Path(path).is_file() and path not in key_files),
    )


def _config_port(value: object, config_path: Path) -> int:
    """The Port of ~/.ssh/config (22 when unset), a TCP port number or ConfigError."""
    if value is None:
        return 22
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 65536:
        raise ConfigError(
            f"{config_path}: Port {text}: must be a TCP port number (1-65535)",
            hint=f"fix the Port line in {config_path}",
        )
    return int(text)


def _optional(value: object) -> str | None:
    return None if value in (None, "", "none") else str(value)


class _AcceptWithoutSaving:
    """Accept an unknown host key for this connection only (the explicit insecure opt-out)."""

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:  # noqa: ARG002 - paramiko's policy interface
        return None


@dataclass(frozen=True)
class _Keys:
    """The keys to offer, in ssh's order (configured files, then the agent's, then ~/.ssh/id_*),
    and the configured files left out because they are passphrase-protected."""

    offered: tuple[Any, ...]  # paramiko.PKey
    encrypted: tuple[str, ...]


def _keys(lib: ModuleType, settings: SshSettings) -> _Keys:
    try:
        agent = tuple(lib.Agent().get_keys())
    except (lib.SSHException, OSError):  # an SSH_AUTH_SOCK nothing answers on
        agent = ()
    configured, encrypted = [], []
    for path in settings.key_files:
        try:
            configured.append(_read_key(lib, path))
        except lib.PasswordRequiredException:
            encrypted.append(path)
        except (lib.SSHException, ValueError, OSError, UnicodeError) as error:
            detail = getattr(error, "strerror", None) or str(error).splitlines()[0] or type(error).__name__
            check = command_line("ssh-keygen", "-y", "-f", path)
            hint = f"check ansible_ssh_private_key_file: `{check}` must print its public key"
            raise SshFailure(f"{settings.target}: cannot read key {path}: {detail}", hint) from error
    if encrypted and not agent:
        raise SshFailure(
            f"{settings.target}: key {encrypted[0]} is passphrase-protected and no ssh-agent offers a key",
            f"load it into ssh-agent (`{command_line('ssh-add', encrypted[0])}`), then rerun",
        )
    defaults = []
    for path in settings.default_key_files:  # as ssh does, a default key that cannot be read is skipped
        try:
            defaults.append(_read_key(lib, path))
        except (lib.SSHException, ValueError, OSError, UnicodeError):
            continue
    return _Keys((*configured, *agent, *defaults), tuple(encrypted))


def _read_key(lib: ModuleType, path: str) -> Any:
    """The private key in `path` (paramiko.PKey); PasswordRequiredException when it is
    passphrase-protected (an OpenSSH-format key says so itself, a PEM one through cryptography's
    TypeError)."""
    try:
        return lib.PKey.from_path(path)
    except TypeError as error:
        if "encrypted" in str(error):
            raise lib.PasswordRequiredException(str(error)) from error
        raise ValueError(str(error)) from error


def _strategy(lib: ModuleType, settings: SshSettings, keys: _Keys) -> Any:
    from paramiko.auth_strategy import AuthStrategy, InMemoryPrivateKey

    class OfferKeys(AuthStrategy):
        def get_sources(self) -> Any:
            for key in keys.offered:
                yield InMemoryPrivateKey(settings.user, key)

    return OfferKeys(ssh_config=lib.SSHConfig())


def connect(settings: SshSettings, *, timeout: float) -> paramiko.SSHClient:
    """An authenticated client, or SshFailure naming the host and what went wrong."""
    lib = _paramiko()
    keys = _keys(lib, settings)
    client: paramiko.SSHClient = lib.SSHClient()
    if settings.check_host_key:
        for path in settings.known_hosts_files:
            if Path(path).is_file():
                client.get_host_keys().load(path)
        client.set_missing_host_key_policy(lib.RejectPolicy())
    else:
        client.set_missing_host_key_policy(_AcceptWithoutSaving())  # type: ignore[arg-type]
    try:
        sock = lib.ProxyCommand(settings.proxy_command) if settings.proxy_command else None
        client.connect(
            settings.hostname,
            port=settings.port,
            username=settings.user,
            timeout=timeout,
            banner_timeout=timeout,
            auth_timeout=timeout,
            sock=sock,
            auth_strategy=_strategy(lib, settings, keys),
        )
    except Exception as error:  # every failure of the transport becomes one line
        client.close()
        raise _failure(error, settings, keys) from error
    return client


def _failure(error: Exception, settings: SshSettings, keys: _Keys) -> SshFailure:
    import paramiko

    if isinstance(error, paramiko.AuthenticationException) and not keys.offered:
        # said once the host answered: an unreachable host is the first thing to fix
        return SshFailure(
            f"{settings.target}: no SSH key to offer (none configured, none in ssh-agent, no ~/.ssh/id_*)",
            "set ansible_ssh_private_key_file for the host, or load its key into ssh-agent (`ssh-add KEY`)",
        )
    if isinstance(error, paramiko.AuthenticationException):
        return _auth_failure(error, settings, keys)
    if isinstance(error, paramiko.BadHostKeyException):
        return SshFailure(
            f"{settings.target}: host key does not match the known_hosts entry (possible man-in-the-middle)",
            f"if the host was reinstalled: `{command_line('ssh-keygen', '-R', settings.hostname)}`, "
            "then record the new key",
        )
    return _transport_failure(error, settings)


def _auth_failure(error: Exception, settings: SshSettings, keys: _Keys) -> SshFailure:
    """The host refused every key: name the keys and the user; a host that takes no keys at all
    says which methods it takes."""
    from paramiko import BadAuthenticationType

    results = [outcome.result for outcome in getattr(error, "result", ())]
    allowed = next((r.allowed_types for r in (*results, error) if isinstance(r, BadAuthenticationType)), None)
    user_host = f"{settings.user}@{settings.hostname}"
    if allowed is not None and "publickey" not in allowed:
        return SshFailure(
            f"{settings.target}: the host accepts no SSH keys for {settings.user} (it allows: "
            f"{', '.join(allowed) or 'nothing'})",
            f"allow publickey authentication in the host's sshd_config, then authorise the key "
            f"(`{command_line('ssh-copy-id', '-i', 'KEY', user_host)}`)",
        )
    offered = len(keys.offered)
    skipped = f"; {', '.join(keys.encrypted)} not offered: passphrase-protected" if keys.encrypted else ""
    return SshFailure(
        f"{settings.target}: the host accepted none of the {offered} SSH key(s) offered for "
        f"{settings.user}{skipped}",
        f"authorise the key for {settings.user} on the host "
        f"(`{command_line('ssh-copy-id', '-i', 'KEY', '-p', str(settings.port), user_host)}`), or check "
        "ansible_user and ansible_ssh_private_key_file (or `ssh-add` the key that is authorised)",
    )


def _transport_failure(error: Exception, settings: SshSettings) -> SshFailure:
    """Reaching the host's sshd failed: the host key, the network, the name, the port, the server."""
    import paramiko

    target, message = settings.target, str(error).splitlines()[0] if str(error).strip() else ""
    if isinstance(error, paramiko.SSHException) and "not found in known_hosts" in message:
        files = ", ".join(settings.known_hosts_files)
        return SshFailure(
            f"{target}: host key unknown (not in {files})",
            f"verify and record it (`{command_line('ssh-keyscan', settings.hostname)}`), "
            "or --insecure-skip-host-key-check",
        )
    if isinstance(error, (socket.timeout, TimeoutError)) or "timeout" in message.lower():
        return SshFailure(
            f"{target}: connection timed out", "check the address, the network and that sshd runs"
        )
    if isinstance(error, socket.gaierror):
        return SshFailure(
            f"{target}: cannot resolve {settings.hostname}: {error.strerror or message}",
            "check ansible_host (or the host's name) and DNS",
        )
    return _server_failure(error, message, settings)


def _server_failure(error: Exception, message: str, settings: SshSettings) -> SshFailure:
    """Something answered (or a ProxyCommand ran) but no SSH session came of it."""
    import paramiko

    target, port = settings.target, str(settings.port)
    network_hint = "check ansible_host/ansible_port and that sshd runs"
    if isinstance(error, paramiko.ProxyCommandFailure):
        return SshFailure(
            f"{target}: the ProxyCommand failed: {message}",
            "check ProxyCommand/ProxyJump in ansible_ssh_common_args or ~/.ssh/config",
        )
    if "protocol banner" in message or isinstance(error, EOFError):
        return SshFailure(
            f"{target}: no SSH server answered there (the connection closed before the SSH greeting)",
            f"{network_hint} on that port (`{command_line('ssh', '-p', port, settings.hostname)}`)",
        )
    if isinstance(error, getattr(paramiko.ssh_exception, "IncompatiblePeer", ())):
        return SshFailure(
            f"{target}: no SSH algorithm in common with the host: {message}",
            "compare with `ssh -vvv` to the host; update its sshd or paramiko",
        )
    # paramiko's "Unable to connect to port 22 on ADDRESS" holds the socket's own reason per address
    reasons = error.errors if isinstance(error, paramiko.ssh_exception.NoValidConnectionsError) else {}
    detail = next((reason.strerror for reason in reasons.values() if isinstance(reason, OSError)), None)
    detail = detail or getattr(error, "strerror", None) or message or type(error).__name__
    return SshFailure(f"{target}: cannot connect: {detail}", network_hint)


def run_script(client: paramiko.SSHClient, script: str, *, timeout: float) -> RemoteResult:
    """Feed `script` to `sh -s` on the host (no quoting games with long command lines)."""
    stdin, stdout, stderr = client.exec_command("sh -s", timeout=timeout)
    stdin.write(script)
    stdin.channel.shutdown_write()
    out = stdout.read().decode(errors="replace")
    err = stderr.read().decode(errors="replace")
    return RemoteResult(out, err, stdout.channel.recv_exit_status())
