"""What a host run leaves on disk: its private data dir, and the environment recorded in it.

ansible-runner starts ansible-playbook with a copy of gpuctl's whole environment and records that
environment in `artifacts/<ident>/command`. ansible-playbook needs little of it, and the rest is
often secret (cloud keys, API tokens), so the child gets only:
- the variables in INHERITED and those starting with INHERITED_PREFIXES, each for the reason given;
- gpuctl's own Ansible settings (runner.runner_envvars) and the ones ansible-runner sets itself;
- the names the user passes on purpose (`gpuctl bootstrap --pass-env NAME`).
Proxy variables are left out: the roles download on the hosts, with the hosts' own proxy settings,
never on the machine running gpuctl; `--pass-env` passes them where an inventory plugin or an SSH
ProxyCommand needs them.

The private data dir is made by `tempfile.mkdtemp` (mode 0700): in $TMPDIR, removed after the run;
with --keep-artifacts under the user's own state directory instead ($XDG_STATE_HOME, else
~/.local/state), as gpuctl/artifacts/bootstrap-<time>-<random>, every directory gpuctl creates on
the way made 0700.

What the allow-list lets through can still be secret: `ANSIBLE_BECOME_PASS` is Ansible
configuration, and a `--pass-env` variable may be a token the playbook needs. The child gets them,
but a kept dir is scrubbed before it is kept (scrub_kept): every value of a variable named like a
secret (ANSIBLE_*PASS*, *PASSPHRASE*, *TOKEN*, *SECRET*), wherever it was written (the recorded
environment, the events, the task output), and every PEM private key block become `[redacted]`.
A value of fewer than MIN_SCRUBBED characters, or a flag's (`ANSIBLE_BECOME_ASK_PASS=True`), is
redacted only where it is recorded as that variable's value: replaced everywhere it would mangle
the record without hiding anything.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import stat
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

from gpuctl.errors import ConfigError

INHERITED = frozenset(
    {
        "HOME",  # ssh's ~/.ssh (config, keys, known_hosts) and Ansible's ~/.ansible
        "USER",  # the local user name, which Python's getpass and Ansible fall back on
        "LOGNAME",
        "LANG",  # ansible-core refuses to start without a UTF-8 locale
        "LANGUAGE",
        "TZ",  # timestamps in the events in the user's zone
        "TMPDIR",  # where Python and Ansible put their temporary files
        "SSH_AUTH_SOCK",  # the user's ssh-agent, which often holds the keys to the hosts
        "KRB5CCNAME",  # where the Kerberos tickets are, for GSSAPI SSH (a path, not a ticket)
        "PYTHONPATH",  # how a gpuctl that is not installed finds ansible (paths only)
    }
)
# Locale categories; Ansible's own configuration (ANSIBLE_CONFIG, ANSIBLE_PRIVATE_KEY_FILE, ...).
INHERITED_PREFIXES = ("LC_", "ANSIBLE_")
# Galaxy server tokens are Ansible configuration too, but no playbook run uses them.
WITHHELD_PREFIXES = ("ANSIBLE_GALAXY_",)

# What a kept private data dir holds, for the note that prints its path.
KEPT_CONTENTS = (
    "Ansible's events and task output, the ansible-playbook command line and its environment: only "
    "PATH, HOME, user, locale, SSH_AUTH_SOCK, ANSIBLE_* and --pass-env variables, passwords, tokens, "
    "secrets and private keys redacted"
)
SECRET_NAME = re.compile(r"^ANSIBLE_.*PASS|PASSPHRASE|TOKEN|SECRET", re.IGNORECASE)
_SECRET_VARIABLE = re.compile(r"pass|token|secret", re.IGNORECASE)  # Ansible's *_pass, *_password, ...
PRIVATE_KEY = re.compile(
    rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----", re.DOTALL
)
REDACTED = b"[redacted]"
MIN_SCRUBBED = 4
_FLAG_VALUES = frozenset({"true", "false", "yes", "no", "on", "off"})
# Files that hold nothing but secrets when ansible-runner writes them (gpuctl suppresses them).
_SECRET_FILES = ("env/passwords", "env/ssh_key")


def child_environment(
    prepared: Mapping[str, str],
    *,
    inherited: Mapping[str, str],
    settings: Mapping[str, str],
    passed: Iterable[str] = (),
) -> dict[str, str]:
    """ansible-playbook's environment, from the one ansible-runner prepared (`inherited`, gpuctl's
    `settings` and its own variables on top): what gpuctl and ansible-runner set, the allow-list,
    and the names the user passed; nothing else of `inherited`."""
    wanted = frozenset(passed) | frozenset(settings)
    return {
        name: value
        for name, value in prepared.items()
        if name in wanted or _inheritable(name) or inherited.get(name) != value
    }


def _inheritable(name: str) -> bool:
    if name.startswith(WITHHELD_PREFIXES):
        return False
    return name in INHERITED or name.startswith(INHERITED_PREFIXES)


def private_data_dir(*, keep: bool, prefix: str = "bootstrap") -> Path:
    """A new private data dir (0700): kept artifacts under the user's state directory, else in $TMPDIR."""
    if not keep:
        return Path(tempfile.mkdtemp(prefix=f"gpuctl-{prefix}-"))
    root = kept_artifacts_root()
    make_private_dirs(root)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}-{time.strftime('%Y%m%dT%H%M%S')}-", dir=root))


