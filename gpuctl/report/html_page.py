"""`gpuctl verify -o html` and `--report FILE`: one self-contained HTML page of a verify run, made
from verify's JSON document (report.verify.to_json), to hand to a colleague or keep as a CI artefact.

The fleet is a grid of nodes coloured by state, grouped by problem: each distinct problem once
(verify_problems, as the table prints it) with its cause, its fix and its nodes, then the proven
nodes. A node opens on click (<details>: no script at all) to its GPUs, product, driver, sharing,
proof level results and checks. Fields of the document that are absent or null (level, cuda,
nccl, gate) are left out, so the page renders documents of every gpuctl.verify/v1 version.

Every value comes from the cluster (node names, product labels, nvidia-smi output quoted in check
messages) and is escaped (html.escape, attributes double-quoted) after safe_text.visible; the page
loads nothing: its Content-Security-Policy allows only its own stylesheet, by hash, and no script.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Iterator
from typing import Any

from gpuctl.core.verify.model import Check, CheckStatus
from gpuctl.report.safe_text import visible
from gpuctl.report.tables import node_ranges, product_name
from gpuctl.report.verify_problems import SharedProblem, group_problems

STATES = ("fail", "warn", "pass")  # a node's state: a failing check, else a warning, else proven
_STATE_WORDS = {"fail": "failing", "warn": "warning", "pass": "proven"}
_COLOURS = {"fail": "#d7263d", "warn": "#f4a300", "pass": "#2e9e44", "skip": "#9aa0a6"}

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1f2328;background:#fff}
h1{font-size:1.4rem;margin:0 0 .5rem}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}
h3{font-size:1rem;margin:.2rem 0}
dl.meta,dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;margin:.5rem 0}
dt{color:#59636e}dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 .4rem;border-radius:3px;color:#fff;font-size:.8rem}
.badge.fail{background:#d7263d}.badge.warn{background:#f4a300}.badge.pass{background:#2e9e44}
.badge.skip{background:#9aa0a6}
.group{border-left:4px solid #9aa0a6;padding:.3rem .8rem;margin:.8rem 0}
.group.fail{border-color:#d7263d}.group.warn{border-color:#f4a300}.group.pass{border-color:#2e9e44}
.cause,.fix{margin:.2rem 0;white-space:pre-wrap;overflow-wrap:anywhere}.fix{color:#0b5cad}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(9.5rem,1fr));gap:3px;margin:.4rem 0}
.node>summary{list-style:none;cursor:pointer;color:#fff;font:12px monospace;padding:2px 5px;
border-radius:3px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.node>summary::-webkit-details-marker{display:none}
.node.fail>summary{background:#d7263d}.node.warn>summary{background:#b87900}
.node.pass>summary{background:#2e9e44}
.node[open]{grid-column:1/-1;border:1px solid #d0d7de;border-radius:4px;padding:0 0 .5rem}
.node[open]>summary{white-space:normal}.detail{padding:0 .8rem}
table{border-collapse:collapse;margin:.4rem 0}
td,th{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
td.text{white-space:pre-wrap;overflow-wrap:anywhere;max-width:70rem}
.passed{color:#59636e;font-size:.9rem;overflow-wrap:anywhere}
"""
_CSS_HASH = base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
CSP = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; img-src 'none'; script-src 'none'; "
    "base-uri 'none'; form-action 'none'"
)


