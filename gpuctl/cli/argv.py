"""kubectl's habit: global flags go before or after the subcommand (`gpuctl verify --debug`,
`gpuctl --context prod status`). Click only takes an option at the level it is declared, so the
command line is reordered before parsing: --debug/--no-color to the front, --kubeconfig/--context
after the subcommand.

A cluster option before the subcommand keeps its meaning there: the kubeconfig (and context) the
command uses. For `sim up` that is the kubeconfig it writes its cluster into, as `kubectl
--kubeconfig X config set-context` writes X; a command that takes no such option (`render`,
`sim up --context`) refuses it, and an option given twice with two values (`gpuctl --kubeconfig
a status --kubeconfig b`) is refused rather than one of them silently winning: either could be
the cluster the user meant.

-n/--namespace is context too, as kubectl's: every command takes it, before or after the
subcommand. A command that declares it (verify's pods, render's manifests, explain's pod) uses
it; any other has nothing namespaced, and the option is dropped before Click sees it, never an
error (`kubectl get nodes -n X` lists the nodes).
"""

from __future__ import annotations

from collections.abc import Callable

from gpuctl.errors import ConfigError
from gpuctl.shell import command_line

FRONT_FLAGS = ("--debug", "--no-color")  # declared on the app
BACK_OPTIONS = ("--kubeconfig", "--context")  # declared on each command that talks to a cluster
NAMESPACE_OPTIONS = ("-n", "--namespace")  # declared where something is namespaced
# The options given before the subcommand that are moved after it (each takes a value).
LEADING_OPTIONS = (*BACK_OPTIONS, *NAMESPACE_OPTIONS)
HELP_FLAGS = ("-h", "--help")

# For the words of a command line (["sim", "up", ...], ["explain", "FILE"]): the command's own
# words and the options it declares; None when they name no command (Click then says why).
OptionsOf = Callable[[list[str]], "tuple[list[str], frozenset[str]] | None"]
_PLACEHOLDERS = {"--kubeconfig": "FILE", "--context": "NAME", "-n": "NAMESPACE", "--namespace": "NAMESPACE"}


def reorder(args: list[str]) -> list[str]:
    """`args` with the global flags where Click expects them; everything after `--` is untouched."""
    end = args.index("--") if "--" in args else len(args)
    head, tail = args[:end], args[end:]
    front = [arg for arg in head if arg in FRONT_FLAGS]
    rest = [arg for arg in head if arg not in FRONT_FLAGS]
    moved, rest = _leading_cluster_options(rest)
    return [*front, *rest, *moved, *tail]


def check_cluster_options(args: list[str], options_of: OptionsOf) -> list[str]:
    """Refuse (exit 2) a cluster option the command does not take, or one given twice with two
    values; returns `args` (without leading cluster options when only help is asked for)."""
    end = args.index("--") if "--" in args else len(args)
    head = [arg for arg in args[:end] if arg not in FRONT_FLAGS]
    _refuse_two_values(head)
    leading, path = _split(head)
    if path and any(_namespace_words(arg) for arg in head):
        args = _namespace_as_context(args, options_of(path))
    if not leading:
        return args
    if not path:
        if any(arg in HELP_FLAGS for arg in head):  # `gpuctl --kubeconfig X -h`: the help, then
            return [arg for arg in args if arg not in leading]
        name = leading[0].split("=", 1)[0]
        example = f"gpuctl {name} {_PLACEHOLDERS[name]} status"
        raise ConfigError(
            f"{name}: no command after it", hint=f"name one, e.g. `{example}` (`gpuctl -h` lists them)"
        )
    found = options_of(path)
    if found is None:
        return args  # not a command (Click names it), or a group whose command is missing
    words, declared = found
    command = command_line("gpuctl", *words)
    for option, value in _values(leading):
        if option not in declared:
            raise ConfigError(
                f"{option} {value} before the command: `{command}` takes no {option}",
                hint=f"drop {option} (`{command} -h` lists what it takes)",
            )
    return args


def _namespace_words(arg: str) -> int:
    """How many words a namespace option starting at `arg` takes: 2 for `-n X`/`--namespace X`,
    1 for `--namespace=X`/`-nX`, 0 when `arg` is none."""
    if arg in NAMESPACE_OPTIONS:
        return 2
    if arg.startswith("--namespace=") or (arg.startswith("-n") and not arg.startswith("--")):
        return 1
    return 0


def _namespace_as_context(args: list[str], found: tuple[list[str], frozenset[str]] | None) -> list[str]:
    """`args` without their namespace options where the command declares none (it has nothing
    namespaced); as they are where it does, or where they name no command (Click says why)."""
    if found is not None and not any(option in found[1] for option in NAMESPACE_OPTIONS):
        return _without_namespace(args)
    return args


def _without_namespace(args: list[str]) -> list[str]:
    """`args` without `-n X`, `--namespace X`, `--namespace=X`, `-nX` before `--` (a namespace
    option with no value after it is left for Click to refuse)."""
    end = args.index("--") if "--" in args else len(args)
    kept: list[str] = []
    index = 0
    while index < end:
        taken = _namespace_words(args[index])
        if taken == 0 or index + taken > end:
            kept.append(args[index])
            index += 1
            continue
        index += taken
    return [*kept, *args[end:]]


def _split(args: list[str]) -> tuple[list[str], list[str]]:
    """(the cluster options before the command, the command's words up to its first option)."""
    leading: list[str] = []
    path: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if path and arg.startswith("-"):
            break
        if not path and arg.split("=", 1)[0] in LEADING_OPTIONS:
            takes_next = "=" not in arg and index + 1 < len(args)
            leading += args[index : index + 1 + takes_next]
            index += 1 + takes_next
            continue
        if not arg.startswith("-"):
            path.append(arg)
        index += 1
    return leading, path


def _refuse_two_values(args: list[str]) -> None:
    for option in BACK_OPTIONS:
        values = list(dict.fromkeys(value for name, value in _values(args) if name == option))
        if len(values) > 1:
            raise ConfigError(
                f"{option} given twice, as {values[0]!r} and {values[1]!r}: which one is meant?",
                hint=f"pass {option} once",
            )


def _values(args: list[str]) -> list[tuple[str, str]]:
    """(option, value) of each --kubeconfig/--context in `args` (`--opt value` or `--opt=value`)."""
    found = []
    for index, arg in enumerate(args):
        name, equals, value = arg.partition("=")
        if name not in BACK_OPTIONS:
            continue
        if not equals:
            value = args[index + 1] if index + 1 < len(args) else ""
        found.append((name, value))
    return found


def _leading_cluster_options(args: list[str]) -> tuple[list[str], list[str]]:
    """Split off --kubeconfig/--context given before the subcommand (the first bare word)."""
    moved: list[str] = []
    kept: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if not arg.startswith("-"):  # the subcommand: the rest is its own
            return moved, [*kept, *args[index:]]
        name = arg.split("=", 1)[0]
        if name in LEADING_OPTIONS:
            takes_next = "=" not in arg and index + 1 < len(args)
            moved += args[index : index + 1 + takes_next]
            index += 1 + takes_next
            continue
        kept.append(arg)
        index += 1
    return [], args  # no subcommand: leave it all to Click's own messages
