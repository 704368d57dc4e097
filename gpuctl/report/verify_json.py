"""`gpuctl verify --output json`: the versioned envelope `gpuctl.verify/v1`.

Contract (DESIGN.md): keys may be added, never renamed or removed.
"""

from __future__ import annotations

import json
from typing import Any

from gpuctl.core.verify_model import Check, NodeResult, VerifyResult

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
        "gpus": {
            "expected": node.gpus.expected,
            "capacity": node.gpus.capacity,
            "allocatable": node.gpus.allocatable,
            "seen": node.gpus.seen,
        },
        "product": node.product or None,
        "driver_version": node.driver_version or None,
        "checks": [check_dict(check) for check in node.checks],
    }


def envelope(result: VerifyResult) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "ok": result.ok,
        "nodes": [node_dict(node) for node in result.nodes],
        "cluster_checks": [check_dict(check) for check in result.cluster_checks],
        "run_id": result.run_id,
        "namespace": result.namespace,
        "pods_created": result.pods_created,
        "duration_s": round(result.duration_s, 3),
    }


def to_json(result: VerifyResult) -> str:
    return json.dumps(envelope(result), indent=2) + "\n"
