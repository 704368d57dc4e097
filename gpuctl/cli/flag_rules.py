"""Which flag has an effect where: one table for every command, so that a flag that would be
silently ignored (a phase that does not use it, a stack it does not configure, an option it
only refines) is refused with one line saying why (exit 2) instead.

A rule names a parameter of each of its commands and the conditions under which it has an effect
(any one of them is enough; a condition on a parameter the command lacks never holds); the rules
of a flag all hold where it has an effect. Each command calls `refuse_inapplicable_flags(COMMAND)`
first, before anything is read, written or rendered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from gpuctl.defaults import OPERATOR_CHART, OPERATOR_CHART_VERSION
from gpuctl.errors import ConfigError
from gpuctl.shell import command_line
from gpuctl.validation import chart_problem, chart_version_problem, check

# Recent Typer releases ship their own copy of Click (typer._click), older ones use the package.
if TYPE_CHECKING:
    from typer._click.core import Context
    from typer._click.globals import get_current_context
else:
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # Typer before it shipped its own Click
        from click import get_current_context


@dataclass(frozen=True)
class When:
    """`parameter` was typed (values None), or its value is one of `values` (typed or default)."""

    parameter: str
    values: tuple[object, ...] | None = None
    or_default: bool = False  # also holds while `parameter` is left at its default
    # also holds while `parameter` is left at its default and this says so (a kubeconfig found)
    or_default_if: Callable[[], bool] | None = None


@dataclass(frozen=True)
class Rule:
    """`parameter` of `commands` has an effect only where one of `where` holds."""

    commands: tuple[str, ...]
    parameter: str
    where: tuple[When, ...]
    why: str  # why it has no effect elsewhere
    # a command line where it does: {flag} stands for the flag as typed, {gpuctl} for `gpuctl
    # render` or `gpuctl bootstrap --phase PHASE`
    example: str = ""


BOOTSTRAP = ("bootstrap",)
RENDER = ("render",)
STACKS = ("render", "bootstrap")


def _default_kubeconfig_found() -> bool:
    # imported here: only a host phase asks, and the client module is slow to import
    from gpuctl.kube.client import kubeconfig_found

    return kubeconfig_found()


_HOST = When("phase", ("host", "all"))
# A cluster the run works on: the host phase upgrades its nodes node by node (cordon, drain, the
# host phase, verify) only where a kubeconfig reaches one, named or found as kubectl finds it.
_CLUSTER_REACHED = (
    When("phase", ("cluster", "verify", "all")),
    When("kubeconfig", or_default_if=_default_kubeconfig_found),
    When("context"),
)
_NODE_BY_NODE = (
    "only the host phase upgrading the nodes of the cluster a kubeconfig reaches goes node by node"
)
_MIGRATE = When("migrate", (True,))  # the cluster phase moving the GPU nodes to another stack
_NODE_BY_NODE_EXAMPLE = "gpuctl bootstrap --phase host -i hosts.yml --kubeconfig PATH {flag}"
_CLUSTER = When("phase", ("cluster", "all"))
_NO_PODS = When("no_pods", (False,))
_VERIFY = When("phase", ("verify", "all"))
_VERIFY_ONLY = "only the verify phase, and the host phase upgrading a cluster's nodes, run verification pods"

_ANSIBLE = "only the host phase runs ansible-playbook"
_CLUSTER_LAYER = "only the cluster phase installs the GPU stack"
_POD_ONLY = "it shapes the verification pods, and --no-pods creates none"

_RULES_BEFORE_STACKS: tuple[Rule, ...] = (
    # bootstrap: the phase that uses the flag
    *(
        Rule(BOOTSTRAP, parameter, (_HOST,), _ANSIBLE, "gpuctl bootstrap --phase host -i hosts.yml {flag}")
        for parameter in ("tags", "keep_artifacts", "pass_env", "reboot", "ask_become_pass", "ansible_args")
    ),
    *(
        Rule(BOOTSTRAP, parameter, (_CLUSTER,), _CLUSTER_LAYER, "gpuctl bootstrap --phase cluster {flag}")
        for parameter in (
            *("helm", "chart", "chart_version", "distribution", "operator_driver", "operator_toolkit"),
            *("sharing", "replicas", "mig_strategy", "no_taint", "force_conflicts"),
        )
    ),
    Rule(
        BOOTSTRAP,
        "stack",
        # verify finds the stack itself; --stack is accepted there because the resume command of
        # a failed `--phase all --stack S` names it for the verify phase too.
        (When("phase", ("cluster", "verify", "all")),),
        "the host phase installs the same driver and toolkit for every stack",
        "gpuctl bootstrap --phase cluster {flag}",
    ),
    Rule(
        BOOTSTRAP,
        "timeout",
        # The host phase waits for GPUs only when it upgrades the nodes of a cluster, node by node.
        _CLUSTER_REACHED,
        "the host phase waits for Ansible, not for the GPUs, unless it upgrades the nodes of the "
        "cluster --kubeconfig names",
        _NODE_BY_NODE_EXAMPLE,
    ),
    # node by node: the host phase (alone or in `all`) upgrading a cluster's nodes
    *(
        rule
        for parameter in ("max_unavailable", "drain_timeout", "force_drain")
        for rule in (
            Rule(BOOTSTRAP, parameter, (_HOST, _MIGRATE), _NODE_BY_NODE, _NODE_BY_NODE_EXAMPLE),
            Rule(BOOTSTRAP, parameter, _CLUSTER_REACHED, _NODE_BY_NODE, _NODE_BY_NODE_EXAMPLE),
        )
    ),
    Rule(
        BOOTSTRAP,
        "limit",
        (When("inventory"),),
        "--limit picks hosts of the inventory",
        "gpuctl bootstrap --phase cluster -i hosts.yml {flag}",
    ),
    Rule(BOOTSTRAP, "reboot", (When("check", (False,)),), "--check reboots no host"),
    Rule(
        STACKS,
        "replicas",
        (When("sharing", ("time-slicing", "mps")),),
        "replicas are how many pods share one GPU",
        "{gpuctl} --sharing time-slicing {flag}",
    ),
)
# The rules of the stacks' own flags come here (stack_rules), then these.
_RULES_AFTER_STACKS: tuple[Rule, ...] = (
    # render: options of other options
    Rule(
        RENDER,
        "rbac_subject",
        (When("rbac"),),
        "it names who the RBAC roles are bound to",
        "gpuctl render --rbac {flag}",
    ),
    *(
        Rule(
            RENDER,
            parameter,
            (When("rbac"), When("verify_cronjob"), When("verify_deployment")),
            "it shapes the RBAC roles",
            "gpuctl render --rbac {flag}",
        )
        for parameter in ("verify_namespace", "log_namespace")
    ),
    *(
        Rule(
            RENDER,
            parameter,
            (When("rbac"), When("verify_cronjob"), When("verify_deployment")),
            "it shapes verify's admission policies and the in-cluster verify's --gate",
            "gpuctl render --rbac {flag}",
        )
        for parameter in ("gate_taint", "gate_condition")
    ),
    Rule(
        RENDER,
        "verify_schedule",
        (When("verify_cronjob"),),
        "it is the verify CronJob's",
        "gpuctl render --verify-cronjob --gpuctl-image REGISTRY/gpuctl:TAG {flag}",
    ),
    Rule(
        RENDER,
        "gpuctl_image",
        (When("verify_cronjob"), When("verify_deployment")),
        "it is the verify CronJob's or Deployment's",
        "gpuctl render --verify-cronjob {flag}",
    ),
    Rule(
        RENDER,
        "service_monitor",
        (When("verify_deployment"),),
        "it scrapes the verify Deployment's metrics",
        "gpuctl render --verify-deployment --gpuctl-image REGISTRY/gpuctl:TAG {flag}",
    ),
    # verify
    Rule(
        ("verify",),
        "interval",
        (When("watch"),),
        "it is the time between --watch runs",
        "gpuctl verify --watch {flag}",
    ),
    Rule(
        ("verify",),
        "watch",
        (When("output", ("table", "wide", "json")),),
        "--watch prints a line per change, or NDJSON with -o json",
        "gpuctl verify --watch -o json",
    ),
    Rule(
        ("verify",),
        "metrics_addr",
        (When("watch"),),
        "it serves the metrics of the --watch runs; one run can push them with --pushgateway",
        "gpuctl verify --watch {flag}",
    ),
    Rule(
        ("verify",),
        "pushgateway_ca",
        (When("pushgateway"),),
        "it verifies the --pushgateway's certificate",
        "gpuctl verify --pushgateway https://HOST:9091 {flag}",
    ),
    Rule(
        ("verify",),
        "gate",
        (_NO_PODS,),
        "the gate judges nodes by their verification pods, and --no-pods creates none",
        "gpuctl verify {flag}",
    ),
    *(
        Rule(
            RENDER,
            parameter,
            (When("readiness_rule"),),
            "it is the NodeReadinessRule's",
            "gpuctl render --readiness-rule {flag}",
        )
        for parameter in ("readiness_taint", "readiness_condition")
    ),
    *(
        Rule(
            ("verify",),
            parameter,
            (When("gate"),),
            "it says how --gate gates the nodes it judges",
            "gpuctl verify --gate {flag}",
        )
        for parameter in ("gate_taint", "gate_mode", "gate_condition")
    ),
    Rule(
        BOOTSTRAP,
        "no_gate",
        (When("phase", ("cluster", "verify", "all")),),
        "the cluster phase gates unproven nodes and the verify phase ungates proven ones",
        "gpuctl bootstrap --phase cluster {flag}",
    ),
    *(
        Rule(("verify",), parameter, (_NO_PODS,), _POD_ONLY)
        # not -n: it is context, as in kubectl, ignored where nothing is namespaced (gpuctl.cli.argv)
        for parameter in ("keep_pods", "image", "image_pull_secret", "toleration", "level")
    ),
    # the proof levels: the pods of a deeper level, and the phase that runs them
    *(
        rule
        for parameter in ("level", "cuda_image", "nccl_image", "min_busbw")
        for rule in (
            # the host phase proves each node it upgrades, node by node, at --level too
            Rule(
                BOOTSTRAP, parameter, (_VERIFY, _HOST), _VERIFY_ONLY, "gpuctl bootstrap --phase verify {flag}"
            ),
            Rule(BOOTSTRAP, parameter, _CLUSTER_REACHED, _VERIFY_ONLY, _NODE_BY_NODE_EXAMPLE),
        )
    ),
    *(
        Rule(("verify", "bootstrap"), parameter, (When("level", levels),), why, example)
        for parameter, levels, why, example in (
            (
                "cuda_image",
                ("cuda", "nccl", "fabric"),
                "only --level cuda, nccl and fabric run the CUDA check",
                "{gpuctl} --level cuda {flag}",
            ),
            (
                "nccl_image",
                ("nccl", "fabric"),
                "only --level nccl and fabric run the all-reduce",
                "{gpuctl} --level nccl {flag}",
            ),
            (
                "min_busbw",
                ("nccl", "fabric"),
                "only --level nccl and fabric measure the bus bandwidth",
                "{gpuctl} --level nccl {flag}",
            ),
        )
    ),
    *(
        Rule(
            ("verify",),
            parameter,
            (When("level", ("fabric",)),),
            "only --level fabric runs pods across nodes",
            "gpuctl verify --level fabric {flag}",
        )
        for parameter in ("fabric_resource", "fabric_host_network", "fabric_ipc_lock")
    ),
    # taint-gpu-nodes
    Rule(
        ("taint-gpu-nodes",),
        "value",
        (When("remove", (False,)),),
        "--remove takes the taint off by its key and effect",
        "gpuctl taint-gpu-nodes --remove --key K --effect E",
    ),
    Rule(("taint-gpu-nodes",), "yes", (When("remove", (False,)),), "taking a taint off evicts no pod"),
    Rule(
        ("taint-gpu-nodes",),
        "yes",
        (When("effect", ("NoExecute",)),),
        "only a NoExecute taint evicts pods",
        "gpuctl taint-gpu-nodes --effect NoExecute --yes",
    ),
)


# Where the stack rules go among the others: first the flags a stack alone takes, in this order (a
# command line with two refused flags hears of the first); a flag not named here comes last.
_STACK_FLAG_ORDER = (
    *("sharing", "mig_strategy", "chart", "helm", "migrate", "chart_version"),
    *("distribution", "operator_driver", "operator_toolkit", "namespace", "image", "runtime_class"),
)


def stack_rules() -> tuple[Rule, ...]:
    """The rules of the flags that configure some stacks only, derived from the stacks' own
    declarations (gpuctl.core.stacks.base.StackFlag) and render's alias of each stack."""
    from gpuctl.core.stacks.registry import FLAG_EXAMPLES, STACKS

    found: list[Rule] = []
    for stack in STACKS.values():
        if stack.render_alias:
            value = stack.stack.value
            found.append(
                Rule(
                    RENDER,
                    stack.render_alias,
                    (When("stack", (value,), or_default=True),),
                    f"--{stack.render_alias.replace('_', '-')} is the same as --stack {value}",
                    f"gpuctl render --stack {value}",
                )
            )
    declared = {flag.parameter: flag for stack in STACKS.values() for flag in stack.flags}
    order = {parameter: position for position, parameter in enumerate(_STACK_FLAG_ORDER)}
    for parameter in sorted(declared, key=lambda name: order.get(name, len(order))):
        flag = declared[parameter]
        owners = [stack for stack in STACKS.values() if flag in stack.flags]
        takers = owners if flag.only else [stack for stack in STACKS.values() if stack not in owners]
        shown = next((stack for stack in FLAG_EXAMPLES if STACKS[stack] in takers), takers[0].stack)
        example = "{gpuctl} --stack " + shown.value + " {flag}" if flag.example else ""
        if parameter == "migrate":  # the phase it needs comes first
            found.append(
                Rule(
                    BOOTSTRAP,
                    "migrate",
                    (When("phase", ("cluster",)),),
                    "only the cluster phase moves the GPU nodes from one stack to another",
                    f"gpuctl bootstrap --phase cluster --stack {shown.value} {{flag}}",
                )
            )
        where = [When("stack", tuple(stack.stack.value for stack in takers))]
        where += [When(name, (True,)) for name in flag.also]
        aliases = [stack for stack in STACKS.values() if stack.render_alias and "render" in flag.commands]
        where += [When(stack.render_alias) for stack in aliases if stack in takers]
        found.append(Rule(flag.commands, parameter, tuple(where), flag.why, example))
        found += [
            Rule(RENDER, parameter, (When(stack.render_alias, (False,)),), flag.why, example)
            for stack in aliases
            if stack not in takers
        ]
    return tuple(found)