def to_html(document: dict[str, Any], *, generated_at: str, context: str | None = None) -> str:
    """The page of verify's `document`; `generated_at` (UTC time) and `context` (the kubeconfig
    context, when one was named) are run metadata the document does not hold."""
    nodes: list[dict[str, Any]] = document["nodes"]
    counts = dict.fromkeys(STATES, 0)
    for node in nodes:
        counts[node_state(node)] += 1
    verdict = "all GPU nodes verified" if document["ok"] else "FAILED"
    data = " ".join(f'data-{_STATE_WORDS[state]}="{counts[state]}"' for state in STATES)
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_text(CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>gpuctl verify: {_text(verdict)}</title><style>{CSS}</style></head>",
        f'<body data-nodes="{len(nodes)}" {data}>',
        f"<header><h1>gpuctl verify: {_text(verdict)}</h1>",
        _summary_bar(counts),
        _meta(document, counts, generated_at, context),
        "</header>",
        *_cluster_checks(document["cluster_checks"]),
        *_gate(document.get("gate")),
        *_operator(document.get("gpu_operator")),
        f'<section id="fleet"><h2>GPU nodes ({len(nodes)})</h2>',
        *_fleet(nodes),
        "</section></body></html>\n",
    ]
    return "\n".join(parts)


def _text(value: object) -> str:
    """Any value as HTML text or a double-quoted attribute value: control characters shown as
    escapes (safe_text.visible), then <, >, &, " and ' as entities."""
    return html.escape(visible(str(value)), quote=True)


def _count(value: object) -> str:
    """A number as plain text (escaped where it is placed), `-` when there is none."""
    return "-" if value is None else str(value)


def node_state(node: dict[str, Any]) -> str:
    """fail (a check failed), warn (one warned) or pass: the colour of the node on the page."""
    if not node["ok"]:
        return "fail"
    return "warn" if any(check["status"] == "warn" for check in node["checks"]) else "pass"


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[state]} {_STATE_WORDS[state]}" for state in STATES)


def _summary_bar(counts: dict[str, int]) -> str:
    """An inline SVG bar: the share of failing, warning and proven nodes."""
    total = sum(counts.values()) or 1
    width, offset, rects = 600, 0.0, []
    for state in STATES:
        share = width * counts[state] / total
        if share:
            rects.append(
                f'<rect x="{offset:.1f}" y="0" width="{share:.1f}" height="14" fill="{_COLOURS[state]}">'
                f"<title>{counts[state]} {_STATE_WORDS[state]}</title></rect>"
            )
        offset += share
    label = _counts_text(counts)
    return (
        f'<svg class="bar" width="{width}" height="14" role="img" aria-label="{_text(label)}">'
        f'<rect width="{width}" height="14" fill="#eaeef2"/>{"".join(rects)}</svg><p>{_text(label)}</p>'
    )


def _facts(pairs: Iterable[tuple[str, object]], css: str = "facts") -> str:
    """A definition list of the pairs whose value is not None."""
    rows = "".join(
        f"<dt>{_text(name)}</dt><dd>{_text(value)}</dd>" for name, value in pairs if value is not None
    )
    return f'<dl class="{css}">{rows}</dl>'


def _meta(document: dict[str, Any], counts: dict[str, int], generated_at: str, context: str | None) -> str:
    levels = sorted({node["level"] for node in document["nodes"] if node.get("level")})
    return _facts(
        (
            ("generated", generated_at),
            ("context", context),
            ("nodes", f"{sum(counts.values())}: {_counts_text(counts)}"),
            ("proof level", "/".join(levels) or None),
            ("verification pods", document.get("pods_created")),
            ("namespace", document.get("namespace")),
            ("run id", document.get("run_id")),
            ("duration", f"{document['duration_s']:.1f} s" if "duration_s" in document else None),
            ("kept pods", ", ".join(document.get("kept_pods") or []) or None),
            ("remove them with", document.get("cleanup_command")),
        ),
        "meta",
    )


def _check_rows(checks: Iterable[dict[str, Any]]) -> str:
    rows = []
    for check in checks:
        status = check["status"]
        text = check["message"] + (f"\nhint: {check['hint']}" if check.get("hint") else "")
        if check.get("diagnosis"):
            text += f"\ndiagnosis: {check['diagnosis']}"
        check_id = _text(check["id"])
        rows.append(
            f'<tr data-check="{check_id}" data-status="{_text(status)}"><td>{check_id}</td>'
            f'<td><span class="badge {_text(status)}">{_text(status.upper())}</span></td>'
            f'<td class="text">{_text(text)}</td></tr>'
        )
    return "<table><tr><th>check</th><th>status</th><th>message</th></tr>" + "".join(rows) + "</table>"


