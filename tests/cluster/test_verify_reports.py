"""`gpuctl verify -o ctrf`, `-o html` and `--report FILE` against a simulated cluster with healthy,
faulty and hostile nodes: CTRF valid against the published schema with JUnit's cases and times;
the page, rendered by a real headless chromium, showing the JSON's node counts and no markup from
the cluster's values. The screenshot stays in the test's tmp_path (verify-report.png)."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.polling import wait_until
from tests.unit.test_report_ctrf_html import CTRF_SCHEMA, parsed

# A product label and an nvidia-smi that try to add elements, attributes and scripts to the page.
HOSTILE = "<b id=injected>x</b><script>document.title='pwned'</script><img src=x onerror=alert(1)>\"'"
SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-{i}", "count": 3, "gpus": 8, "labels": {"team": HOSTILE}},
        {"name": "bad-0", "gpus": 8, "host": {"driver": "mismatch"}},
        {
            "name": "evil-0",
            "gpus": 2,
            "gpuProduct": HOSTILE,
            "nvidiaSmi": {"stdout": f"{HOSTILE}\n", "exitCode": 1},
        },
    ],
}
GPU_NODES = {"gpu-0": 8, "gpu-1": 8, "gpu-2": 8, "bad-0": 8, "evil-0": 2}


@pytest.fixture
def cluster(sim: Any) -> Any:
    started = sim(SCENARIO)
    wait_until(lambda: started.allocatable_gpus() == GPU_NODES, "every node to advertise its GPUs")
    return started


def test_ctrf_validates_and_has_the_junit_cases_of_the_same_run(cluster: Any, cli: Any) -> None:
    from gpuctl.core.verify import VerifyOptions
    from gpuctl.core.verify.run import verify
    from gpuctl.report.ctrf import to_ctrf
    from gpuctl.report.verify import to_json, to_junit

    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "ctrf")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    jsonschema.validate(report, CTRF_SCHEMA)
    summary = report["results"]["summary"]
    assert (summary["failed"], summary["suites"]) == (2, 6)
    assert summary["tests"] == len(report["results"]["tests"])

    # One run rendered both ways: the same cases, the same times.
    run = verify(cluster.api_client(), VerifyOptions())
    junit = [
        (f"{case.get('classname')}/{case.get('name')}", round(float(case.get("time") or "nan") * 1000))
        for case in ET.fromstring(to_junit(run)).iter("testcase")
    ]
    ctrf = to_ctrf(to_json(run), stop_ms=0)["results"]["tests"]
    assert [(test["name"], test["duration"]) for test in ctrf] == junit
    assert any(duration > 0 for _, duration in junit)


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("chromium is not installed (.ci/install-host-deps.sh installs it)")
    return found


def headless(browser: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def test_html_page_renders_in_chromium_with_the_json_counts(cluster: Any, cli: Any, tmp_path: Path) -> None:
    browser = chromium()
    page = tmp_path / "verify-report.html"
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "json", "--report", page)
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)  # the same run as the page
    failing = sum(not node["ok"] for node in document["nodes"])
    assert (len(document["nodes"]), failing) == (5, 2)

    dom = headless(browser, "--dump-dom", page.as_uri()).stdout
    elements = parsed(dom)
    states = [attrs["data-state"] for tag, attrs in elements.tags if tag == "details"]
    assert (len(states), states.count("fail"), states.count("pass")) == (5, failing, 5 - failing)
    body = next(attrs for tag, attrs in elements.tags if tag == "body")
    assert (body["data-nodes"], body["data-failing"]) == ("5", str(failing))
    # The hostile values are text on the page: no element, attribute or script came from them.
    assert not [tag for tag, _ in elements.tags if tag in {"b", "script", "img"}]
    assert all(attrs.get("id") != "injected" for _, attrs in elements.tags)
    assert not [name for _, attrs in elements.tags for name in attrs if name.startswith("on")]
    assert "<title>gpuctl verify: FAILED</title>" in dom
    assert HOSTILE in " ".join(elements.text)

    screenshot = tmp_path / "verify-report.png"
    headless(browser, f"--screenshot={screenshot}", "--window-size=1280,2000", page.as_uri())
    assert screenshot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_html_on_stdout_is_the_same_page(cluster: Any, cli: Any, tmp_path: Path) -> None:
    """`-o html` prints, byte for byte, the page `--report FILE` writes of the same run."""
    page = tmp_path / "verify-report.html"
    result = cli("verify", "--kubeconfig", cluster.kubeconfig, "-o", "html", "--no-pods", "--report", page)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert result.stdout == page.read_text(encoding="utf-8")
    states = {
        attrs["data-node"]: attrs["data-state"]
        for tag, attrs in parsed(result.stdout).tags
        if tag == "details"
    }
    assert states == dict.fromkeys(GPU_NODES, "pass")  # --no-pods: the read-only checks only
