"""`gpuctl bootstrap`."""

from __future__ import annotations

import os
import sys
from enum import Enum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from gpuctl.bounds import DRAIN_TIMEOUT, MAX_UNAVAILABLE, WAIT_TIMEOUT
from gpuctl.cli.number_options import number_option
from gpuctl.cli.options import (
    Context,
    CudaImageOption,
    Kubeconfig,
    Level,
    LevelOption,
    Limit,
    MigStrategy,
    MigStrategyOption,
    MinBusbwOption,
    NcclImageOption,
    OptionalInventory,
    ReplicasOption,
    Sharing,
    SharingOption,
    TableOrJson,
    TableOrJsonOutput,
)
from gpuctl.cli.proof_options import proof_options
from gpuctl.cli.stack_options import (
    DEFAULT_CHART,
    DEFAULT_CHART_VERSION,
    ChartOption,
    ChartVersionOption,
    Distribution,
    DistributionOption,
    HelmOption,
    OperatorDriverOption,
    OperatorToolkitOption,
    Stack,
    StackOption,
    dra_settings,
)
from gpuctl.core.stacks import DEFAULT_STACK
from gpuctl.defaults import CUDA_SAMPLE_IMAGE, GPU_TAINT, NCCL_TESTS_IMAGE
from gpuctl.errors import ConfigError

if TYPE_CHECKING:
    from gpuctl.core.bootstrap import BootstrapRequest, BootstrapRun
    from gpuctl.core.bootstrap.reboots import RebootPlan
    from gpuctl.helm import Helm
    from gpuctl.kube.client import ApiClient

HELP = """\
Take GPU nodes from bare to proven, in phases (--phase, required):
host: the Ansible playbooks over SSH (inventory group gpu_nodes): NVIDIA driver, container
toolkit, container runtime configured for the nvidia runtime; live per-host progress.
cluster: the NVIDIA device plugin (sharing and MIG flags as in `gpuctl render`), RuntimeClass,
node labels and the GPU taint, applied server-side (field manager gpuctl); then waits until
every GPU node advertises the GPUs its PCI bus shows (with --inventory) or its
nvidia.com/gpu.count label says, diagnosing the nodes that do not (one whose host lacks its
driver or toolkit is not waited for: the hint names the host phase). --stack operator: NVIDIA's
GPU Operator chart instead, installed with your helm (3.x/4.x) and the values `gpuctl render
--stack operator` prints; waits until the Operator's validator passes on every GPU node. The
Operator's driver and toolkit containers stay off (driver.enabled=false, toolkit.enabled=false):
the host phase installs both. --operator-driver/--operator-toolkit hand them to the Operator, for
hosts the host phase does not prepare (it cannot replace a driver the host phase loaded).
verify: `gpuctl verify`, each inventory host's node held to its PCI GPU count.
all: host, cluster, verify; stops at the first failing phase and names the command to resume.
A second run changes nothing. --check: Ansible check mode with diff, a server-side dry run
(dryRun=All) with a diff of each object, no verification pod.
Extra ansible-playbook arguments go after `--`. Become password: --ask-become-pass or
GPUCTL_BECOME_PASSWORD (never written to disk). ansible-playbook gets only the environment it
needs (PATH, HOME, user, locale, SSH_AUTH_SOCK, ANSIBLE_*) and the variables named by --pass-env.
Reboots: a host whose new driver needs one is rebooted (gpuctl_reboot_policy: if_needed), except
a host that is a node of the cluster the kubeconfig reaches: drain it, then rerun with --reboot.
Node by node: hosts that are nodes of that cluster serving GPUs go one batch at a time when the
host phase would change them (its check mode says which, before any is touched): a canary first,
then --max-unavailable at a time: cordon, drain (the Eviction API, PodDisruptionBudgets honoured;
pods without a controller or with emptyDir refused unless --force-drain), the host phase on them,
reboot (as the inventory's policy allows), wait until Ready with their GPUs, verify at --level,
uncordon (a node cordoned before stays cordoned). The first failing step stops the run with that
node cordoned; rerunning the same command finishes it. --check prints the plan.
--phase cluster --stack dra|device-plugin --migrate moves the GPU nodes from the other stack the
same way (canary, --max-unavailable, drains within budgets): cordon, drain, relabel
gpuctl.io/gpu-stack, wait until the new stack serves the node and the old has left it, verify,
uncordon; the old stack goes after its last node, then the cluster is verified. Workloads asking
for nvidia.com/gpu keep running unchanged (DRA: Kubernetes 1.37+, else exit 2).
Exit 0 all phases passed, 1 a phase failed (a host, an object conflict, helm, a node without its
GPUs, a verify check), 2 bad inventory or flag, a host matching no node, or no helm for --stack
operator, 3 hosts or cluster unreachable, 130 interrupted.
"""

