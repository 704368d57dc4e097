"""`gpuctl verify`'s output: the JSON envelope `gpuctl.verify/v1`, the table for people (one row
per GPU node, then the cluster checks) and JUnit XML (one testcase per node x check)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from gpuctl.core.proof.verdict import is_proven, passed_unproven
from gpuctl.core.verify.model import (
    Check,
    CheckStatus,
    CudaGpu,
    FabricFigures,
    GpuDevice,
    NcclFigures,
    NodeResult,
    VerifyResult,
)
from gpuctl.core.verify.watch import Change
from gpuctl.report.safe_text import literal, visible
from gpuctl.report.tables import emit_table, keep_words_whole, product_name
from gpuctl.report.verify_problems import print_shared_problems

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from gpuctl.core.gate import GateResult

SCHEMA = "gpuctl.verify/v1"


def check_dict(check: Check) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": check.id,
        "status": check.status.value,
        "message": check.message,
        "hint": check.hint,
    }
    if check.diagnosis:
        data["diagnosis"] = check.diagnosis
    return data


def node_dict(node: NodeResult) -> dict[str, Any]:
    return {
        "name": node.name,
        "ok": node.ok,
        "proven": is_proven(node),
        "busy": node.busy,
        "gpus": {
            "expected": node.gpus.expected,
            "capacity": node.gpus.capacity,
            "allocatable": node.gpus.allocatable,
            "seen": node.gpus.seen,
            "in_use": node.gpus.in_use,
            "physical": node.sharing.physical,
            "mig_devices": node.sharing.mig_devices,
        },
        "sharing": {
            "mode": node.sharing.mode,
            "replicas": node.sharing.replicas,
            "mig_strategy": node.sharing.mig_strategy,
        },
        "product": node.product or None,
        "driver_version": node.driver_version or None,
        "pod_seconds": None if node.pod_seconds is None else round(node.pod_seconds, 3),
        "gpu_allocation": node.gpu_allocation.value,
        "level": node.level,
        "cuda": None if node.cuda is None else [_cuda_gpu(gpu) for gpu in node.cuda],
        "nccl": None if node.nccl is None else _nccl(node.nccl),
        "fabric": None if node.fabric is None else _fabric(node.fabric),
        "unhealthy_gpus": [{"device": device, "reason": reason} for device, reason in node.device_taints],
        # `--gate` where a stack gates GPUs one by one: each GPU and its per-GPU gate (nodes[].gpus
        # keeps its shape)
        "gpu_devices": [_gpu_device(device) for device in node.gpu_devices],
        "checks": [check_dict(check) for check in node.checks],
    }


def _gpu_device(device: GpuDevice) -> dict[str, Any]:
    return {
        "index": device.index,
        "uuid": device.uuid,
        "device": device.device,
        "pool": device.pool,
        "driver": device.driver,
        "ok": device.ok,
        "gated": device.gated,
        "rule": device.rule or None,
    }


def _cuda_gpu(gpu: CudaGpu) -> dict[str, Any]:
    return {"index": gpu.index, "ok": gpu.ok, "error": gpu.error}


def _nccl(figures: NcclFigures) -> dict[str, Any]:
    busbw = figures.busbw_gbps
    return {
        "busbw_gbps": None if busbw is None else round(busbw, 2),
        "expected_gbps": figures.expected_gbps,
        "size_bytes": figures.size_bytes,
        "gpus": figures.gpus,
        "algorithm": figures.algorithm,
        "transport": figures.transport,
        "expected_reason": figures.expected_reason,
    }


def _fabric(figures: FabricFigures) -> dict[str, Any]:
    busbw = figures.busbw_gbps
    return {
        "group": figures.group,
        "nodes": list(figures.nodes),
        "busbw_gbps": None if busbw is None else round(busbw, 2),
        "expected_gbps": figures.expected_gbps,
        "transport": figures.transport or None,
        "nics_seen": figures.nics_seen,
        "nics_expected": figures.nics_expected,
        "round": figures.round,
        "rounds": figures.rounds,
    }


def to_json(result: VerifyResult) -> dict[str, Any]:
    """The `gpuctl.verify/v1` envelope (DESIGN.md): keys may be added, never renamed or removed."""
    return {
        "schema": SCHEMA,
        "ok": result.ok,
        "nodes": [
            node_dict(node) | {"operator_validation": _operator_state(result, node.name)}
            for node in result.nodes
        ],
        "cluster_checks": [check_dict(check) for check in result.cluster_checks],
        "run_id": result.run_id,
        "namespace": result.namespace,
        "pods_created": result.pods_created,
        "duration_s": round(result.duration_s, 3),
        "kept_pods": list(result.kept_pods),
        "cleanup_command": result.cleanup_command or None,
        "gpu_operator": _operator_json(result),
    } | gate_json(result.gate)


def gate_json(gate: GateResult | None) -> dict[str, Any]:
    """`verify --gate`: the top-level `gate` key (absent without --gate)."""
    if gate is None:
        return {}
    names = {key: list(getattr(gate, key)) for key in ("gated", "ungated", "unchanged", "failed")}
    conditions = [
        {"node": node, "status": status, "reason": reason} for node, status, reason in gate.conditions
    ]
    return {
        "gate": {
            "level": gate.level,
            "dry_run": gate.dry_run,
            **names,
            "writes": gate.writes,
            "taint_key": gate.taint_key,
            "mode": gate.mode,
            "condition": {"type": gate.condition_type, "nodes": conditions},
            "devices_gated": list(gate.devices_gated),
            "devices_lifted": list(gate.devices_lifted),
        }
    }


def _operator_state(result: VerifyResult, node: str) -> str | None:
    """The GPU Operator's validator on the node (null when the Operator does not manage GPUs)."""
    return result.operator.state_of(node) if result.operator is not None else None


