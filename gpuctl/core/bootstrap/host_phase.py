"""The host phase when some hosts are nodes of the cluster that serve GPUs: those go node by node.

1. the host phase in check mode on those hosts says which would change (the plan, reported through
   `on_plan` before any host is touched); with --check that is all: the plan, nothing written;
2. the other hosts (not nodes of the cluster, or nodes that serve nothing yet) run as before;
3. the plan runs batch by batch (gpuctl.core.upgrade.run), in a worker thread: Ctrl-C asks it to
   stop after the step in flight, and this thread waits for it to get there.
Without a cluster, or when no host is such a node, the host phase runs exactly as before.

It lives in bootstrap, which imports the upgrade: the upgrade imports nothing of bootstrap at run
time (the host runs reach it as `UpgradeContext.run_hosts`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from gpuctl.core.bootstrap.host import BootstrapResult, HostOutcome, run_host_bootstrap
from gpuctl.core.bootstrap.reboots import RebootPlan
from gpuctl.core.upgrade.model import UpgradeResult
from gpuctl.core.upgrade.phase import UpgradeHooks, finish_step_in_flight
from gpuctl.core.upgrade.plan import plan_upgrade, serving_nodes
from gpuctl.core.upgrade.run import UpgradeContext
from gpuctl.errors import ConfigError, ExitCode

INVENTORY_HINT = "pass --inventory PATH (see inventories/sample/)"

if TYPE_CHECKING:
    from pathlib import Path

    from gpuctl.core.stacks.base import ClusterOptions
    from gpuctl.core.upgrade.model import UpgradeOptions
    from gpuctl.core.verify.model import ProofOptions
    from gpuctl.kube.client import ApiClient


class HostPhaseRequest(Protocol):
    """What the host phase reads of bootstrap's request (phases.BootstrapRequest)."""

    @property
    def phase(self) -> str: ...
    @property
    def inventory(self) -> Path | None: ...
    @property
    def limit(self) -> str | None: ...
    @property
    def check(self) -> bool: ...
    @property
    def host_options(self) -> dict[str, Any]: ...
    @property
    def cluster(self) -> ClusterOptions: ...
    @property
    def upgrade(self) -> UpgradeOptions: ...
    @property
    def proof(self) -> ProofOptions: ...
    @property
    def gate(self) -> bool: ...
    @property
    def verify_timeout_s(self) -> float: ...


@dataclass(frozen=True)
class HostPhaseResult:
    """`host`: the hosts' run as before (with --check: the check run of them all; None when every
    host went node by node); `upgrade`: the node-by-node part (None when there was none)."""

    host: BootstrapResult | None
    upgrade: UpgradeResult | None

    @property
    def ok(self) -> bool:
        return (self.host is None or self.host.ok) and (self.upgrade is None or self.upgrade.ok)

    @property
    def exit_code(self) -> ExitCode:
        codes = [part.exit_code for part in (self.host, self.upgrade) if part is not None and not part.ok]
        return ExitCode.INTERRUPTED if ExitCode.INTERRUPTED in codes else next(iter(codes), ExitCode.OK)


def run_host_phase(
    request: HostPhaseRequest,
    api_client: ApiClient | None,
    reboot_plan: RebootPlan | None,
    *,
    on_progress: Callable[[Any], None] | None = None,
    hooks: UpgradeHooks | None = None,
) -> HostPhaseResult:
    hooks = hooks or UpgradeHooks()
    inventory = request.inventory
    if inventory is None:
        raise ConfigError(f"--phase {request.phase} needs --inventory", hint=INVENTORY_HINT)

    def host_run(limit: str | None, *, check: bool, plan: RebootPlan | None) -> BootstrapResult:
        return run_host_bootstrap(
            inventory_path=inventory,
            limit=limit,
            check=check,
            reboot_plan=plan,
            on_progress=on_progress,
            **request.host_options,
        )

    pairs = reboot_plan.nodes if reboot_plan is not None and api_client is not None else ()
    serving = serving_nodes(api_client, pairs, request.cluster.stack) if api_client and pairs else {}
    if api_client is None or not serving:
        return HostPhaseResult(host_run(request.limit, check=request.check, plan=reboot_plan), None)
    check_limit = request.limit if request.check else ",".join(serving)
    check_run = host_run(check_limit, check=True, plan=reboot_plan)
    if check_run.error or check_run.interrupted:
        return HostPhaseResult(check_run, None)
    plan = plan_upgrade(api_client, check_run, serving, request.upgrade)
    if hooks.on_plan is not None:
        hooks.on_plan(plan)
    if request.check:
        return HostPhaseResult(check_run, UpgradeResult(plan, check=True))
    others = [host for host in reboot_plan.hosts if host not in serving] if reboot_plan else []
    rest = host_run(",".join(others), check=False, plan=reboot_plan) if others else None
    if rest is not None and not rest.ok:
        upgrade = UpgradeResult(plan, check=False)
        return HostPhaseResult(merged_host_result(check_run, rest, upgrade), upgrade)
    context = UpgradeContext(
        api_client=api_client,
        options=request.upgrade,
        # Drained, a node's host may reboot as its inventory's policy says: nothing is held.
        run_hosts=lambda limit: host_run(limit, check=False, plan=RebootPlan()),
        stack=request.cluster.stack,
        proof=request.proof,
        gate=request.gate,
        timeout_s=request.verify_timeout_s,
        should_stop=lambda: False,
        on_step=hooks.on_step,
    )
    upgrade = finish_step_in_flight(plan, context)
    return HostPhaseResult(merged_host_result(check_run, rest, upgrade), upgrade)


def merged_host_result(
    check_run: BootstrapResult, rest: BootstrapResult | None, upgrade: UpgradeResult
) -> BootstrapResult:
    """One host-phase result over every host, as the phase reports it without a cluster: each
    host's real run (the others' run, or its batch's); a host the check found nothing to change
    on, as checked; a planned host the upgrade stopped before, not run (incomplete)."""
    runs = [run for run in (rest, *upgrade.host_runs) if run is not None]
    ran = {host.name: host for run in runs for host in run.hosts}
    planned = {node.host for node in upgrade.plan.nodes}
    checked = [host for host in check_run.hosts if host.name not in ran or host.name in planned]
    hosts = (
        *(rest.hosts if rest is not None else ()),
        *(
            ran.get(host.name)
            or (HostOutcome(host.name, 0, 0, 0, 0, 0, completed=False) if host.name in planned else host)
            for host in checked
        ),
    )
    failing = next((run for run in runs if not run.ok), None)
    return replace(
        failing or (runs[-1] if runs else check_run),
        check=False,
        hosts=hosts,
        failed_tasks=tuple(task for run in runs for task in run.failed_tasks),
        duration_s=round(sum(run.duration_s for run in (check_run, *runs)), 2),
        interrupted=upgrade.interrupted or any(run.interrupted for run in runs),
        warnings=check_run.warnings,
    )