PASSWORD_ENV = "GPUCTL_BECOME_PASSWORD"


class Phase(str, Enum):
    host = "host"
    cluster = "cluster"
    verify = "verify"
    all = "all"


def command(
    *,
    phase: Annotated[
        Phase,
        typer.Option("--phase", help="host, cluster, verify, or all of them in order.", show_default=False),
    ],
    inventory: OptionalInventory = None,
    kubeconfig: Kubeconfig = None,
    context: Context = None,
    check: Annotated[
        bool, typer.Option("--check", help="Dry run: Ansible check mode, server-side dry run, diffs.")
    ] = False,
    limit: Limit = None,
    tags: Annotated[
        Optional[str],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--tags", "-t", help="Only tasks with these tags (comma-separated).", show_default=False
        ),
    ] = None,
    stack: StackOption = DEFAULT_STACK,
    helm: HelmOption = None,
    chart: ChartOption = DEFAULT_CHART,
    chart_version: ChartVersionOption = DEFAULT_CHART_VERSION,
    distribution: DistributionOption = Distribution.auto,
    operator_driver: OperatorDriverOption = False,
    operator_toolkit: OperatorToolkitOption = False,
    sharing: SharingOption = Sharing.none,
    replicas: ReplicasOption = 2,
    mig_strategy: MigStrategyOption = MigStrategy.none,
    no_taint: Annotated[
        bool, typer.Option("--no-taint", help=f"Do not taint the GPU nodes {GPU_TAINT}.")
    ] = False,
    no_gate: Annotated[
        bool,
        typer.Option(
            "--no-gate",
            help="Do not gate the GPU nodes never proven (gpuctl.io/unproven=LEVEL:NoSchedule), nor "
            "ungate those the verify phase proves.",
        ),
    ] = False,
    force_conflicts: Annotated[
        bool,
        typer.Option(
            "--force-conflicts",
            help="Take over fields another field manager owns; adopt an object another tool created "
            "(removing the list items gpuctl does not declare, e.g. a second volume for the same path).",
        ),
    ] = False,
    timeout: Annotated[
        float,
        number_option(
            WAIT_TIMEOUT, "Seconds to wait for the GPUs (also an upgraded node's) and the verification pods."
        ),
    ] = 300.0,
    level: LevelOption = Level.smi,
    cuda_image: CudaImageOption = CUDA_SAMPLE_IMAGE,
    nccl_image: NcclImageOption = NCCL_TESTS_IMAGE,
    min_busbw: MinBusbwOption = None,
    output: TableOrJsonOutput = TableOrJson.table,
    keep_artifacts: Annotated[
        bool,
        typer.Option(
            "--keep-artifacts",
            help="Keep ansible-runner's record of the host run (events, task output, command line and "
            "its environment) under ~/.local/state/gpuctl/artifacts/, mode 0700, and print its path.",
        ),
    ] = False,
    pass_env: Annotated[
        Optional[list[str]],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Option(
            "--pass-env",
            help="Also give ansible-playbook this variable of your environment (repeatable), e.g. the "
            "credentials of an inventory plugin; kept artifacts record it.",
            show_default=False,
            metavar="NAME",
        ),
    ] = None,
    reboot: Annotated[
        bool,
        typer.Option(
            "--reboot",
            help="Reboot hosts that are nodes of the cluster too, when their driver needs it "
            "(drain them first); without it they only report that a reboot is required.",
        ),
    ] = False,
    max_unavailable: Annotated[
        int,
        number_option(
            MAX_UNAVAILABLE,
            "Nodes of the cluster upgraded at a time, after a canary of one (node by node).",
            metavar="N",
        ),
    ] = 1,
    force_drain: Annotated[
        bool,
        typer.Option(
            "--force-drain",
            help="Also evict the pods a drain refuses: no controller to recreate them, or emptyDir data.",
        ),
    ] = False,
    drain_timeout: Annotated[
        float, number_option(DRAIN_TIMEOUT, "Seconds one node's drain may take (budgets may hold it).")
    ] = 300.0,
    migrate: Annotated[
        bool,
        typer.Option(
            "--migrate",
            help="Move the GPU nodes from the stack serving them (device plugin, the GPU Operator's "
            "device plugin, or DRA driver) to "
            "--stack, node by node under running work: cordon, drain, relabel gpuctl.io/gpu-stack, "
            "wait until the new stack serves the node and the old has left, verify, uncordon; the old "
            "stack goes after its last node. --stack dra needs Kubernetes 1.37+.",
        ),
    ] = False,
    ask_become_pass: Annotated[
        bool,
        typer.Option(
            "--ask-become-pass", "-K", help=f"Prompt for the sudo password (or set {PASSWORD_ENV})."
        ),
    ] = False,
    ansible_args: Annotated[
        Optional[list[str]],  # noqa: UP045 - Typer needs Optional[] on Python 3.10
        typer.Argument(
            help="Extra ansible-playbook arguments, after `--`.", show_default=False, metavar="-- ARGS"
        ),
    ] = None,
) -> None:
    from gpuctl.cli.flag_rules import refuse_inapplicable_flags
    from gpuctl.cli.signals import interruptible
    from gpuctl.core.bootstrap import BootstrapRequest, ClusterOptions
    from gpuctl.core.render_options import RenderOptions
    from gpuctl.core.stacks.registry import stack_for
    from gpuctl.core.stacks.settings import OperatorSettings
    from gpuctl.core.upgrade import UpgradeOptions

    refuse_inapplicable_flags("bootstrap")
    if phase is not Phase.cluster and phase is not Phase.verify and inventory is None:
        raise ConfigError(
            f"--phase {phase.value} needs --inventory", hint="pass --inventory PATH (see inventories/sample/)"
        )
    password = _become_password(ask_become_pass) if phase in (Phase.host, Phase.all) else None
    # The host layer installs the driver and toolkit (the phase before this one): the Operator's
    # own containers for them stay off unless asked for, as the device plugin stack assumes too.
    operator = OperatorSettings(
        driver_enabled=operator_driver,
        toolkit_enabled=operator_toolkit,
        distribution=distribution.value,
        chart=chart,
        chart_version=chart_version,
    )
    chosen = stack_for(stack)
    render = RenderOptions(
        mig_strategy=mig_strategy.value,
        sharing=sharing.value,
        replicas=replicas,
        stack=stack,
        operator=operator,
        dra=dra_settings(chart, chart_version),
        node_selector=chosen.inventory_node_selector if inventory is not None else (),
    )
    helm_runner = None
    if (chosen.from_chart or migrate) and phase in (Phase.cluster, Phase.all):
        helm_runner = _helm(helm, kubeconfig, context)  # --migrate: a chart stack to add or remove
    request = BootstrapRequest(
        phase=phase.value,
        inventory=inventory,
        limit=limit,
        check=check,
        host_options={
            "tags": tags,
            # The roles learn the stack only from `all` (IMEX: the DRA driver's ComputeDomains run
            # their own); the user's arguments after `--` come last, so theirs win.
            "extra_args": (*_stack_variable(stack, phase), *(ansible_args or ())),
            "become_password": password,
            "keep_artifacts": keep_artifacts,
            "passed_env": tuple(pass_env or ()),
        },
        cluster=ClusterOptions(
            render=render,
            check=check,
            taint=not no_taint,
            force_conflicts=force_conflicts,
            timeout_s=timeout,
            helm=helm_runner,
        ),
        verify_timeout_s=timeout,
        proof=proof_options(level, cuda_image, nccl_image, min_busbw),
        gate=not no_gate,
        upgrade=UpgradeOptions(
            max_unavailable=int(max_unavailable), force_drain=force_drain, drain_timeout_s=drain_timeout
        ),
        migrate=migrate,
    )
    with interruptible("ansible-playbook stopped, verification pods deleted; a rerun continues"):
        result = _run(
            request,
            kubeconfig,
            context,
            reboot=reboot,
            live=output in (TableOrJson.table, TableOrJson.wide) and sys.stdout.isatty(),
        )
    _emit(result, output)


