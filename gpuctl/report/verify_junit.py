"""`gpuctl verify --output junit`: one testcase per node x check, cluster checks under `cluster`."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable

from gpuctl.core.verify_model import Check, Status, VerifyResult

CLUSTER_CLASSNAME = "cluster"


def _testcase(parent: ET.Element, classname: str, check: Check) -> None:
    case = ET.SubElement(parent, "testcase", classname=classname, name=check.id, time="0")
    if check.status is Status.FAIL:
        failure = ET.SubElement(case, "failure", message=check.message, type=check.diagnosis or "check")
        failure.text = f"{check.message}\nhint: {check.hint}" if check.hint else check.message
    elif check.status is Status.SKIP:
        ET.SubElement(case, "skipped", message=check.message)
    elif check.status is Status.WARN:
        out = ET.SubElement(case, "system-out")
        out.text = f"warning: {check.message}" + (f"\nhint: {check.hint}" if check.hint else "")


def _suite(root: ET.Element, name: str, classname: str, checks: Iterable[Check]) -> None:
    items = list(checks)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(items)),
        failures=str(sum(c.status is Status.FAIL for c in items)),
        errors="0",
        skipped=str(sum(c.status is Status.SKIP for c in items)),
    )
    for check in items:
        _testcase(suite, classname, check)


def to_junit(result: VerifyResult) -> str:
    checks = [*result.cluster_checks, *(c for node in result.nodes for c in node.checks)]
    root = ET.Element(
        "testsuites",
        name="gpuctl verify",
        tests=str(len(checks)),
        failures=str(sum(c.status is Status.FAIL for c in checks)),
        errors="0",
        skipped=str(sum(c.status is Status.SKIP for c in checks)),
    )
    _suite(root, "cluster", CLUSTER_CLASSNAME, result.cluster_checks)
    for node in result.nodes:
        _suite(root, f"node {node.name}", f"node.{node.name}", node.checks)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
