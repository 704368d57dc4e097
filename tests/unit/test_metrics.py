"""verify's metrics as exported (prometheus_client's exposition, read back with its parser), the
Grafana dashboard that charts them, the page that documents them, and the declared library range."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import prometheus_client
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gpuctl.core.gate import GateResult
from gpuctl.core.verify.model import GpuCounts, NodeResult, VerifyResult, failed, passed, warned
from gpuctl.report.metrics import LABEL_VALUE_MAX, METRICS, VerifyMetrics

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "docs" / "grafana-dashboard.json"
HOSTILE = 'gpu-0"} 1\ngpuctl_node_proven{node="forged"} 1\n\\ <b>x</b> # HELP'


def _fleet() -> VerifyResult:
    """A run with something in every metric: a proven node, a failing gated one with a diagnosis,
    a failing cluster check, the gate."""
    good = NodeResult(
        "gpu-0",
        GpuCounts(8, 8, 8, 8),
        (passed("node.ready", "Ready"),),
        product="NVIDIA H100",
        pod_seconds=1.5,
    )
    bad = NodeResult(
        "gpu-1",
        GpuCounts(8, 8, 7, 7),
        (failed("gpu.allocatable", "7 of 8", diagnosis="node.unhealthy-gpus"),),
        product="NVIDIA H100",
        pod_seconds=2.0,
    )
    gate = GateResult(level="smi", dry_run=False, gated=("gpu-1",), ungated=(), unchanged=("gpu-0",))
    cluster = (failed("runtimeclass.nvidia", "absent"),)
    return VerifyResult(
        (good, bad), cluster, "run", "gpuctl-system", pods_created=2, duration_s=3.0, gate=gate
    )


def _exposition(*results: VerifyResult) -> str:
    metrics = VerifyMetrics()
    for result in results:
        metrics.record(result)
    return generate_latest(metrics.registry).decode()


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_run_is_exported_with_its_values() -> None:
    samples = _samples(_exposition(_fleet(), _fleet()))
    assert (
        samples[
            "gpuctl_node_proven", frozenset({("node", "gpu-1"), ("product", "NVIDIA H100"), ("level", "smi")})
        ]
        == 0
    )
    assert samples["gpuctl_node_gated", frozenset({("node", "gpu-1"), ("level", "smi")})] == 1
    assert samples["gpuctl_node_gated", frozenset({("node", "gpu-0"), ("level", "smi")})] == 0
    assert samples["gpuctl_node_gpus", frozenset({("node", "gpu-1"), ("state", "expected")})] == 8
    failures = frozenset({("check", "gpu.allocatable"), ("signature", "node.unhealthy-gpus")})
    assert samples["gpuctl_verify_failures_total", failures] == 2  # counted over both runs
    assert samples["gpuctl_verify_runs_total", frozenset({("result", "failed")})] == 2
    assert samples["gpuctl_verify_pods_created_total", frozenset()] == 4
    assert samples["gpuctl_cluster_check_failed", frozenset({("check", "runtimeclass.nvidia")})] == 1


def test_a_node_that_left_leaves_no_series() -> None:
    fleet = _fleet()
    alone = VerifyResult(fleet.nodes[:1], (), "run", "gpuctl-system")
    names = {dict(labels).get("node") for _, labels in _samples(_exposition(fleet, alone))}
    assert "gpu-1" not in names
    assert "gpu-0" in names


def test_hostile_label_values_stay_inside_their_samples() -> None:
    hostile = NodeResult(HOSTILE, GpuCounts(None, 1, 1, None), (failed("node.ready", "x"),), product=HOSTILE)
    long_name = NodeResult("n" * 1000, GpuCounts(None, 1, 1, None), ())
    text = _exposition(VerifyResult((hostile, long_name), (), "run", "ns"))
    samples = _samples(text)
    proven = [dict(labels) for name, labels in samples if name == "gpuctl_node_proven"]
    assert {"node": HOSTILE, "product": HOSTILE, "level": "smi"} in proven
    assert {"node": "n" * LABEL_VALUE_MAX, "product": "", "level": "smi"} in proven
    assert len(proven) == 2
    assert not any(("node", "forged") in labels for _, labels in samples)
    assert {family.name for family in text_string_to_metric_families(text)} <= set(METRICS)


def _queried_metrics() -> set[str]:
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert exprs
    return {name for expr in exprs for name in re.findall(r"\bgpuctl_[a-z_]+\b", expr)}


def test_the_dashboard_queries_exactly_exported_metrics() -> None:
    exported = {name for name, _ in _samples(_exposition(_fleet()))}
    queried = _queried_metrics()
    assert queried <= exported, queried - exported
    families = {re.sub(r"_total$", "", name) for name in queried}
    assert families == set(METRICS), set(METRICS) - families  # every metric is charted


def test_every_metric_is_documented() -> None:
    page = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    exported = {name for name, _ in _samples(_exposition(_fleet()))}
    assert not {name for name in exported if f"`{name}" not in page}


def test_this_suite_runs_a_prometheus_client_inside_the_declared_range() -> None:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        dependencies = tomllib.load(handle)["project"]["dependencies"]
    spec = next(dep for dep in dependencies if dep.startswith("prometheus_client"))
    lowest, below = re.findall(r"[<>]=?\s*([0-9.]+)", spec)

    def version(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split(".")[:3])

    installed = prometheus_client.__version__ if hasattr(prometheus_client, "__version__") else ""
    from importlib.metadata import version as installed_version

    installed = installed or installed_version("prometheus_client")
    assert version(lowest) <= version(installed) < version(below)


def test_a_busy_node_is_neither_proven_nor_failing_and_keeps_the_watch_s_last_proof() -> None:
    """A node whose workloads held every GPU passed unproven: counted busy; gpuctl_node_proven
    keeps what an earlier run of the same watch proved (0 when none did)."""
    in_use = (warned("gpu.in-use", "all 8 GPU(s) held by 1 workload(s)"),)
    busy = NodeResult("gpu-0", GpuCounts(8, 8, 8, None, 8), in_use, busy=True)
    proven = NodeResult("gpu-0", GpuCounts(8, 8, 8, 8), (passed("node.ready", "Ready"),))
    alone = _samples(_exposition(VerifyResult((busy,), (), "run", "gpuctl-system")))
    assert alone[("gpuctl_verify_nodes", frozenset({("state", "busy")}))] == 1
    assert alone[("gpuctl_verify_nodes", frozenset({("state", "proven")}))] == 0
    assert alone[("gpuctl_verify_nodes", frozenset({("state", "failing")}))] == 0
    assert alone[("gpuctl_node_gpus", frozenset({("node", "gpu-0"), ("state", "in_use")}))] == 8
    labels = frozenset({("node", "gpu-0"), ("product", ""), ("level", "smi")})
    assert alone[("gpuctl_node_proven", labels)] == 0
    after_a_proof = _samples(
        _exposition(
            VerifyResult((proven,), (), "a", "gpuctl-system"), VerifyResult((busy,), (), "b", "gpuctl-system")
        )
    )
    assert after_a_proof[("gpuctl_node_proven", labels)] == 1