def _cluster_checks(checks: list[dict[str, Any]]) -> Iterator[str]:
    yield '<section id="cluster"><h2>Cluster checks</h2>'
    yield _check_rows(checks)
    yield "</section>"


def _gate(gate: object) -> Iterator[str]:
    """--gate's outcome, whatever its fields: each shown as it is."""
    if gate is None:
        return
    yield '<section id="gate"><h2>Gate</h2>'
    if isinstance(gate, dict):
        yield _facts((key, _plain(value)) for key, value in gate.items())
    else:
        yield f"<p>{_text(_plain(gate))}</p>"
    yield "</section>"


def _plain(value: object) -> str:
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) or "none"
    return json.dumps(value) if isinstance(value, dict) else str(value)


def _operator(operator: dict[str, Any] | None) -> Iterator[str]:
    if not operator:
        return
    validators = operator.get("validators") or {}
    ready = sum(state == "ready" for state in validators.values())
    yield '<section id="gpu-operator"><h2>GPU Operator</h2>'
    yield _facts(
        (
            ("namespace", operator.get("namespace")),
            ("ClusterPolicy", _plain(operator.get("cluster_policies") or {})),
            ("validated nodes", f"{ready}/{len(validators)}"),
        )
    )
    yield "</section>"


def _first_problem(node: dict[str, Any]) -> Check | None:
    """The node's first failing check, else its first warning (NodeResult.first_problem)."""
    for wanted in ("fail", "warn"):
        for check in node["checks"]:
            if check["status"] == wanted:
                return Check(check["id"], CheckStatus(wanted), check["message"], check.get("hint") or "")
    return None


def _fleet(nodes: list[dict[str, Any]]) -> Iterator[str]:
    """Each problem once with its nodes (failures first, the most nodes first), then the proven."""
    by_name = {node["name"]: node for node in nodes}
    for problem in group_problems((node["name"], _first_problem(node)) for node in nodes):
        yield _problem_group(problem, [by_name[name] for name in problem.nodes])
    proven = [node for node in nodes if node_state(node) == "pass"]
    if proven:
        yield '<section class="group pass" data-status="pass">'
        yield f'<h3><span class="badge pass">PASS</span> proven: {len(proven)} node(s)</h3>'
        yield _grid(proven)
        yield "</section>"


def _problem_group(problem: SharedProblem, nodes: list[dict[str, Any]]) -> str:
    status = _text(problem.status.value)
    hint = f'<p class="fix">fix: {_text(problem.hint)}</p>' if problem.hint else ""
    return (
        f'<section class="group {status}" data-check="{_text(problem.check_id)}" data-status="{status}">'
        f'<h3><span class="badge {status}">{status.upper()}</span> {_text(problem.check_id)} on '
        f"{len(nodes)} node(s): {_text(node_ranges(problem.nodes))}</h3>"
        f'<p class="cause">{_text(problem.message)}</p>{hint}{_grid(nodes)}</section>'
    )


def _grid(nodes: list[dict[str, Any]]) -> str:
    return '<div class="grid">' + "".join(_node(node) for node in nodes) + "</div>"


def _node(node: dict[str, Any]) -> str:
    state = node_state(node)
    name = _text(node["name"])
    return (
        f'<details class="node {state}" data-node="{name}" data-state="{state}">'
        f'<summary title="{name}">{name}</summary><div class="detail">{_node_detail(node)}</div></details>'
    )


