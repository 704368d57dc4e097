"""`gpuctl bootstrap`'s output: per phase, a summary for people (hosts and their failing tasks,
the cluster objects and GPU nodes, the verify table), or the `gpuctl.bootstrap/v1` envelope."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from gpuctl.core.bootstrap import BootstrapResult, BootstrapRun, ClusterResult, HostOutcome, failed_task_hint
from gpuctl.report import verify as verify_report
from gpuctl.report.bootstrap_migration import migration_json, print_migration
from gpuctl.report.bootstrap_upgrade import print_upgrade, upgrade_json
from gpuctl.report.console import make_console
from gpuctl.report.safe_text import literal
from gpuctl.report.tables import emit_table, keep_words_whole
from gpuctl.shell import command_line

if TYPE_CHECKING:
    from rich.console import Console


SCHEMA = "gpuctl.bootstrap/v1"


def to_json(run: BootstrapRun) -> dict[str, Any]:
    """The versioned JSON envelope; add fields freely, never rename or remove them. The host
    phase's keys keep their place at the top (empty when it did not run)."""
    host = host_json(run.host) if run.host else _no_host(run)
    return {
        **host,
        "schema": SCHEMA,
        "ok": run.ok,
        "phase": run.request.phase,
        "check": run.request.check,
        "phases": [{"name": p.name, "ok": p.ok, "duration_s": p.duration_s} for p in run.phases],
        "expected_gpus": dict(run.expected_gpus),
        "cluster": cluster_json(run.cluster) if run.cluster else None,
        "verify": verify_report.to_json(run.verify) if run.verify else None,
        "upgrade": upgrade_json(run.upgrade) if run.upgrade else None,
        "migration": migration_json(run.migration) if run.migration else None,
        "resume": run.resume_command,
        "duration_s": round(sum(p.duration_s for p in run.phases), 2),
    }


def _no_host(run: BootstrapRun) -> dict[str, Any]:
    inventory = str(run.request.inventory) if run.request.inventory else None
    return {
        "status": "",
        "inventory": inventory,
        "playbook": None,
        "hosts": [],
        "failed_tasks": [],
        "error": "",
        "interrupted": False,
        "artifacts_dir": None,
        "warnings": [],
    }


def cluster_json(cluster: ClusterResult) -> dict[str, Any]:
    return {
        "ok": cluster.ok,
        "check": cluster.check,
        "writes": cluster.writes,
        "timed_out": cluster.timed_out,
        "duration_s": cluster.duration_s,
        "objects": [
            {"kind": o.kind, "namespace": o.namespace, "name": o.name, "action": o.action}
            | ({"diff": o.diff} if o.diff else {})
            | ({"message": o.message} if o.message else {})
            | ({"foreign": [{"field": f, "managers": list(m)} for f, m in o.foreign]} if o.foreign else {})
            for o in cluster.objects
        ],
        "taint": None if cluster.taint is None else {"writes": cluster.taint.writes, "ok": cluster.taint.ok},
        "nodes": [
            {
                "name": node.node,
                "expected_gpus": node.expected,
                "allocatable": node.allocatable,
                "device_plugin_ready": node.plugin_ready,
                "ready": node.ready,
                "problem": verify_report.check_dict(node.problem) if node.problem else None,
                "terminal": node.terminal,
            }
            | ({"operator_validator": node.validator} if node.validator is not None else {})
            for node in cluster.nodes
        ],
        "stack": cluster.stack.value,
        "helm": _helm_json(cluster),
        "cluster_policies": dict(cluster.policy_states),
        "warnings": list(cluster.warnings),
    }


def _helm_json(cluster: ClusterResult) -> dict[str, Any] | None:
    """A stack installed from a chart: the exact helm command and what it did (null for the device plugin)."""
    helm = cluster.helm
    if helm is None:
        return None
    return {
        "command": helm.command,
        "action": helm.action,
        "helm_version": helm.helm_version,
        "chart": helm.chart,
        "deployed_chart": helm.deployed_chart,
        "release_status": helm.release_status,
        "repaired": helm.repaired,
        "values": helm.values,
        "diff": helm.diff,
    }


def host_json(result: BootstrapResult) -> dict[str, Any]:
    return {
        "ok": result.ok,
        "phase": result.phase,
        "check": result.check,
        "status": result.status,
        "inventory": result.inventory,
        "playbook": result.playbook,
        "hosts": [
            {
                "name": host.name,
                "ok": host.succeeded,
                "ok_tasks": host.ok_tasks,
                "changed": host.changed,
                "failed": host.failed,
                "unreachable": host.unreachable,
                "skipped": host.skipped,
                "driver": _driver_json(host),
                "diagnosis": _diagnosis_json(host),
            }
            for host in result.hosts
        ],
        "failed_tasks": [
            {
                "host": task.host,
                "task": task.task,
                "action": task.action,
                "message": task.message,
                "unreachable": task.unreachable,
                "hint": failed_task_hint(task, result.inventory),
            }
            for task in result.failed_tasks
        ],
        "error": result.error,
        "interrupted": result.interrupted,
        "duration_s": result.duration_s,
        "artifacts_dir": result.artifacts_dir,
        "warnings": list(result.warnings),
    }