def rules(command: str = "") -> tuple[Rule, ...]:
    """The rules of `command` ("": of every command); the stacks load only for the commands that
    take a stack's flags."""
    if command and command not in STACKS:
        return (*_RULES_BEFORE_STACKS, *_RULES_AFTER_STACKS)
    return (*_RULES_BEFORE_STACKS, *stack_rules(), *_RULES_AFTER_STACKS)


# The flags of a command that have an effect wherever they are given, with why: with the rules, every
# parameter of these commands is accounted for (tests/unit/test_flag_rules.py walks them), so a new
# flag must say where it applies before it can ship.
EVERYWHERE: dict[str, dict[str, str]] = {
    "bootstrap": {
        "phase": "it picks what runs",
        "inventory": "the host phase runs on it, the others hold its nodes to their PCI GPUs",
        "kubeconfig": "every phase reads the cluster (the host phase: nodes it must not reboot undrained)",
        "context": "as --kubeconfig",
        "check": "every phase has a dry run",
        "output": "every phase reports",
    },
}


@dataclass(frozen=True)
class ValueRule:
    """A typed value of `parameter` that helm or the file system would take wrongly, refused
    before anything runs (the values that reach manifests are checked by gpuctl.core.render)."""

    commands: tuple[str, ...]
    parameter: str
    problem_of: Callable[[str], str]
    example: str