def _operator_json(result: VerifyResult) -> dict[str, Any] | None:
    operator = result.operator
    if operator is None:
        return None
    return {
        "namespace": operator.namespace,
        "cluster_policies": dict(operator.cluster_policies),
        "validators": dict(operator.validators),
    }


_STYLE = {
    CheckStatus.PASS: "green",
    CheckStatus.FAIL: "bold red",
    CheckStatus.WARN: "yellow",
    CheckStatus.SKIP: "dim",
}


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _node_status(node: NodeResult) -> CheckStatus:
    if not node.ok:
        return CheckStatus.FAIL
    return CheckStatus.WARN if any(c.status is CheckStatus.WARN for c in node.checks) else CheckStatus.PASS


def _problem(check: Check | None) -> str:
    if check is None:
        return ""
    text = f"{check.id}: {check.message}"
    return f"{text}\nhint: {check.hint}" if check.hint else text


def _problems(node: NodeResult) -> str:
    """wide: every failing check, then every warning, each with its hint."""
    wanted = [c for c in node.checks if c.failed] + [c for c in node.checks if c.status is CheckStatus.WARN]
    return "\n".join(_problem(check) for check in wanted)


def _sharing(node: NodeResult) -> str:
    sharing = node.sharing
    text = sharing.mode if sharing.replicas <= 1 else f"{sharing.mode} x{sharing.replicas}"
    return text if sharing.mig_strategy == "none" else f"{text}, MIG {sharing.mig_strategy}"