def _driver_json(host: HostOutcome) -> dict[str, Any] | None:
    """What the driver role found on the host (null when it did not run there)."""
    if host.driver is None:
        return None
    return {
        "state": host.driver.state,
        "message": host.driver.message,
        "reboot_required": host.driver.reboot_required,
        "dkms": host.driver.dkms,
        "hint": host.driver.hint,
    }


def _diagnosis_json(host: HostOutcome) -> dict[str, Any] | None:
    """The cause and fix found in the host's failed task, shaped like verify's failing checks (id,
    status, message, hint, diagnosis) plus the task and the line that led there; null when none."""
    if host.diagnosis is None:
        return None
    found = host.diagnosis.found
    return {
        "id": found.signature_id,
        "status": "fail",
        "message": found.cause,
        "hint": found.hint,
        "diagnosis": found.signature_id,
        "category": found.category,
        "task": host.diagnosis.task,
        "evidence": found.evidence,
    }


def _failure_lines(result: BootstrapResult) -> list[tuple[str, str]]:
    """Per failed task: its message, the cause and fix when its output matched a known signature,
    and how to rerun (each with its style)."""
    found = {
        (host.name, host.diagnosis.task): host.diagnosis.found for host in result.hosts if host.diagnosis
    }
    lines: list[tuple[str, str]] = []
    for task in result.failed_tasks:
        lines.append((f"{task.host}: task {task.task!r} failed: {task.message}", "red"))
        diagnosis = found.get((task.host, task.task))
        if diagnosis is not None:
            lines += [(f"  cause: {diagnosis.cause}", ""), (f"  fix: {diagnosis.hint}", "")]
        lines.append((f"  hint: {failed_task_hint(task, result.inventory)}", ""))
    return lines


def print_host_table(result: BootstrapResult, console: Console) -> None:
    from rich.table import Table

    for warning in result.warnings:
        console.print(literal(f"warning: {warning}", style="yellow"))
    table = Table(box=None, pad_edge=False)
    for column in ("HOST", "RESULT", "OK", "CHANGED", "FAILED", "UNREACHABLE", "SKIPPED"):
        table.add_column(column)
    for host in result.hosts:
        verdict = host_verdict(host, interrupted=result.interrupted)
        counts = (host.ok_tasks, host.changed, host.failed, host.unreachable, host.skipped)
        style = None if host.succeeded else "red"
        table.add_row(literal(host.name), verdict, *(str(count) for count in counts), style=style)
    emit_table(console, keep_words_whole(table, console.width))
    for host in result.hosts:
        for line in host.driver.notes() if host.driver else ():
            console.print(literal(f"{host.name}: {line}", style="yellow"))
    errors = make_console(stderr=True)  # failures go to stderr, always
    for line, style in _failure_lines(result):
        errors.print(literal(line, style=style), soft_wrap=True)
    if result.error:
        errors.print(literal(f"error: {result.error}", style="red"), soft_wrap=True)
        hint = (
            "check the ansible-playbook arguments after `--` (`ansible-playbook --help`)"
            if result.rejected_arguments
            else "run the same with `-- -vvv` for ansible's details"
        )
        errors.print(literal(f"  hint: {hint}"), soft_wrap=True)
    console.print(literal(_footer(result)), soft_wrap=True)  # the artifacts' path stays whole


def host_verdict(host: HostOutcome, *, interrupted: bool) -> str:
    """The RESULT column: a host is "ok" only when it is prepared (its play ran to the end)."""
    if host.succeeded:
        return "ok"
    if host.unreachable:
        return "UNREACHABLE"
    if host.failed:
        return "FAILED"
    return "CANCELLED" if interrupted else "INCOMPLETE"


def _footer(result: BootstrapResult) -> str:
    good, total = sum(host.succeeded for host in result.hosts), len(result.hosts)
    if result.interrupted:
        return (
            f"interrupted after {result.duration_s:.1f}s: the run was cancelled, "
            f"{good} of {total} host(s) prepared; rerun the same command to finish"
        )
    changed = sum(host.changed for host in result.hosts)
    if result.check:
        text = f"check mode, nothing changed: {good} of {total} host(s) checked, {changed} change(s) pending"
    else:
        text = f"{good} of {total} host(s) prepared, {changed} change(s)"
    text += f", {result.duration_s:.1f}s"
    if result.artifacts_dir:
        text += f"; {result.artifacts_note}"
    return text