def _folder_problem(path: str) -> str:
    return "empty: name a folder" if not path.strip() else ""


VALUE_RULES: tuple[ValueRule, ...] = (
    ValueRule(BOOTSTRAP, "chart", chart_problem, OPERATOR_CHART),
    ValueRule(STACKS, "chart_version", chart_version_problem, OPERATOR_CHART_VERSION),
    ValueRule(RENDER, "out", _folder_problem, "./manifests"),
)


def refuse_inapplicable_flags(command: str) -> None:
    """Refuse (ConfigError, exit 2) the first flag typed for `command` that has no effect there,
    then the first typed value of VALUE_RULES that is refused; reads the running Click context."""
    context = get_current_context()
    for rule in rules(command):
        applies = command in rule.commands and _typed(context, rule.parameter)
        if applies and not any(_holds(context, when) for when in rule.where):
            raise _refusal(context, rule)
    for value_rule in VALUE_RULES:
        if command in value_rule.commands and _typed(context, value_rule.parameter):
            flag = _option_name(context, value_rule.parameter)
            check(flag, str(context.params[value_rule.parameter]), value_rule.problem_of, value_rule.example)


def _typed(context: Context, parameter: str) -> bool:
    """Whether the user gave `parameter` (on the command line or through its environment
    variable), as opposed to its default."""
    if parameter not in context.params:
        return False
    source = context.get_parameter_source(parameter)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


