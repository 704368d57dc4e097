"""`gpuctl bootstrap`: host → cluster → verify, stopping at the first phase that fails.

`--phase host|cluster|verify` runs one phase, `all` runs the three in order. Hosts are matched to
nodes (node_map) before anything is written, and each GPU node's expected GPU count is what its
host's PCI bus shows (preflight's probe), or, without an inventory, its nvidia.com/gpu.count label.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuctl.core.bootstrap.cluster import ClusterOptions, ClusterResult, NodeReadiness, apply_cluster_layer
from gpuctl.core.bootstrap.host import BootstrapResult
from gpuctl.core.bootstrap.host_phase import HostPhaseResult, run_host_phase
from gpuctl.core.bootstrap.node_map import labelled_gpus, map_hosts
from gpuctl.core.bootstrap.reboots import RebootPlan
from gpuctl.core.preflight import run_preflight
from gpuctl.core.proof.gate import GateOptions
from gpuctl.core.proof.options import node_options
from gpuctl.core.proof.prove import prove
from gpuctl.core.stacks import DEFAULT_STACK
from gpuctl.core.upgrade.model import UpgradeOptions, UpgradeResult
from gpuctl.core.upgrade.phase import UpgradeHooks
from gpuctl.core.verify.model import ProofOptions, VerifyResult
from gpuctl.errors import ConfigError, ExitCode
from gpuctl.hosts.inventory import load_inventory
from gpuctl.kube.nodes import list_nodes
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from gpuctl.core.migrate import MigrationResult
    from gpuctl.core.migrate.run import MigrationPlanHook
    from gpuctl.core.upgrade.run import StepProgress
    from gpuctl.kube.client import ApiClient

PHASES = ("host", "cluster", "verify")


@dataclass(frozen=True)
class PhaseOutcome:
    name: str
    ok: bool
    duration_s: float
    exit_code: ExitCode = ExitCode.OK


@dataclass(frozen=True)
class BootstrapRequest:
    """What to run; every field maps to a `gpuctl bootstrap` flag."""

    phase: str  # host | cluster | verify | all
    inventory: Path | None = None
    limit: str | None = None
    check: bool = False
    host_options: dict[str, Any] = field(default_factory=dict)  # run_host_bootstrap's keywords
    cluster: ClusterOptions = field(default_factory=ClusterOptions)
    verify_timeout_s: float = 300.0
    proof: ProofOptions = field(default_factory=ProofOptions)  # --level and its images
    gate: bool = True  # gate the nodes never proven (cluster phase), ungate those verified (not --no-gate)
    upgrade: UpgradeOptions = field(default_factory=UpgradeOptions)  # nodes of the cluster, node by node
    migrate: bool = False  # --migrate: the cluster phase moves the GPU nodes to cluster.stack, node by node


@dataclass(frozen=True)
class BootstrapRun:
    request: BootstrapRequest
    phases: tuple[PhaseOutcome, ...]
    host: BootstrapResult | None = None
    cluster: ClusterResult | None = None
    verify: VerifyResult | None = None
    expected_gpus: tuple[tuple[str, int | None], ...] = ()  # node → GPUs it must show
    host_of_node: tuple[tuple[str, str], ...] = ()  # node → its inventory host (with --inventory)
    upgrade: UpgradeResult | None = None  # the host phase's node-by-node part, when it had one
    migration: MigrationResult | None = None  # the cluster phase with --migrate

    @property
    def ok(self) -> bool:
        return all(phase.ok for phase in self.phases)

    @property
    def exit_code(self) -> ExitCode:
        return next((phase.exit_code for phase in self.phases if not phase.ok), ExitCode.OK)

    @property
    def failed_phase(self) -> str:
        return next((phase.name for phase in self.phases if not phase.ok), "")

    @property
    def resume_command(self) -> str:
        """The command that picks up from the failing phase ("" when all passed). Where the
        cluster phase stopped on nodes whose host layer is at fault, rerunning that phase cannot
        help: the command starts with the host phase limited to their hosts."""
        failed = self.failed_phase
        if not failed:
            return ""
        options: tuple[str | Path, ...] = ("-i", self.request.inventory) if self.request.inventory else ()
        if self.request.cluster.stack is not DEFAULT_STACK:
            options += ("--stack", self.request.cluster.stack.value)
        if self.upgrade is not None and failed == "host":
            options += upgrade_flags(self.request)
        if self.request.migrate:
            options = (*options, *(() if "--stack" in options else ("--stack", DEFAULT_STACK.value)))
            options += ("--migrate", *upgrade_flags(self.request))
        hosts = self.hosts_to_fix
        if hosts:
            inventory = self.request.inventory or "INVENTORY"
            fix = command_line(
                "gpuctl", "bootstrap", "--phase", "host", "-i", inventory, "--limit", ",".join(hosts)
            )
            phases = ("cluster", "verify") if self.request.phase == "all" else ("cluster",)
            rest = (command_line("gpuctl", "bootstrap", "--phase", phase, *options) for phase in phases)
            return " && ".join((fix, *rest))
        if self.request.phase != "all" or failed == "host":
            return command_line("gpuctl", "bootstrap", "--phase", self.request.phase, *options)
        remaining = PHASES[PHASES.index(failed) :]
        return " && ".join(
            command_line("gpuctl", "bootstrap", "--phase", phase, *options) for phase in remaining
        )

    @property
    def hosts_to_fix(self) -> tuple[str, ...]:
        """The hosts (their node names without an inventory) whose nodes the cluster phase left
        stuck on the host layer (driver, container toolkit, runtime), when all its stuck nodes are."""
        if self.cluster is None or self.cluster.ok:
            return ()
        stuck = [node for node in self.cluster.nodes if not node.ready]
        if self.cluster.conflicts or not stuck or not all(node.host_layer for node in stuck):
            return ()
        hosts = dict(self.host_of_node)
        return tuple(hosts.get(node.node, node.node) for node in stuck)


def _expected_gpus(
    api_client: ApiClient, request: BootstrapRequest
) -> tuple[dict[str, int | None], dict[str, str]]:
    """GPU node → GPUs it must advertise, and node → its inventory host (empty without an
    inventory: the GPU nodes are then the cluster's, by their labels)."""
    nodes = list_nodes(api_client)
    if request.inventory is None:
        return {node.name: labelled_gpus(node) for node in nodes if node.is_gpu_node}, {}
    inventory = load_inventory(request.inventory, limit=request.limit)
    mapping = map_hosts(inventory.hosts, nodes, str(request.inventory))
    probes = run_preflight(inventory_path=request.inventory, limit=request.limit)
    pci = {report.name: report.pci_gpus for report in probes.hosts}
    return {node.name: pci.get(host) for host, node in mapping.items()}, {
        node.name: host for host, node in mapping.items()
    }


def _verify(
    api_client: ApiClient, expected: dict[str, int | None], request: BootstrapRequest
) -> VerifyResult:
    """The verify phase: gpuctl.core.proof.prove, each node held to its expected GPUs, and the gate
    (taint, GPUProven condition, per-GPU rules) on its verdicts, as `verify --gate` does,
    unless --no-gate; with --check only the read-only checks, and no gate: nothing was proven.
    A gate write the API server refused ends the phase with that error (exit 3)."""
    options = node_options(
        dict(sorted(expected.items())),
        proof=request.proof,
        timeout_s=request.verify_timeout_s,
        run_pods=not request.check,
    )
    gate = GateOptions() if request.gate and not request.check else None
    proof = prove(api_client, options=options, gate=gate)
    refusal = proof.gate_refusal()
    if refusal is not None:
        raise refusal
    return proof.result


def _run_phase(
    name: str,
    request: BootstrapRequest,
    *,
    api_client: ApiClient | None,
    expected: dict[str, int | None],
    from_inventory: bool,
    progress: dict[str, Callable[[Any], None] | None],
    reboot_plan: RebootPlan | None,
    hooks: UpgradeHooks | None = None,
    on_migration_plan: MigrationPlanHook | None = None,
) -> Any:
    if name == "host":
        return run_host_phase(request, api_client, reboot_plan, on_progress=progress.get("host"), hooks=hooks)
    if api_client is None:
        raise ConfigError("the cluster phases need a cluster", hint="pass --kubeconfig or set KUBECONFIG")
    if name == "cluster" and request.migrate:
        on_step = hooks.on_step if hooks is not None else None
        return _migrate(api_client, request, expected, on_migration_plan, on_step)
    if name == "cluster":
        return apply_cluster_layer(
            api_client,
            replace(request.cluster, gate_level=_gate_level(request)),
            expected,
            label_nodes=from_inventory,
            on_progress=progress.get("cluster"),
        )
    return _verify(api_client, expected, request)


def _migrate(
    api_client: ApiClient,
    request: BootstrapRequest,
    expected: dict[str, int | None],
    on_plan: MigrationPlanHook | None,
    on_step: StepProgress | None,
) -> MigrationResult:
    """The cluster phase with --migrate (gpuctl.core.migrate)."""
    # Imported here: the migration runs the upgrade's steps, which import this package's cluster
    # module, so a module-level import would make `import gpuctl.core.migrate` reach this one
    # half-initialized.
    from gpuctl.core.migrate import MigrationRequest, run_migration

    migration = MigrationRequest(
        cluster=request.cluster,
        upgrade=request.upgrade,
        proof=request.proof,
        gate=request.gate,
        timeout_s=request.verify_timeout_s,
    )
    return run_migration(api_client, migration, expected, on_plan=on_plan, on_step=on_step)


def _gate_level(request: BootstrapRequest) -> str | None:
    """The cluster phase's gate: the level `all`'s verify phase proves (smi for the cluster phase
    alone, whose verify phase may come later at any level), None with --no-gate."""
    if not request.gate:
        return None
    return request.proof.level if request.phase == "all" else "smi"


def run_bootstrap(
    request: BootstrapRequest,
    api_client: ApiClient | None,
    *,
    on_host_progress: Callable[[Any], None] | None = None,
    on_cluster_progress: Callable[[list[NodeReadiness]], None] | None = None,
    reboot_plan: RebootPlan | None = None,
    upgrade_hooks: UpgradeHooks | None = None,
    on_migration_plan: MigrationPlanHook | None = None,
) -> BootstrapRun:
    """Run the requested phases in order; stop at the first that fails. Hosts are matched to
    nodes first, so a bad mapping is an error before anything is written. `reboot_plan`: the
    hosts the host phase must not reboot (reboots.host_reboot_plan)."""
    wanted: tuple[str, ...] = (request.phase,)
    if request.phase == "all":
        # Verification pods are writes, and a dry-run cluster layer cannot pass them: a check
        # run of `all` stops after the cluster phase's dry run.
        wanted = PHASES[:2] if request.check else PHASES
    expected: dict[str, int | None] = {}
    hosts: dict[str, str] = {}
    if set(wanted) & {"cluster", "verify"} and api_client is not None:
        expected, hosts = _expected_gpus(api_client, request)
    progress: dict[str, Callable[[Any], None] | None] = {
        "host": on_host_progress,
        "cluster": on_cluster_progress,
    }
    outcomes: list[PhaseOutcome] = []
    results: dict[str, Any] = {}
    for name in wanted:
        started = time.monotonic()
        result = _run_phase(
            name,
            request,
            api_client=api_client,
            expected=expected,
            from_inventory=request.inventory is not None,
            progress=progress,
            reboot_plan=reboot_plan,
            hooks=upgrade_hooks,
            on_migration_plan=on_migration_plan,
        )
        if isinstance(result, HostPhaseResult):
            results["upgrade"] = result.upgrade
        migrated = name == "cluster" and request.migrate  # a MigrationResult: its own key
        results["migration" if migrated else name] = (
            result.host if isinstance(result, HostPhaseResult) else result
        )
        outcomes.append(PhaseOutcome(name, result.ok, round(time.monotonic() - started, 2), result.exit_code))
        if not result.ok:
            break
    return BootstrapRun(
        request,
        tuple(outcomes),
        results.get("host"),
        results.get("cluster"),
        results.get("verify"),
        tuple(sorted(expected.items())),
        tuple(sorted(hosts.items())),
        results.get("upgrade"),
        migration=results.get("migration"),
    )


def upgrade_flags(request: BootstrapRequest) -> tuple[str, ...]:
    """The node-by-node flags a rerun must repeat (those not at their defaults)."""
    defaults, options = UpgradeOptions(), request.upgrade
    flags: tuple[str, ...] = ()
    if options.max_unavailable != defaults.max_unavailable:
        flags += ("--max-unavailable", str(options.max_unavailable))
    if options.force_drain:
        flags += ("--force-drain",)
    if options.drain_timeout_s != defaults.drain_timeout_s:
        flags += ("--drain-timeout", f"{options.drain_timeout_s:g}")
    if request.proof.level != "smi":
        flags += ("--level", request.proof.level)
    return flags
