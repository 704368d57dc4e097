"""Every way an SSH connection to a host fails is one line with a hint that fits it, and nothing of
paramiko (log records, tracebacks, warnings) reaches stderr: a real paramiko client against tiny
SSH servers on loopback (paramiko's ServerInterface) that reject the key, take only passwords,
or close before the SSH greeting."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import paramiko
import pytest

from gpuctl.hosts.inventory import Host
from gpuctl.hosts.ssh import SshFailure, SshSettings, connect, resolve


class _Server(paramiko.ServerInterface):
    """Accepts `accepted` (a public key) and nothing else; `methods`: what it says it allows."""

    def __init__(self, accepted: paramiko.PKey | None, methods: str) -> None:
        self.accepted = accepted
        self.methods = methods

    def get_allowed_auths(self, username: str) -> str:  # noqa: ARG002 - paramiko's interface
        return self.methods

    def check_auth_publickey(self, username: str, key: paramiko.PKey) -> int:  # noqa: ARG002
        if self.accepted is not None and key.get_base64() == self.accepted.get_base64():
            return paramiko.AUTH_SUCCESSFUL
        return paramiko.AUTH_FAILED

    def check_auth_password(self, username: str, password: str) -> int:  # noqa: ARG002
        return paramiko.AUTH_FAILED


def _serve(listener: socket.socket, handle: Callable[[socket.socket], None]) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(conn,), daemon=True).start()


@pytest.fixture
def ssh_server() -> Iterator[Callable[..., int]]:
    """`ssh_server(accepted=KEY, methods="publickey")` → the port of an SSH server on loopback;
    `ssh_server(greeting=False)`: one that closes every connection before the SSH greeting."""
    listeners: list[socket.socket] = []
    host_key = paramiko.RSAKey.generate(2048)

    def start(
        accepted: paramiko.PKey | None = None, methods: str = "publickey", greeting: bool = True
    ) -> int:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listeners.append(listener)

        def handle(conn: socket.socket) -> None:
            if not greeting:
                conn.close()
                return
            transport = paramiko.Transport(conn)
            transport.add_server_key(host_key)
            try:
                transport.start_server(server=_Server(accepted, methods))
                transport.accept(timeout=5)
            except (paramiko.SSHException, EOFError, OSError):
                pass
            finally:
                transport.close()

        threading.Thread(target=_serve, args=(listener, handle), daemon=True).start()
        return int(listener.getsockname()[1])

    yield start
    for listener in listeners:
        listener.close()


@pytest.fixture(autouse=True)
def no_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ssh-agent of the machine's user: the keys offered are the test's only."""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


def _settings(port: int, *keys: Path) -> SshSettings:
    return SshSettings("127.0.0.1", port, "gpuadmin", tuple(map(str, keys)), (), False, None)


def _key(folder: Path, name: str, password: str | None = None) -> tuple[paramiko.PKey, Path]:
    generated = paramiko.ECDSAKey.generate()
    path = folder / name
    generated.write_private_key_file(str(path), password=password)
    return generated, path


def _failure(settings: SshSettings, capfd: pytest.CaptureFixture[str]) -> SshFailure:
    capfd.readouterr()
    with pytest.raises(SshFailure) as raised:
        connect(settings, timeout=5)
    captured = capfd.readouterr()
    assert (captured.out, captured.err) == ("", ""), "paramiko printed something"
    assert "\n" not in raised.value.message
    assert "\n" not in raised.value.hint
    return raised.value


