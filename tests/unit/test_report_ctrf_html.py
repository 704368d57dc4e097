"""verify's CTRF report and HTML page, made from its JSON document: CTRF valid against the
published schema with JUnit's cases and times; the page escaping every value from the cluster and
showing the proof level fields (cuda, nccl, gate) only when the document has them."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jsonschema

from gpuctl.core.gate import GateResult
from gpuctl.core.verify.model import (
    CudaGpu,
    GpuCounts,
    NcclFigures,
    NodeResult,
    VerifyResult,
    failed,
    passed,
    skipped,
    warned,
)
from gpuctl.report.ctrf import to_ctrf
from gpuctl.report.html_page import CSP, to_html
from gpuctl.report.verify import gate_json, to_json, to_junit

CTRF_SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "ctrf" / "ctrf.schema.json").read_text())
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\"' onmouseover=x \x1b[2J</details>"


def _result() -> VerifyResult:
    good = NodeResult(
        "gpu-0",
        GpuCounts(8, 8, 8, 8),
        (passed("node.ready", "Ready"), passed("pod.scheduled", "on gpu-0"), passed("nvidia-smi.run", "ok")),
        HOSTILE,
        "550.90.07",
        pod_seconds=1.25,
    )
    bad = NodeResult(
        "gpu-1",
        GpuCounts(8, 8, 6, None),
        (
            passed("node.ready", "Ready"),
            failed("nvidia-smi.run", f"nvidia-smi exited 1: {HOSTILE}", "reboot gpu-1", "nvml.mismatch"),
            skipped("nvidia-smi.gpus", "not run"),
            warned("nvidia-smi.driver", "several versions"),
        ),
        pod_seconds=2.5,
    )
    clusters = (
        passed("cluster.gpu-nodes", "2 GPU node(s)"),
        warned("cluster.driver-drift", "drift", "pin it"),
    )
    return VerifyResult((good, bad), clusters, "abcd1234", "gpuctl-system", 2, 3.25)


def _levelled() -> dict[str, Any]:
    """A --level nccl run: one node below its expected bus bandwidth, one GPU failing CUDA, a gate."""
    result = _result()
    fast, slow = (
        replace(
            node,
            level="nccl",
            cuda=(
                CudaGpu(0, True),
                CudaGpu(1, node.name == "gpu-0", None if node.name == "gpu-0" else HOSTILE),
            ),
            nccl=NcclFigures(busbw, 450.0, 1 << 30, 8),
        )
        for node, busbw in zip(result.nodes, (471.25, 120.5), strict=True)
    )
    # The gate block as `verify --gate` writes it (gate_json of the gate's result), not a made-up one.
    gate = GateResult(
        level="nccl", dry_run=False, gated=("gpu-1",), ungated=("gpu-0",), unchanged=(), writes=2
    )
    return {**to_json(replace(result, nodes=(fast, slow))), **gate_json(gate)}


def test_ctrf_is_valid_and_has_junits_cases_and_times() -> None:
    result = _result()
    report = to_ctrf(to_json(result), stop_ms=1_700_000_010_000)
    jsonschema.validate(report, CTRF_SCHEMA)
    junit = [
        (f"{case.get('classname')}/{case.get('name')}", round(float(case.get("time") or "nan") * 1000))
        for case in ET.fromstring(to_junit(result)).iter("testcase")
    ]
    tests = report["results"]["tests"]
    assert [(test["name"], test["duration"]) for test in tests] == junit
    assert ("node.gpu-0/nvidia-smi.run", 1250) in junit  # a pod check takes the pod's time
    summary = report["results"]["summary"]
    assert (summary["tests"], summary["passed"], summary["failed"], summary["skipped"]) == (9, 7, 1, 1)
    assert (summary["start"], summary["stop"], summary["duration"]) == (
        1_700_000_006_750,
        1_700_000_010_000,
        3250,
    )
    (failure,) = [test for test in tests if test["status"] == "failed"]
    assert failure["message"].endswith(HOSTILE)
    assert failure["extra"] == {"hint": "reboot gpu-1", "diagnosis": "nvml.mismatch"}
    assert [test["rawStatus"] for test in tests if "driver" in test["name"]] == ["warn", "warn"]


def test_ctrf_of_a_levelled_run_is_valid() -> None:
    jsonschema.validate(to_ctrf(_levelled(), stop_ms=0), CTRF_SCHEMA)


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(page: str) -> Elements:
    elements = Elements()
    elements.feed(page)
    elements.close()
    return elements


def test_page_escapes_every_value_and_loads_nothing() -> None:
    page = to_html(_levelled(), generated_at="2025-01-01T00:00:00Z", context=HOSTILE)
    elements = parsed(page)
    tags = {tag for tag, _ in elements.tags}
    assert not tags & {"script", "img", "link", "iframe", "object", "embed", "b"}
    assert all(not name.startswith("on") for _, attrs in elements.tags for name in attrs)
    assert ("meta", {"http-equiv": "Content-Security-Policy", "content": CSP}) in elements.tags
    assert "script-src 'none'" in CSP
    assert "default-src 'none'" in CSP
    text = "".join(elements.text)
    shown = HOSTILE.replace("\x1b", "\\x1b")  # control characters shown as escapes
    assert text.count(shown) >= 4  # the context, the product, the check message, the CUDA error
    assert "http" not in page.replace("http-equiv", "")  # no URL at all


def test_page_counts_groups_and_level_results() -> None:
    page = to_html(_levelled(), generated_at="2025-01-01T00:00:00Z")
    elements = parsed(page)
    body = next(attrs for tag, attrs in elements.tags if tag == "body")
    assert (body["data-nodes"], body["data-failing"], body["data-warning"], body["data-proven"]) == (
        "2",
        "1",
        "0",
        "1",
    )
    nodes = {attrs["data-node"]: attrs["data-state"] for tag, attrs in elements.tags if tag == "details"}
    assert nodes == {"gpu-0": "pass", "gpu-1": "fail"}
    groups = [
        attrs.get("data-check")
        for tag, attrs in elements.tags
        if tag == "section" and "group" in (attrs.get("class") or "")
    ]
    assert groups == ["nvidia-smi.run", None]  # the problem once, then the proven nodes
    text = " ".join(" ".join(elements.text).split())
    assert "fix: reboot gpu-1" in text
    assert "120.5 GB/s bus bandwidth, expected 450 GB/s (27%)" in text
    assert "471.2 GB/s bus bandwidth, expected 450 GB/s (105%)" in text
    assert "CUDA: 1/2 GPU(s) ran vectorAdd" in text
    assert "gated gpu-1" in text
    assert "ungated gpu-0" in text
    assert "taint_key gpuctl.io/unproven" in text
    assert "level nccl" in text
    assert "proof level nccl" in text


def test_page_of_a_document_without_level_fields() -> None:
    document = to_json(_result())
    for node in document["nodes"]:
        for key in ("level", "cuda", "nccl"):
            node.pop(key, None)
    page = to_html(document, generated_at="now")
    assert "NCCL" not in page
    assert "CUDA:" not in page
    assert 'id="gate"' not in page
    assert page.count("<details") == 2