def print_table(run: BootstrapRun, console: Console) -> None:
    if run.host is not None:
        print_host_table(run.host, console)
    if run.upgrade is not None:
        print_upgrade(run.upgrade, console, make_console(stderr=True))
    if run.cluster is not None:
        _print_cluster(run.cluster, console)
    if run.migration is not None:
        print_migration(run.migration, console, make_console(stderr=True))
    if run.verify is not None:
        verify_report.print_table(run.verify, console)
    phases = ", ".join(f"{p.name} {'ok' if p.ok else 'FAILED'} ({p.duration_s:.1f}s)" for p in run.phases)
    console.print(literal(f"phases: {phases or 'none'}", style="" if run.ok else "red"))
    if run.hosts_to_fix:
        inventory = run.request.inventory or "INVENTORY"
        hosts = ",".join(run.hosts_to_fix)
        preflight = command_line("gpuctl", "preflight", "-i", inventory, "--limit", hosts)
        console.print(literal(f"  the host layer of {hosts} is at fault: `{preflight}` shows what it lacks"))
    if run.resume_command:
        console.print(literal(f"  resume with: {run.resume_command}"), soft_wrap=True)


def _print_cluster(cluster: ClusterResult, console: Console) -> None:
    from rich.table import Table

    objects = Table(box=None, pad_edge=False)
    for column in ("OBJECT", "ACTION"):
        objects.add_column(column)
    for obj in cluster.objects:
        objects.add_row(literal(obj.ref), obj.action, style="red" if obj.action == "conflict" else None)
    console.print(keep_words_whole(objects, console.width))
    for obj in cluster.objects:
        if obj.diff and cluster.check:
            console.print(literal(obj.diff))
        _print_ownership(obj, console)
    if cluster.taint is not None:
        console.print(literal(f"GPU taint: {cluster.taint.writes} node write(s)"))
    _print_helm(cluster, console)
    for node in cluster.nodes:
        if node.problem is not None:
            console.print(literal(f"{node.node}: {node.problem.id}: {node.problem.message}", style="red"))
            console.print(literal(f"  hint: {node.problem.hint}"))
    console.print(literal(_cluster_summary(cluster)))


class Applied(Protocol):
    """What the summary reads of one applied object (the report reads, never imports, the
    Kubernetes boundary)."""

    @property
    def ref(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def foreign(self) -> tuple[tuple[str, tuple[str, ...]], ...]: ...
    @property
    def foreign_fields(self) -> str: ...


def _print_ownership(obj: Applied, console: Console) -> None:
    """A conflict and its way out; what adopting an object removed, or would remove."""
    adopting = "adopts the object and removes them" if obj.foreign else ""
    if obj.message:
        console.print(literal(f"{obj.ref}: {obj.message}", style="red"))
        extra = (
            f" (that also {adopting}: {obj.foreign_fields}, which gpuctl does not declare)"
            if adopting
            else ""
        )
        console.print(literal(f"  hint: rerun with --force-conflicts to take these fields over{extra}"))
    elif obj.action in ("adopted", "would adopt"):
        removed = "removed" if obj.action == "adopted" else "would remove"
        note = f"{obj.ref}: {obj.action} from another field manager: {removed} {obj.foreign_fields}"
        console.print(literal(f"{note}, which gpuctl does not declare", style="yellow"), soft_wrap=True)
    elif obj.foreign:
        note = f"{obj.ref} also holds {obj.foreign_fields}, which gpuctl does not declare"
        console.print(literal(f"{note}; --force-conflicts {adopting}", style="yellow"), soft_wrap=True)


def _cluster_summary(cluster: ClusterResult) -> str:
    ready = sum(node.ready for node in cluster.nodes)
    if cluster.check:
        summary = f"check mode, nothing written: {cluster.writes} dry-run write(s)"
    elif cluster.writes == 0:
        summary = f"cluster layer already in place: 0 writes; {ready}/{len(cluster.nodes)} GPU node(s) ready"
    else:
        summary = f"{cluster.writes} write(s); {ready}/{len(cluster.nodes)} GPU node(s) ready"
    stuck = sum(node.terminal for node in cluster.nodes)
    if cluster.timed_out:
        summary += " (timed out waiting for the GPUs)"
    elif stuck:
        summary += f" (stopped waiting: {stuck} node(s) cannot get their GPUs until the cause above is fixed)"
    return f"{summary}, {cluster.duration_s:.1f}s"


def _print_helm(cluster: ClusterResult, console: Console) -> None:
    helm = cluster.helm
    if helm is None:
        return
    for warning in cluster.warnings:
        console.print(literal(f"warning: {warning}", style="yellow"), soft_wrap=True)
    if helm.repaired:
        console.print(literal(f"helm: the release was left pending by an earlier run: {helm.repaired}"))
    deployed = f" (deployed: {helm.deployed_chart}, {helm.release_status})" if helm.deployed_chart else ""
    console.print(literal(f"helm {helm.helm_version}: {helm.action} {helm.chart}{deployed}"))
    console.print(literal(f"  {helm.command}"), soft_wrap=True)
    if cluster.check and helm.diff:
        console.print(literal(helm.diff.rstrip("\n")))
    for node in cluster.nodes:
        if node.validator not in (None, "", "ready"):
            console.print(literal(f"{node.node}: Operator validator {node.validator}"))