def test_a_key_the_host_rejects_gets_a_key_hint_not_a_port_hint(
    ssh_server: Callable[..., int], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    authorised, _ = _key(tmp_path, "authorised")
    _, offered = _key(tmp_path, "id_other")
    port = ssh_server(accepted=authorised)
    failure = _failure(_settings(port, offered), capfd)
    assert failure.message == (
        f"gpuadmin@127.0.0.1:{port}: the host accepted none of the 1 SSH key(s) offered for gpuadmin"
    )
    assert f"ssh-copy-id -i KEY -p {port} gpuadmin@127.0.0.1" in failure.hint
    assert "ansible_ssh_private_key_file" in failure.hint
    assert "ansible_port" not in failure.hint


def test_the_authorised_key_connects(ssh_server: Callable[..., int], tmp_path: Path) -> None:
    authorised, path = _key(tmp_path, "authorised")
    client = connect(_settings(ssh_server(accepted=authorised), path), timeout=5)
    try:
        assert client.get_transport() is not None
        assert client.get_transport().is_authenticated()  # type: ignore[union-attr]
    finally:
        client.close()


def test_a_passphrase_protected_key_without_an_agent_is_named_before_connecting(
    ssh_server: Callable[..., int], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    authorised, path = _key(tmp_path, "locked", password="s3cret")
    failure = _failure(_settings(ssh_server(accepted=authorised), path), capfd)
    assert failure.message.endswith(f"key {path} is passphrase-protected and no ssh-agent offers a key")
    assert failure.hint == f"load it into ssh-agent (`ssh-add {path}`), then rerun"


def test_a_file_that_is_no_key_is_named(
    ssh_server: Callable[..., int], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "id_bogus"
    bogus.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nnot a key\n-----END OPENSSH PRIVATE KEY-----\n")
    failure = _failure(_settings(ssh_server(), bogus), capfd)
    assert f": cannot read key {bogus}: " in failure.message
    assert (
        failure.hint
        == f"check ansible_ssh_private_key_file: `ssh-keygen -y -f {bogus}` must print its public key"
    )


def test_a_host_that_takes_only_passwords_says_so(
    ssh_server: Callable[..., int], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _, path = _key(tmp_path, "id_key")
    failure = _failure(_settings(ssh_server(methods="password"), path), capfd)
    assert failure.message.endswith("the host accepts no SSH keys for gpuadmin (it allows: password)")
    assert "sshd_config" in failure.hint


def test_no_key_at_all_is_said_before_connecting(
    ssh_server: Callable[..., int], capfd: pytest.CaptureFixture[str]
) -> None:
    failure = _failure(_settings(ssh_server()), capfd)
    assert "no SSH key to offer" in failure.message
    assert "ssh-add" in failure.hint


def test_a_port_without_an_ssh_server_is_a_port_problem_and_quiet(
    ssh_server: Callable[..., int], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """paramiko logs `Exception (client): Error reading SSH protocol banner` with a traceback at
    ERROR: nothing of it may reach stderr."""
    _, path = _key(tmp_path, "id_key")
    port = ssh_server(greeting=False)
    failure = _failure(_settings(port, path), capfd)
    assert failure.message == (
        f"gpuadmin@127.0.0.1:{port}: no SSH server answered there "
        "(the connection closed before the SSH greeting)"
    )
    assert "ansible_port" in failure.hint


def test_a_closed_port_is_a_port_problem(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    _, path = _key(tmp_path, "id_key")
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    failure = _failure(_settings(port, path), capfd)
    # the socket's reason, not paramiko's "Unable to connect to port N on 127.0.0.1"
    assert failure.message == f"gpuadmin@127.0.0.1:{port}: cannot connect: Connection refused"
    assert failure.hint == "check ansible_host/ansible_port and that sshd runs"


def test_a_missing_key_file_of_the_inventory_is_a_config_error(tmp_path: Path) -> None:
    from gpuctl.errors import ConfigError

    host = Host(name="gpu-1", address="127.0.0.1", key_files=(str(tmp_path / "gone"),))
    with pytest.raises(ConfigError) as raised:
        resolve(host, insecure_skip_host_key_check=False)
    assert (
        raised.value.message == f"host gpu-1: ansible_ssh_private_key_file: {tmp_path / 'gone'}: no such file"
    )
    assert raised.value.exit_code == 2
