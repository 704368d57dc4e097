"""Ansible inventories (YAML, INI, group_vars/host_vars next to them) read by ansible-core itself.

Using Ansible's own InventoryManager means gpuctl sees exactly the hosts, groups, ranges and
variables that `ansible-playbook` will see; ansible is imported lazily to keep `--help` fast.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuctl.errors import ConfigError
from gpuctl.hosts.connection_vars import KEY_VARS, connection_problem, first_set, port_number
from gpuctl.hosts.connection_vars import NAMES as CONNECTION_VARS
from gpuctl.hosts.inventory_vars import check_vars_files, variables_error
from gpuctl.input_files import read_input_file
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from collections.abc import Iterable

GPU_GROUP = "gpu_nodes"
KUBESPRAY_GROUPS = ("kube_control_plane", "kube_node", "k8s_cluster", "etcd")
_SSH_ARG_VARS = ("ansible_ssh_common_args", "ansible_ssh_extra_args")
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})


# A host's Kubernetes node name where it is not the inventory name: read by gpuctl itself
# (`bootstrap`, `sim up --hosts-from`), not by the playbooks.
NODE_NAME_VAR = "gpuctl_node_name"


@dataclass(frozen=True)
class Host:
    """One host to prepare, with the connection settings Ansible would use for it."""

    name: str
    address: str
    port: int | None = None
    user: str | None = None
    key_files: tuple[str, ...] = ()
    key_var: str = "ansible_ssh_private_key_file"  # the variable key_files came from
    known_hosts_files: tuple[str, ...] = ()
    # `-o StrictHostKeyChecking=` from the inventory's ssh args; None when the inventory says nothing.
    strict_host_key_checking: bool | None = None
    proxy_command: str | None = None
    become: bool = False
    become_method: str = "sudo"
    become_user: str = "root"
    groups: tuple[str, ...] = ()
    vars: Mapping[str, Any] = field(default_factory=dict, hash=False, compare=False)


def node_name(host: Host) -> str:
    """The host's Kubernetes node name as gpuctl maps it first: its gpuctl_node_name, else its
    inventory name."""
    return str(host.vars.get(NODE_NAME_VAR) or host.name)


@dataclass(frozen=True)
class Inventory:
    """The hosts of group gpu_nodes (after --limit), in inventory order."""

    path: Path
    hosts: tuple[Host, ...]
    groups: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def load_inventory(path: Path, *, limit: str | None = None) -> Inventory:
    """Read the inventory at `path`; raise ConfigError (exit 2) naming the path when it is unusable."""
    source = _checked_source(path)
    manager, variables = _parse(source)
    if limit:
        manager.subset(limit)
    groups = tuple(sorted(manager.groups))
    if GPU_GROUP not in manager.groups:
        raise ConfigError(
            f"{path}: no group {GPU_GROUP!r} (groups: {', '.join(groups)})", hint=_gpu_group_hint(groups)
        )
    # Ansible warns on stderr about a --limit pattern that matches nothing; the error below says it.
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        selected = manager.get_hosts(GPU_GROUP)
    if not selected:
        where = (
            f"--limit {limit!r} matches no host of group {GPU_GROUP!r}"
            if limit
            else f"group {GPU_GROUP!r} is empty"
        )
        raise ConfigError(f"{path}: {where}", hint=f"list the hosts with `{_graph_command(path)}`")
    hosts = tuple(_host(entry, _variables(variables, entry, source), source=path) for entry in selected)
    return Inventory(path=path, hosts=hosts, groups=groups)


def _variables(variables: Any, entry: Any, source: Path) -> Any:
    """The host's variables as Ansible merges them; its group_vars/host_vars read on first use."""
    from ansible.errors import AnsibleError

    try:
        return variables.get_vars(host=entry, include_hostvars=False)
    except AnsibleError as error:
        raise variables_error(source, error) from error