def _helm(explicit: Path | None, kubeconfig: Path | None, context: str | None) -> Helm:
    """The user's helm, checked before anything is written (exit 2 when absent or too old)."""
    from gpuctl.helm import INSTALL_HINT, Helm, find_helm

    hint = f"{INSTALL_HINT}, or use --stack device-plugin (no helm needed)"
    binary = find_helm(explicit, hint=hint)
    runner = Helm(binary, kubeconfig=kubeconfig, context=context)
    runner.version()
    return runner


def _become_password(ask: bool) -> str | None:
    # Taken out of the environment: ansible-runner records the child's environment in its artifacts.
    from_env = os.environ.pop(PASSWORD_ENV, None)
    if ask and not sys.stdin.isatty():
        # getpass would read the password from a pipe or /dev/null in the clear, after a
        # GetPassWarning, and an empty answer aborts with "Aborted!": nobody is there to type it.
        if from_env is not None:
            return from_env
        raise ConfigError(
            "--ask-become-pass: standard input is not a terminal, so there is nobody to ask for the password",
            hint=f"set {PASSWORD_ENV} instead of passing -K (`read -rs {PASSWORD_ENV}; "
            f"export {PASSWORD_ENV}`), then rerun `gpuctl bootstrap`",
        )
    if ask:
        return str(typer.prompt("BECOME password", hide_input=True, err=True))
    return from_env