def _nodes_table(result: VerifyResult, width: int, *, wide: bool = False) -> Table:
    """wide: a boxed table with every problem and hint per node; else one line per node, its
    first problem named by check id (the problems follow the table, each once)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title="GPU nodes",
        title_justify="left",
        show_lines=wide,
        box=box.HEAVY_HEAD if wide else None,
        pad_edge=wide,
    )
    extra = ("SHARING", "PHYSICAL") if wide else ()
    table.add_column("NODE", overflow="ellipsis")  # a name is never cut (tables.keep_words_whole)
    for column in ("GPUS exp/cap/alloc/seen", *extra, "PRODUCT"):
        table.add_column(column, overflow="fold")
    for column in ("DRIVER", "STATUS"):
        table.add_column(column, no_wrap=True)
    table.add_column("PROBLEMS + HINTS" if wide else "PROBLEM", overflow="fold")
    for node in result.nodes:
        gpus = node.gpus
        counts = "/".join(_count(v) for v in (gpus.expected, gpus.capacity, gpus.allocatable, gpus.seen))
        status = _node_status(node)
        extra = (_sharing(node), _count(node.sharing.physical)) if wide else ()
        table.add_row(
            node.name,
            counts,
            *extra,
            product_name(node.product) or "-",
            node.driver_version or "-",
            Text(status.value.upper(), style=_STYLE[status]),
            literal(_problems(node) if wide else _first_problem_id(node)),
        )
    return keep_words_whole(table, width)


def _first_problem_id(node: NodeResult) -> str:
    check = node.first_problem
    return "-" if check is None else check.id


def _cluster_table(result: VerifyResult, width: int) -> object:
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Cluster checks", title_justify="left")
    table.add_column("CHECK", no_wrap=True)
    table.add_column("STATUS", no_wrap=True)
    table.add_column("MESSAGE + HINT", overflow="fold")
    for check in result.cluster_checks:
        text = f"{check.message}\nhint: {check.hint}" if check.hint else check.message
        table.add_row(check.id, Text(check.status.value.upper(), style=_STYLE[check.status]), literal(text))
    return keep_words_whole(table, width)


def print_wide(result: VerifyResult, console: Console) -> None:
    """`-o wide`: also each node's sharing and physical GPUs, and every problem, not the first."""
    print_table(result, console, wide=True)


def print_table(result: VerifyResult, console: Console, *, wide: bool = False) -> None:
    if result.nodes:
        emit_table(console, _nodes_table(result, console.width, wide=wide))
        if not wide:
            print_shared_problems(result.nodes, console)
    console.print(_cluster_table(result, console.width))
    _print_operator(result, console)
    failed_nodes = sum(not node.ok for node in result.nodes)
    busy = sum(passed_unproven(node) for node in result.nodes)
    verdict = "all GPU nodes verified" if result.ok else f"FAILED: {failed_nodes} node(s) with failing checks"
    if result.ok and busy:
        verdict = f"no GPU node failed; {busy} busy node(s) not proven by this run (gpu.in-use)"
    if not result.ok and failed_nodes == 0:
        verdict = "FAILED: a cluster check failed"
    levels = sorted({node.level for node in result.nodes if node.level != "smi"})
    level = f", level {'/'.join(levels)}" if levels else ""
    console.print(
        f"{verdict} ({len(result.nodes)} node(s){level}, {result.pods_created} verification pod(s), "
        f"{result.duration_s:.1f}s)",
        style="green" if result.ok else "bold red",
        markup=False,
    )
    if result.kept_pods:
        console.print(kept_pods_note(result), markup=False, highlight=False)


def _print_operator(result: VerifyResult, console: Console) -> None:
    """On an Operator-managed cluster: the Operator's own validation next to gpuctl's checks."""
    operator = result.operator
    if operator is None:
        return
    policies = ", ".join(f"{name} {state or 'no state'}" for name, state in operator.cluster_policies)
    ready = sum(state == "ready" for _, state in operator.validators)
    console.print(
        f"GPU Operator (namespace {operator.namespace}): ClusterPolicy {policies or 'none'}; "
        f"operator.validation: {ready}/{len(operator.validators)} node(s) validated",
        markup=False,
        highlight=False,
    )
    for node, state in operator.validators:
        if state != "ready":
            console.print(f"  {node}: validator {state}", markup=False, highlight=False)