def _gpu_group_hint(groups: Iterable[str]) -> str:
    if any(group in KUBESPRAY_GROUPS for group in groups):
        return (
            f"add a group {GPU_GROUP!r} listing the GPU hosts (in a Kubespray inventory: a child group of "
            "kube_node); not every kube_node has GPUs, so gpuctl never guesses"
        )
    return f"add a group {GPU_GROUP!r} listing the GPU hosts (see inventories/sample/hosts.yml)"


def _checked_source(path: Path) -> Path:
    if not path.exists():
        raise ConfigError(
            f"{path}: inventory not found", hint="pass --inventory with an Ansible inventory file"
        )
    check_vars_files(path)  # every file Ansible would open: a FIFO there would hang it
    if path.is_dir():
        return path.resolve()
    try:
        text = read_input_file(path, "inventory")
    except OSError as error:
        raise ConfigError(
            f"{path}: cannot read inventory: {error.strerror}", hint="check the file"
        ) from error
    _check_yaml_top_level(path, text)
    return path.resolve()


def _check_yaml_top_level(path: Path, text: bytes) -> None:
    """A YAML inventory is a mapping of groups; say so before ansible names its own classes."""
    if path.suffix not in (".yml", ".yaml", ".json"):
        return
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return  # ansible's parser reports it, with the line (vault tags land here too)
    if data is not None and not isinstance(data, Mapping):
        raise ConfigError(
            f"{path.resolve()}: cannot parse inventory: {_not_a_mapping(type(data).__name__)}",
            hint=_PARSE_HINT,
        )


def _parse(source: Path) -> tuple[Any, Any]:
    """Parse with ansible's InventoryManager, turning its warnings into one ConfigError."""
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader
    from ansible.vars.manager import VariableManager

    loader = DataLoader()
    # The sources are recorded (the vars plugins find group_vars/host_vars next to them) but parsed
    # below, so that a failure can be turned into one error line.
    manager = InventoryManager(loader=loader, sources=[str(source)], parse=False)
    captured = io.StringIO()
    # Ansible reports parse failures as warnings on stderr; gpuctl turns them into one error line.
    with contextlib.redirect_stderr(captured), contextlib.redirect_stdout(captured):
        try:
            parsed = manager.parse_source(str(source))
        except Exception as error:
            raise ConfigError(
                f"{source}: cannot parse inventory: {_first_line(str(error))}", hint=_PARSE_HINT
            ) from error
        if parsed:
            manager.reconcile_inventory()
    if not parsed:
        _raise_ini_failure(source)
        raise ConfigError(
            f"{source}: cannot parse inventory: {_parse_failure(captured.getvalue(), source)}",
            hint=_PARSE_HINT,
        )
    return manager, VariableManager(loader=loader, inventory=manager)


_PARSE_HINT = "check it with `ansible-inventory -i PATH --graph` (YAML or INI inventory formats)"


def _graph_command(source: Path) -> str:
    return command_line("ansible-inventory", "-i", source, "--graph")


def _preflight_command(source: Path) -> str:
    return command_line("gpuctl", "preflight", "--inventory", source)


def _raise_ini_failure(source: Path) -> None:
    """An INI inventory (any file not named .yml/.yaml/.json) that ansible refused: say the line."""
    if source.is_dir() or source.suffix in (".yml", ".yaml", ".json"):
        return
    from gpuctl.hosts.inventory_ini import INI_SHAPES, ini_failure

    failure = ini_failure(source)
    if failure is not None:
        raise ConfigError(
            f"{source}:{failure.line}: cannot parse inventory line {failure.text!r}: {failure.reason}",
            hint=f"{INI_SHAPES}; check it with `{_graph_command(source)}`",
        )


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "unknown error")


def _parse_failure(captured: str, source: Path) -> str:
    """Pick the message of the plugin that fits the file's format out of ansible's warnings."""
    failures = dict(re.findall(r"Failed to parse inventory with '(\w+)' plugin: (.+)", captured))
    wanted = ("yaml", "auto") if source.suffix in (".yml", ".yaml", ".json") else ("ini", "yaml")
    message = next((failures[name] for name in wanted if name in failures), "")
    if not message and failures:
        message = next(iter(failures.values()))
    where = re.search(rf"Origin: {re.escape(str(source))}:(\d+)", captured)
    line = f" (line {where.group(1)})" if where else ""
    return (_user_terms(message.strip()) or "not a YAML or INI inventory") + line


