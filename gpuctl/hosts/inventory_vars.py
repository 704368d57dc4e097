"""Where the variables of an inventory (group_vars/, host_vars/) go wrong: the file and the line.

Ansible reads these files when a host's variables are first asked for, and its error says what is
wrong ("YAML parsing failed: ...", "expected dicts") but not in which file. When it fails, gpuctl
reads the files Ansible reads once more and names the first one that is no YAML mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuctl.errors import ConfigError
from gpuctl.input_files import check_tree
from gpuctl.shell import command_line

VARS_FOLDERS = ("group_vars", "host_vars")
_SUFFIXES = ("", ".yml", ".yaml", ".json")  # what Ansible's host_group_vars plugin loads
_VAULT = b"$ANSIBLE_VAULT"


def vars_base(inventory: Path) -> Path:
    """The folder whose group_vars/ and host_vars/ Ansible reads for this inventory."""
    return inventory if inventory.is_dir() else inventory.parent


def check_vars_files(inventory: Path) -> None:
    """Refuse (exit 2) a FIFO, device, socket or huge file among the files Ansible would open for
    this inventory: every file of an inventory folder, and its group_vars/ and host_vars/."""
    base = vars_base(inventory)
    for folder in VARS_FOLDERS:
        check_tree(base / folder, f"{folder} file")
    if inventory.is_dir():
        check_tree(inventory, "inventory file")


def variables_error(inventory: Path, error: Exception) -> ConfigError:
    """The one-line error for Ansible's failure to read the inventory's variables."""
    hint = f"fix it, then check with `{command_line('ansible-inventory', '-i', inventory, '--list')}`"
    for path in _vars_files(vars_base(inventory)):
        problem = _problem(path)
        if problem:
            return ConfigError(f"{path}{problem}", hint=hint)
    detail = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
    return ConfigError(f"{inventory}: cannot read the inventory's variables: {detail}", hint=hint)


def _vars_files(base: Path) -> list[Path]:
    files: list[Path] = []
    for folder in VARS_FOLDERS:
        root = base / folder
        if root.is_dir():
            files += sorted(
                path
                for path in root.rglob("*")
                if path.is_file() and path.suffix in _SUFFIXES and not path.name.startswith(".")
            )
    return files


def _problem(path: Path) -> str:
    """`:LINE: what is wrong` (or `: what is wrong`) with one vars file; "" when it reads as a
    mapping (or cannot be judged: vault-encrypted, unreadable)."""
    import yaml

    try:
        data = path.read_bytes()
    except OSError:
        return ""
    if data.lstrip().startswith(_VAULT):
        return ""
    try:
        loaded = yaml.load(data, Loader=_loader())  # a SafeLoader, reading Ansible's tags as plain values
    except yaml.YAMLError as error:
        mark = _mark(error, data)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        return f"{line}: invalid YAML: {problem}"
    if loaded is not None and not isinstance(loaded, dict):
        return f": variables must be a YAML mapping (`name: value` lines), got {_kind(loaded)}"
    return ""


def _mark(error: Exception, data: bytes) -> Any:
    """Where the YAML error is: where the parser noticed it, or, when that is the end of the file
    (an unclosed bracket), where the construct it could not finish began."""
    problem, context = getattr(error, "problem_mark", None), getattr(error, "context_mark", None)
    if problem is not None and context is not None and problem.index >= len(data.rstrip()):
        return context
    return problem


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", int: "a number", float: "a number", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _tagged(loader: Any, _suffix: str, node: Any) -> Any:
    """An Ansible tag (`!vault`, `!unsafe`) read as the value it carries."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


def _loader() -> type:
    import yaml

    class AnyTagLoader(yaml.SafeLoader):
        pass

    AnyTagLoader.add_multi_constructor("!", _tagged)
    return AnyTagLoader