def _node_detail(node: dict[str, Any]) -> str:
    gpus = node["gpus"]
    sharing = node.get("sharing") or {}
    counts = " · ".join(
        f"{label} {_count(gpus.get(key))}"
        for label, key in (("expected", "expected"), ("capacity", "capacity"), ("allocatable", "allocatable"))
    )
    facts = _facts(
        (
            ("product", product_name(node.get("product") or "") or None),
            ("driver", node.get("driver_version")),
            ("GPUs", f"{counts} · seen {_count(gpus.get('seen'))}"),
            ("physical GPUs", gpus.get("physical")),
            ("MIG devices", gpus.get("mig_devices") or None),
            ("sharing", _sharing(sharing) if sharing else None),
            ("GPU allocation", node.get("gpu_allocation")),
            ("proof level", node.get("level")),
            ("verification pod", None if node.get("pod_seconds") is None else f"{node['pod_seconds']:.1f} s"),
            ("GPU Operator validator", node.get("operator_validation")),
        )
    )
    problems = [check for check in node["checks"] if check["status"] != "pass"]
    passed = [check["id"] for check in node["checks"] if check["status"] == "pass"]
    parts = [facts, _cuda(node.get("cuda")), _nccl(node.get("nccl")), _fabric(node.get("fabric"))]
    parts.append(_check_rows(problems) if problems else "")
    parts.append(f'<p class="passed">passed: {_text(", ".join(passed))}</p>' if passed else "")
    return "".join(parts)


def _sharing(sharing: dict[str, Any]) -> str:
    mode = str(sharing.get("mode") or "none")
    replicas = sharing.get("replicas") or 1
    text = mode if replicas <= 1 else f"{mode} x{replicas}"
    mig = sharing.get("mig_strategy") or "none"
    return text if mig == "none" else f"{text}, MIG {mig}"


def _cuda(gpus: list[dict[str, Any]] | None) -> str:
    """--level cuda: how many GPUs ran vectorAdd, and each failing GPU's error."""
    if gpus is None:
        return ""
    good = sum(bool(gpu["ok"]) for gpu in gpus)
    errors = "".join(
        f"<li>GPU {_text(gpu['index'])}: {_text(gpu.get('error') or 'failed')}</li>"
        for gpu in gpus
        if not gpu["ok"]
    )
    return f'<p class="cuda">CUDA: {good}/{len(gpus)} GPU(s) ran vectorAdd</p>' + (
        f"<ul>{errors}</ul>" if errors else ""
    )


def _nccl(figures: dict[str, Any] | None) -> str:
    """--level nccl: the all-reduce bus bandwidth against the node's expected figure, as a bar."""
    if figures is None:
        return ""
    busbw, expected = figures.get("busbw_gbps"), figures.get("expected_gbps")
    text_start = f"NCCL all-reduce over {_count(figures.get('gpus'))} GPU(s)"
    if busbw is None:
        return f'<p class="nccl">{_text(text_start)}: no bandwidth measured</p>'
    text = f"{text_start}: {busbw:.1f} GB/s bus bandwidth"
    if not expected:
        return f'<p class="nccl">{_text(text)}</p>'
    ratio = busbw / expected
    colour = _COLOURS["pass" if ratio >= 1 else "fail"]
    bar = (
        f'<svg width="300" height="12" role="img" aria-label="{ratio:.0%} of expected">'
        f'<rect width="300" height="12" fill="#eaeef2"/>'
        f'<rect width="{300 * min(ratio, 1.0):.1f}" height="12" fill="{colour}"/></svg>'
    )
    return f'<p class="nccl">{_text(f"{text}, expected {expected:g} GB/s ({ratio:.0%})")} {bar}</p>'


def _fabric(figures: dict[str, Any] | None) -> str:
    """--level fabric: the multi-node run that decided the node, and what NCCL used on it."""
    if figures is None:
        return ""
    nodes = figures.get("nodes") or []
    busbw, expected = figures.get("busbw_gbps"), figures.get("expected_gbps")
    measured = "no bandwidth measured" if busbw is None else f"{busbw:.1f} GB/s bus bandwidth"
    if busbw is not None and expected:
        measured += f", expected {expected:g} GB/s"
    network = figures.get("transport") or "unknown"
    nics = figures.get("nics_seen")
    if nics is not None:
        network += f", {nics} of {figures.get('nics_expected') or '?'} NICs"
    text = (
        f"fabric all-reduce over {len(nodes)} node(s) (round {figures.get('round')} of "
        f"{figures.get('rounds')}): {measured}; network {network}; group {figures.get('group')}"
    )
    return f'<p class="fabric">{_text(text)}</p>'