# ansible: "YAML inventory has invalid structure, it should be a dictionary, got: <class '...List'>"
_NOT_A_MAPPING = re.compile(r"should be a dictionary, got: <class '(?:[\w.]+\.)?(?:_AnsibleTagged)?(\w+)'>")
_KIND_NAMES = {
    "list": "a list",
    "str": "a string",
    "int": "a number",
    "float": "a number",
    "bool": "a boolean",
}


def _user_terms(message: str) -> str:
    """Ansible's message without its internal class names."""
    found = _NOT_A_MAPPING.search(message)
    if not found:
        return message
    return _not_a_mapping(found.group(1))


def _not_a_mapping(kind: str) -> str:
    got = _KIND_NAMES.get(kind.lower(), kind.lower())
    return f"top level must be a mapping of groups (like `all:` or `gpu_nodes:`), got {got}"


def _host(entry: Any, merged: Mapping[str, Any], *, source: Path) -> Host:
    _refuse_bad_connection_vars(source, str(entry.name), merged)
    ssh_options = parse_ssh_options(" ".join(str(merged.get(name) or "") for name in _SSH_ARG_VARS))
    key_var, key_file = first_set(merged, KEY_VARS)
    known_hosts = tuple(
        str(Path(part).expanduser()) for part in ssh_options.get("userknownhostsfile", "").split()
    )
    strict = ssh_options.get("stricthostkeychecking")
    return Host(
        name=str(entry.name),
        address=str(merged.get("ansible_host") or merged.get("ansible_ssh_host") or entry.name),
        port=port_number(merged),
        user=_optional_str(merged.get("ansible_user") or merged.get("ansible_ssh_user")),
        key_files=(str(Path(str(key_file)).expanduser()),) if key_file else (),
        key_var=key_var or KEY_VARS[0],
        known_hosts_files=known_hosts,
        strict_host_key_checking=None if strict is None else strict.lower() not in ("no", "off", "false"),
        proxy_command=ssh_options.get("proxycommand"),
        become=as_bool(merged.get("ansible_become", False)),
        become_method=str(merged.get("ansible_become_method") or "sudo"),
        become_user=str(merged.get("ansible_become_user") or "root"),
        groups=tuple(sorted(str(group.name) for group in entry.get_groups())),
        vars={str(key): plain(value) for key, value in merged.items() if str(key).startswith("gpuctl_")},
    )


def _refuse_bad_connection_vars(source: Path, host: str, merged: Mapping[str, Any]) -> None:
    found = connection_problem({name: plain(merged[name]) for name in CONNECTION_VARS if name in merged})
    if found is not None:
        name, problem = found
        raise ConfigError(
            f"{source}: host {host}: {name}: {problem}",
            hint=f"fix {name} of {host}, then rerun `{_preflight_command(source)}`",
        )


def _optional_str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def as_bool(value: Any) -> bool:
    """Ansible's truthiness for inventory values (INI gives strings like "yes")."""
    if isinstance(value, str):
        return value.strip().lower() in _TRUE_WORDS
    return bool(value)


def plain(value: Any) -> Any:
    """Strip ansible's tagged subclasses so values compare, print and serialise as plain Python."""
    if isinstance(value, bool) or value is None:
        return value
    for kind in (str, int, float):
        if isinstance(value, kind):
            return kind(value)
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def parse_ssh_options(args: str) -> dict[str, str]:
    """`-o Key=Value` / `-oKey=Value` / `-o "Key Value"` options of an ssh command line, keys lower-cased."""
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    options: dict[str, str] = {}
    for index, word in enumerate(words):
        if word == "-o" and index + 1 < len(words):
            option = words[index + 1]
        elif word.startswith("-o") and len(word) > 2:
            option = word[2:]
        else:
            continue
        key, _, value = option.replace("=", " ", 1).partition(" ")
        options.setdefault(key.strip().lower(), value.strip())
    return options