def _plain(value: object) -> object:
    return value.value if isinstance(value, Enum) else value


def _holds(context: Context, when: When) -> bool:
    if when.parameter not in context.params:
        return False
    typed = _typed(context, when.parameter)
    value = _plain(context.params[when.parameter])
    if not typed and when.or_default_if is not None and when.or_default_if():
        return True
    if when.values is None:
        return typed and value not in (False, None) and value != []
    return value in when.values or (when.or_default and not typed)


def _parameter(context: Context, name: str) -> Any:
    """The Click parameter `name` (a Typer option or argument, whichever Click Typer runs on)."""
    return next(parameter for parameter in context.command.params if parameter.name == name)


def _option_name(context: Context, name: str) -> str:
    """The flag as the user types it: its long name, or `--no-X` for a boolean typed off."""
    parameter = _parameter(context, name)
    if parameter.param_type_name == "argument":  # the arguments after `--`
        return "--"
    if context.params[name] is False and parameter.secondary_opts:
        return str(parameter.secondary_opts[0])
    opts: list[str] = parameter.opts
    return next((opt for opt in opts if opt.startswith("--")), opts[0])


def _text(value: object) -> str:
    """A value as it was typed: `10`, not Click's `10.0`."""
    plain = _plain(value)
    return str(int(plain)) if isinstance(plain, float) and plain.is_integer() else str(plain)