# `gpuctl status -o html`: the same page, its node grid coloured by what status reads (no proof).
_STATUS_WORDS = {"fail": "degraded", "warn": "held", "pass": "serving"}  # held: cordoned or gated


def status_node_state(node: dict[str, Any]) -> str:
    """fail (NotReady, or GPUs not all allocatable), warn (cordoned or gated), pass: as the status
    table marks rows (report.status.print_table)."""
    gpus = node["gpus"]
    if not node["ready"] or not gpus["capacity"] or gpus["allocatable"] < gpus["capacity"]:
        return "fail"
    return "warn" if not node["schedulable"] or node.get("gate") else "pass"


def status_html(document: dict[str, Any], *, generated_at: str, context: str | None = None) -> str:
    """The page of status's `document` (report.status.to_json): totals, then the GPU nodes grouped
    by state, each opening to its GPUs, driver, taints and software."""
    nodes: list[dict[str, Any]] = document["nodes"]
    groups: dict[str, list[dict[str, Any]]] = {state: [] for state in STATES}
    for node in nodes:
        groups[status_node_state(node)].append(node)
    totals = document["totals"]
    data = " ".join(f'data-{_STATUS_WORDS[state]}="{len(groups[state])}"' for state in STATES)
    title = f"gpuctl status: {len(nodes)} GPU node(s)"
    meta = _facts(
        (
            ("generated", generated_at),
            ("context", context),
            ("cluster nodes", document["cluster_nodes"]),
            ("GPUs", f"{totals['capacity']} capacity, {totals['allocatable']} allocatable"),
            ("GPUs in use", totals["in_use"]),
            ("GPU Operator mode", document.get("operator_mode")),
        ),
        "meta",
    )
    sections = [
        f'<section class="group {state}" data-status="{state}"><h3><span class="badge {state}">'
        f"{_STATUS_WORDS[state].upper()}</span> {len(members)} node(s)</h3>"
        + '<div class="grid">'
        + "".join(_status_node(node) for node in members)
        + "</div></section>"
        for state, members in groups.items()
        if members
    ]
    return "\n".join(
        [
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{_text(CSP)}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_text(title)}</title><style>{CSS}</style></head>",
            f'<body data-nodes="{len(nodes)}" {data}>',
            f"<header><h1>{_text(title)}</h1>{meta}</header>",
            f'<section id="fleet"><h2>GPU nodes ({len(nodes)})</h2>',
            *sections,
            "</section></body></html>\n",
        ]
    )


def _status_node(node: dict[str, Any]) -> str:
    state = status_node_state(node)
    name = _text(node["name"])
    gpus = node["gpus"]
    facts = _facts(
        (
            ("product", product_name(node.get("product") or "") or None),
            (
                "GPUs",
                f"capacity {gpus['capacity']} · allocatable {gpus['allocatable']} · in use {gpus['in_use']}",
            ),
            ("driver", node.get("driver")),
            ("sharing", _sharing(node["sharing"]) if node.get("sharing") else None),
            ("GPU allocation", node.get("gpu_allocation")),
            ("taints", ", ".join(node["taints"]) or "none"),
            ("gate", node.get("gate")),
            (
                "status",
                ("Ready" if node["ready"] else "NotReady") + ("" if node["schedulable"] else ", cordoned"),
            ),
            ("GPU memory", f"{node['gpu_memory_mib']} MiB" if node.get("gpu_memory_mib") else None),
            ("kubelet", node.get("kubelet_version")),
            ("container runtime", node.get("container_runtime")),
            ("kernel", node.get("kernel_version")),
            ("OS image", node.get("os_image")),
        )
    )
    return (
        f'<details class="node {state}" data-node="{name}" data-state="{state}">'
        f'<summary title="{name}">{name}</summary><div class="detail">{facts}</div></details>'
    )