def kept_pods_note(result: VerifyResult) -> str:
    """--keep-pods: which pods stayed, and the command that removes them."""
    return (
        f"kept {len(result.kept_pods)} verification pod(s) in namespace {result.namespace} (--keep-pods): "
        f"{', '.join(result.kept_pods)}\nremove them with `{result.cleanup_command}`"
    )


CLUSTER_CLASSNAME = "cluster"
# Checks judged from the node's verification pod: their time is the pod's, create request to end.
_POD_CHECK_PREFIXES = ("pod.", "nvidia-smi.")


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def check_seconds(check_id: str, pod_seconds: float | None) -> float | None:
    """The time a check took in JUnit and CTRF: its pod's for a pod check, else None (none)."""
    return pod_seconds if check_id.startswith(_POD_CHECK_PREFIXES) else None


def _testcase(parent: ET.Element, classname: str, check: Check, pod_seconds: float | None) -> None:
    timed = check_seconds(check.id, pod_seconds)
    seconds = "0" if timed is None else _seconds(timed)
    case = ET.SubElement(parent, "testcase", classname=classname, name=check.id, time=seconds)
    if check.status is CheckStatus.FAIL:
        failure = ET.SubElement(case, "failure", message=check.message, type=check.diagnosis or "check")
        failure.text = f"{check.message}\nhint: {check.hint}" if check.hint else check.message
    elif check.status is CheckStatus.SKIP:
        ET.SubElement(case, "skipped", message=check.message)
    elif check.status is CheckStatus.WARN:
        out = ET.SubElement(case, "system-out")
        out.text = f"warning: {check.message}" + (f"\nhint: {check.hint}" if check.hint else "")


def _suite(
    root: ET.Element, name: str, classname: str, checks: Iterable[Check], pod_seconds: float | None = None
) -> None:
    items = list(checks)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(items)),
        failures=str(sum(c.status is CheckStatus.FAIL for c in items)),
        errors="0",
        skipped=str(sum(c.status is CheckStatus.SKIP for c in items)),
        time=_seconds(pod_seconds or 0.0),
    )
    for check in items:
        _testcase(suite, classname, check, pod_seconds)


def to_junit(result: VerifyResult) -> str:
    checks = [*result.cluster_checks, *(c for node in result.nodes for c in node.checks)]
    root = ET.Element(
        "testsuites",
        name="gpuctl verify",
        tests=str(len(checks)),
        failures=str(sum(c.status is CheckStatus.FAIL for c in checks)),
        errors="0",
        skipped=str(sum(c.status is CheckStatus.SKIP for c in checks)),
        time=_seconds(result.duration_s),
    )
    _suite(root, "cluster", CLUSTER_CLASSNAME, result.cluster_checks)
    for node in result.nodes:
        _suite(root, f"node {node.name}", f"node.{node.name}", node.checks, node.pod_seconds)
    _make_visible(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _make_visible(root: ET.Element) -> None:
    """Every text and attribute of the report through safe_text.visible: messages quote node
    output, and XML 1.0 has no way to write most control characters (a raw ESC makes the file
    unreadable to every JUnit consumer); shown escaped, a CI page displays them as text."""
    for element in root.iter():
        if element.text:
            element.text = visible(element.text)
        for name, value in list(element.attrib.items()):
            element.set(name, visible(value))


def print_changes(changes: list[Change], when: str, console: Console) -> None:
    """`verify --watch`: one line per change, stamped with the run's time."""
    for change in changes:
        before = change.before or "new"
        after = change.after or "gone"
        console.print(
            literal(f"{when} {change.subject}: {before} -> {after}", style="" if change.ok else "red")
        )


def change_json(changes: list[Change], when: str, result: VerifyResult) -> dict[str, Any]:
    """`verify --watch -o json`: one line per run that changed something (NDJSON)."""
    return {
        "time": when,
        "changes": [
            {"subject": c.subject, "before": c.before or None, "after": c.after or None, "ok": c.ok}
            for c in changes
        ],
        "verify": to_json(result),
    }
