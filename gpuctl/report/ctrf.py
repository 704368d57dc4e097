"""`gpuctl verify -o ctrf`: the Common Test Report Format (CTRF) JSON report, made from verify's
JSON document (report.verify.to_json). The same test cases as JUnit (one per node x check, then
the cluster checks first) with the same times, so a CI that reads either shows the same run.

CTRF has no "warning": a warned check passed (as in JUnit) and keeps `rawStatus: warn` and its
message. Hints and diagnoses go in each test's `extra`, the namespace CTRF leaves to producers."""

from __future__ import annotations

from typing import Any

from gpuctl import __version__
from gpuctl.report.verify import CLUSTER_CLASSNAME, check_seconds

SPEC_VERSION = "1.0.0"
_STATUS = {"pass": "passed", "fail": "failed", "warn": "passed", "skip": "skipped"}
_COUNTED = ("passed", "failed", "skipped", "pending", "other")


def to_ctrf(document: dict[str, Any], *, stop_ms: int) -> dict[str, Any]:
    """The CTRF report of verify's `document`; `stop_ms` is when the run ended (milliseconds since
    the epoch), its start that less the run's duration_s."""
    tests = [_test(check, CLUSTER_CLASSNAME, "cluster", None) for check in document["cluster_checks"]]
    for node in document["nodes"]:
        name = node["name"]
        tests += [
            _test(check, f"node.{name}", f"node {name}", node.get("pod_seconds")) for check in node["checks"]
        ]
    summary: dict[str, Any] = {"tests": len(tests)}
    summary |= {status: sum(test["status"] == status for test in tests) for status in _COUNTED}
    duration = _milliseconds(document["duration_s"])
    summary |= {"suites": 1 + len(document["nodes"]), "start": stop_ms - duration, "stop": stop_ms}
    summary["duration"] = duration
    return {
        "reportFormat": "CTRF",
        "specVersion": SPEC_VERSION,
        "runId": document["run_id"],
        "generatedBy": "gpuctl",
        "results": {
            "tool": {"name": "gpuctl", "version": __version__},
            "summary": summary,
            "tests": tests,
            "extra": {"gpuctl": {"schema": document["schema"], "ok": document["ok"]}},
        },
    }


def _milliseconds(seconds: float) -> int:
    return round(seconds * 1000)


def _test(check: dict[str, Any], classname: str, suite: str, pod_seconds: float | None) -> dict[str, Any]:
    """One check as a CTRF test: named `classname/check id` (unique in the report, as JUnit's
    classname and name are together), in the suite JUnit puts it in."""
    seconds = check_seconds(check["id"], pod_seconds)
    test: dict[str, Any] = {
        "name": f"{classname}/{check['id']}",
        "status": _STATUS[check["status"]],
        "duration": 0 if seconds is None else _milliseconds(seconds),
        "suite": [suite],
        "type": "check",
        "rawStatus": check["status"],
        "labels": {"check": check["id"], "classname": classname},
    }
    if check["message"]:
        test["message"] = check["message"]
    extra = {key: check[key] for key in ("hint", "diagnosis") if check.get(key)}
    if extra:
        test["extra"] = extra
    return test