def kept_artifacts_root() -> Path:
    """gpuctl/artifacts under $XDG_STATE_HOME (an absolute path, as the XDG spec requires), else
    under ~/.local/state."""
    state_home = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(state_home):
        try:
            state_home = str(Path.home() / ".local" / "state")
        except RuntimeError as error:  # no HOME and no password entry
            raise ConfigError(
                "--keep-artifacts: no home directory to keep them in",
                hint="set XDG_STATE_HOME (or HOME) to a directory of yours",
            ) from error
    return Path(state_home) / "gpuctl" / "artifacts"


def make_private_dirs(directory: Path) -> None:
    """Create `directory` and its missing parents 0700, then check it is a directory of this user
    that nobody else can enter (chmod 0700 if it is one of ours that is more open)."""
    for path in reversed([directory, *directory.parents]):
        if not path.exists():
            with contextlib.suppress(FileExistsError):  # made by another run meanwhile
                path.mkdir(mode=0o700)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
        raise ConfigError(
            f"{directory}: not a directory of this user; gpuctl keeps artifacts only in one",
            hint="move it away, or set XDG_STATE_HOME to a directory of yours",
        )
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(directory, 0o700)


def secret_values(environment: Mapping[str, str], *extra: str | None) -> set[str]:
    """The values of `environment`'s variables named like secrets, and `extra` (the become password)."""
    named = (value for name, value in environment.items() if SECRET_NAME.search(name))
    return {value for value in (*named, *extra) if value}


def secret_extra_vars(args: Iterable[str]) -> set[str]:
    """The values of `-e NAME=VALUE` / `--extra-vars` variables in ansible-playbook's `args` whose
    name says password, passphrase, token or secret (`-e ansible_become_password=...`, which the
    recorded command line would otherwise keep); JSON or @file extra vars are left to the user."""
    found: set[str] = set()
    for flag, value in itertools.pairwise(args):
        if flag not in ("-e", "--extra-vars"):
            continue
        for assignment in value.split():
            name, equals, secret = assignment.partition("=")
            if equals and _SECRET_VARIABLE.search(name):
                found.add(secret.strip("'\""))
    return found


def scrub_kept(folder: Path, secrets: Iterable[str]) -> None:
    """Redact `secrets` and PEM private keys in every file under `folder` (see the module's notes)."""
    for name in _SECRET_FILES:
        with contextlib.suppress(FileNotFoundError):
            (folder / name).unlink()
    wide = [value for value in secrets if len(value) >= MIN_SCRUBBED and value.lower() not in _FLAG_VALUES]
    # As written raw (stdout) and inside JSON strings (events, the recorded command).
    needles = {form.encode() for value in wide for form in (value, json.dumps(value)[1:-1])}
    ordered = sorted(needles, key=len, reverse=True)  # a value inside a longer one is not left half
    for path in folder.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        scrubbed = PRIVATE_KEY.sub(REDACTED, data)
        for needle in ordered:
            scrubbed = scrubbed.replace(needle, REDACTED)
        if path.name == "command":
            scrubbed = _recorded_environment_redacted(scrubbed)
        if scrubbed != data:
            path.write_bytes(scrubbed)


def _recorded_environment_redacted(record: bytes) -> bytes:
    """ansible-runner's `command` record with the values of secret-named variables redacted."""
    try:
        command = json.loads(record)
        environment = command["env"]
    except (ValueError, TypeError, KeyError):
        return record
    for name in environment:
        if SECRET_NAME.search(name):
            environment[name] = REDACTED.decode()
    return json.dumps(command).encode()
