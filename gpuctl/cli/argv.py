"""kubectl's habit: global flags go before or after the subcommand (`gpuctl verify --debug`,
`gpuctl --context prod status`). Click only takes an option at the level it is declared, so the
command line is reordered before parsing: --debug/--no-color to the front, --kubeconfig/--context
after the subcommand."""

from __future__ import annotations

FRONT_FLAGS = ("--debug", "--no-color")  # declared on the app
BACK_OPTIONS = ("--kubeconfig", "--context")  # declared on each command that talks to a cluster


def reorder(args: list[str]) -> list[str]:
    """`args` with the global flags where Click expects them; everything after `--` is untouched."""
    end = args.index("--") if "--" in args else len(args)
    head, tail = args[:end], args[end:]
    front = [arg for arg in head if arg in FRONT_FLAGS]
    rest = [arg for arg in head if arg not in FRONT_FLAGS]
    moved, rest = _leading_cluster_options(rest)
    return [*front, *rest, *moved, *tail]


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
        if name in BACK_OPTIONS:
            takes_next = "=" not in arg and index + 1 < len(args)
            moved += args[index : index + 1 + takes_next]
            index += 1 + takes_next
            continue
        kept.append(arg)
        index += 1
    return [], args  # no subcommand: leave it all to Click's own messages
