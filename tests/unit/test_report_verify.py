"""Renderers of `gpuctl verify`: the JSON contract, JUnit XML, the table without colour."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET

import pytest

from gpuctl.core.verify.model import GpuCounts, NodeResult, VerifyResult, failed, passed, skipped, warned
from gpuctl.report.console import make_console
from gpuctl.report.verify import SCHEMA, print_table, to_json, to_junit


def _result() -> VerifyResult:
    good = NodeResult(
        "gpu-0",
        GpuCounts(8, 8, 8, 8),
        (passed("node.ready", "Ready"), passed("nvidia-smi.gpus", "8 GPU(s) seen = 8 requested")),
        "NVIDIA H100 80GB HBM3",
        "550.90.07",
    )
    bad = NodeResult(
        "gpu-1",
        GpuCounts(None, 8, 6, None),
        (
            passed("node.ready", "Ready"),
            failed(
                "gpu.allocatable",
                "allocatable 6 < capacity 8: 2 GPU(s) unhealthy",
                'reset <the> GPU & "retry"',
                "node.unhealthy-gpus",
            ),
            skipped("nvidia-smi.run", "not run"),
            warned("nvidia-smi.driver", "several versions"),
        ),
    )
    clusters = (
        passed("cluster.gpu-nodes", "2 GPU node(s)"),
        warned("cluster.driver-drift", "drift", "pin it"),
    )
    return VerifyResult((good, bad), clusters, "abcd1234", "gpuctl-system", 1, 2.5)


def test_json_envelope_keys_are_the_contract() -> None:
    data = json.loads(json.dumps(to_json(_result())))
    assert data["schema"] == SCHEMA == "gpuctl.verify/v1"
    assert {"schema", "ok", "nodes", "cluster_checks"} <= data.keys()
    assert data["ok"] is False
    node = data["nodes"][1]
    assert {"name", "ok", "gpus", "checks"} <= node.keys()
    assert set(node["gpus"]) >= {"expected", "capacity", "allocatable", "seen"}
    assert node["gpus"] == {
        "expected": None, "capacity": 8, "allocatable": 6, "seen": None, "in_use": 0, "physical": None,
        "mig_devices": 0,
    }  # fmt: skip
    assert node["sharing"] == {"mode": "exclusive", "replicas": 1, "mig_strategy": "none"}
    for check in [*node["checks"], *data["cluster_checks"]]:
        assert {"id", "status", "message", "hint"} <= check.keys()
        assert check["status"] in {"pass", "fail", "warn", "skip"}
    assert node["checks"][1]["diagnosis"] == "node.unhealthy-gpus"
    assert data["nodes"][0]["ok"] is True
    assert data["kept_pods"] == []
    assert data["cleanup_command"] is None


def test_kept_pods_are_named_with_the_command_that_removes_them() -> None:
    from dataclasses import replace

    kept = replace(_result(), kept_pods=("gpuctl-verify-abcd1234-gpu-0",))
    data = to_json(kept)
    assert data["kept_pods"] == ["gpuctl-verify-abcd1234-gpu-0"]
    assert data["cleanup_command"] == "kubectl -n gpuctl-system delete pods -l gpuctl.io/verify-run=abcd1234"


def test_ok_is_true_only_without_failures() -> None:
    result = _result()
    healthy = VerifyResult((result.nodes[0],), result.cluster_checks, "r", "ns")
    assert to_json(healthy)["ok"] is True
    assert to_json(result)["ok"] is False


def test_junit_is_well_formed_one_testcase_per_node_and_check() -> None:
    root = ET.fromstring(to_junit(_result()))
    cases = root.findall(".//testcase")
    assert len(cases) == 2 + 4 + 2
    failures = root.findall(".//testcase/failure")
    assert len(failures) == 1
    assert failures[0].get("message", "").startswith("allocatable 6 < capacity 8")
    assert "reset <the> GPU" in (failures[0].text or "")
    assert len(root.findall(".//testcase/skipped")) == 1
    assert root.get("failures") == "1"
    names = {(case.get("classname"), case.get("name")) for case in cases}
    assert ("node.gpu-1", "gpu.allocatable") in names
    assert ("cluster", "cluster.driver-drift") in names


def test_table_has_no_colour_when_no_color_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    stream = io.StringIO()
    print_table(_result(), make_console(stream))
    text = stream.getvalue()
    assert "\x1b[" not in text
    assert "gpu-1" in text
    assert "gpu.allocatable" in text
    assert "hint: reset <the> GPU" in text
    assert "FAILED" in text


def test_console_is_plain_and_wide_on_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("COLUMNS", raising=False)
    console = make_console(io.StringIO())
    assert console.color_system is None
    assert console.width >= 120