def _as_typed(context: Context, name: str) -> str:
    """The flag with its value, as a command line would give it: `--sharing mps`, `--check`."""
    flag = _option_name(context, name)
    value = _plain(context.params[name])
    if isinstance(value, bool):
        return flag
    values = [_text(item) for item in (value if isinstance(value, (list, tuple)) else [value])]
    if flag == "--":  # the arguments after `--`
        return command_line("--", *values)
    return " ".join(command_line(flag, item) for item in values)


def _gpuctl(context: Context) -> str:
    """The command being run, with the phase that decides what applies."""
    phase = context.params.get("phase")
    return command_line(
        "gpuctl", context.info_name or "", *(("--phase", str(_plain(phase))) if phase else ())
    )


def _wanted(context: Context, when: When) -> str:
    """What would make `when` hold: `--rbac`, `--stack A|B`."""
    flag = _option_name(context, when.parameter)
    if when.values is None or when.values == (True,):
        return flag
    return f"{flag} {'|'.join(str(value) for value in when.values)}"


def _refusal(context: Context, rule: Rule) -> ConfigError:
    """`--sharing mps does not apply to --stack S (why)` when what stands in its way was typed,
    `--replicas has no effect without --sharing time-slicing|mps (why)` when it was left out."""
    flag, as_typed = _option_name(context, rule.parameter), _as_typed(context, rule.parameter)
    present = [when for when in rule.where if when.parameter in context.params]
    typed = [when for when in present if _typed(context, when.parameter)]
    if typed:
        against = " and ".join(dict.fromkeys(_as_typed(context, when.parameter) for when in typed))
        message = f"{as_typed} does not apply to {against} ({rule.why})"
    else:
        needed = " or ".join(_wanted(context, when) for when in present)
        message = f"{flag} has no effect without {needed} ({rule.why})"
    example = rule.example.replace("{flag}", as_typed).replace("{gpuctl}", _gpuctl(context))
    return ConfigError(message, hint=f"e.g. `{example}`, or drop {flag}" if example else f"drop {flag}")