def _run(
    request: BootstrapRequest, kubeconfig: Path | None, context: str | None, *, reboot: bool, live: bool
) -> BootstrapRun:
    from gpuctl.core.bootstrap import run_bootstrap
    from gpuctl.core.upgrade.phase import UpgradeHooks
    from gpuctl.report.bootstrap_migration import print_migration_plan
    from gpuctl.report.bootstrap_progress import LiveProgress, PlainProgress
    from gpuctl.report.bootstrap_upgrade import print_plan
    from gpuctl.report.console import make_console

    api_client, unusable = _cluster(request.phase, kubeconfig, context)
    plan = _reboot_plan(request, api_client, reboot=reboot, unknown=unusable)
    errors = make_console(stderr=True)
    # The node-by-node plan goes to stderr before any node is touched (with --check, into the report).
    on_plan = None if request.check else partial(print_plan, console=errors)
    on_migration_plan = None if request.check else partial(print_migration_plan, console=errors)
    if not live:
        # Not a terminal: the wait for the GPUs says what it waits for in plain lines on stderr.
        waiting = PlainProgress(errors)
        return run_bootstrap(
            request,
            api_client,
            on_cluster_progress=waiting.update_nodes,
            reboot_plan=plan,
            upgrade_hooks=UpgradeHooks(on_plan, waiting.step),
            on_migration_plan=on_migration_plan,
        )
    with LiveProgress(make_console()) as progress:
        return run_bootstrap(
            request,
            api_client,
            on_host_progress=progress.update,
            on_cluster_progress=progress.update_nodes,
            reboot_plan=plan,
            upgrade_hooks=UpgradeHooks(on_plan, progress.step),
            on_migration_plan=on_migration_plan,
        )


def _cluster(phase: str, kubeconfig: Path | None, context: str | None) -> tuple[ApiClient | None, str]:
    """The cluster to work on, or for --phase host the one whose nodes must not reboot undrained:
    none without a kubeconfig; one that cannot be loaded is (None, why) instead of an error."""
    from gpuctl.kube.client import kubeconfig_found, load_api_client

    if phase != "host":
        return load_api_client(kubeconfig, context), ""
    if kubeconfig is None and context is None and not kubeconfig_found():
        return None, ""
    try:
        return load_api_client(kubeconfig, context), ""
    except ConfigError as error:
        return None, error.message


def _reboot_plan(
    request: BootstrapRequest, api_client: ApiClient | None, *, reboot: bool, unknown: str
) -> RebootPlan | None:
    """Which hosts the host phase may reboot, said on stderr before it starts (not for --check,
    which reboots nothing)."""
    from gpuctl.core.bootstrap.reboots import host_reboot_plan
    from gpuctl.report.console import make_console
    from gpuctl.report.safe_text import literal

    if request.phase not in ("host", "all") or request.inventory is None:
        return None
    plan = host_reboot_plan(
        api_client, request.inventory, limit=request.limit, reboot=reboot, unknown=unknown
    )
    if not request.check:
        errors = make_console(stderr=True)
        for notice in plan.notices():
            errors.print(literal(notice, style="yellow"), soft_wrap=True)
    return plan


def _emit(result: BootstrapRun, output: TableOrJson) -> None:
    from gpuctl.cli.output import emit
    from gpuctl.report import bootstrap as report
    from gpuctl.report.console import make_console

    note = result.host.artifacts_note if result.host else ""
    if note and output in (TableOrJson.json, TableOrJson.yaml):
        make_console(stderr=True).print(note, markup=False, soft_wrap=True)
    emit(result, output, report)


def _stack_variable(stack: Stack, phase: Phase) -> tuple[str, ...]:
    """The stack the roles' `auto` settings follow (gpuctl_cluster_stack), when the run installs one."""
    return ("-e", f"gpuctl_cluster_stack={stack.value}") if phase is Phase.all else ()
