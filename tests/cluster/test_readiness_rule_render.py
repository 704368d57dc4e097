"""`gpuctl render --readiness-rule`: a NodeReadinessRule the Node Readiness Controller accepts (its
CRD's own openAPIV3Schema and taint-key rules, vendored under tests/crds/), waiting for the node
condition `verify --gate` publishes and managing the taint key `verify --gate-taint` tolerates;
the sim stores it once the CRD is created, as an API server without the controller would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from gpuctl.defaults import GATE_CONDITION_TYPE
from tests.kubectl import Kubectl, needs_kubectl

CRD = Path(__file__).resolve().parents[1] / "crds" / "readiness.node.x-k8s.io_nodereadinessrules.yaml"


def _rendered(cli: Any, tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "out"
    result = cli(["render", "--readiness-rule", "--out", str(out), *args])
    assert result.exit_code == 0, result.stderr
    rule: dict[str, Any] = yaml.safe_load((out / "node-readiness-rule.yaml").read_text())
    return rule


def _schema() -> tuple[dict[str, Any], dict[str, Any]]:
    crd = yaml.safe_load(CRD.read_text())
    (version,) = crd["spec"]["versions"]
    return crd, version


def _taint_key_rules_hold(key: str) -> bool:
    """The CRD's CEL rules on spec.taint.key (x-kubernetes-validations, which jsonschema skips)."""
    prefix, _, name = key.partition("/")
    return (
        key.startswith("readiness.k8s.io/")
        and len(key) <= 253
        and len(key.split("/")) == 2
        and 0 < len(name) <= 63
        and bool(prefix)
        and name[0].isalnum()
        and name[-1].isalnum()
    )


def test_the_rendered_rule_validates_against_the_crd_schema(cli: Any, tmp_path: Path) -> None:
    crd, version = _schema()
    rule = _rendered(cli, tmp_path)
    assert rule["apiVersion"] == f"{crd['spec']['group']}/{version['name']}"
    assert rule["kind"] == crd["spec"]["names"]["kind"]
    schema = version["schema"]["openAPIV3Schema"]
    jsonschema.validate(rule, schema)
    assert _taint_key_rules_hold(rule["spec"]["taint"]["key"])
    assert rule["spec"]["conditions"] == [{"type": GATE_CONDITION_TYPE, "requiredStatus": "True"}]
    assert rule["spec"]["taint"]["key"] == "readiness.k8s.io/gpu-proven"
    # the schema does judge: an enforcement mode it does not know fails
    broken = {**rule, "spec": {**rule["spec"], "enforcementMode": "always"}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_the_key_and_condition_are_the_users(cli: Any, tmp_path: Path) -> None:
    _, version = _schema()
    rule = _rendered(
        cli,
        tmp_path,
        "--readiness-taint",
        "readiness.k8s.io/gpu-ready",
        "--readiness-condition",
        "GPUVerified",
    )
    jsonschema.validate(rule, version["schema"]["openAPIV3Schema"])
    assert rule["spec"]["taint"]["key"] == "readiness.k8s.io/gpu-ready"
    assert rule["spec"]["conditions"][0]["type"] == "GPUVerified"
    refused = cli(["render", "--readiness-rule", "--readiness-taint", "gpuctl.io/unproven"])
    assert refused.exit_code == 2
    assert "readiness.k8s.io/" in refused.stderr
    assert "Traceback" not in refused.stderr


@needs_kubectl
def test_the_sim_stores_the_rule_once_its_crd_exists(sim: Any, cli: Any, tmp_path: Path) -> None:
    kubectl = Kubectl(sim({"nodes": [{"name": "gpu-0", "gpus": 8}]}), tmp_path)
    kubectl.ok("create", "-f", str(CRD))
    _rendered(cli, tmp_path)
    kubectl.ok("apply", "--server-side", "-f", str(tmp_path / "out" / "node-readiness-rule.yaml"))
    stored = json.loads(kubectl.ok("get", "nodereadinessrules", "gpuctl-gpu-proven", "-o", "json"))
    assert stored["spec"]["taint"]["key"] == "readiness.k8s.io/gpu-proven"
    assert stored["spec"]["enforcementMode"] == "continuous"


def test_the_rendered_verify_then_only_publishes_the_condition(cli: Any, tmp_path: Path) -> None:
    """With --readiness-rule the verify Deployment (and CronJob) runs `--gate --gate-mode
    condition` with the rule's condition type: the controller owns the taint, which verify's pods
    tolerate (--gate-taint), or a node the controller keeps out would never be proven again."""
    rule = _rendered(
        cli, tmp_path, "--verify-deployment", "--gpuctl-image", "example.org/gpuctl:0.1.0",
        "--readiness-condition", "GPUVerified",
    )  # fmt: skip
    documents = yaml.safe_load_all((tmp_path / "out" / "verify-deployment.yaml").read_text())
    deployment = next(doc for doc in documents if doc and doc["kind"] == "Deployment")
    command = deployment["spec"]["template"]["spec"]["containers"][0]["command"]
    assert command[-7:] == [
        "--gate", "--gate-taint", "readiness.k8s.io/gpu-proven",  # tolerated: the node is proven again
        "--gate-mode", "condition", "--gate-condition", "GPUVerified",
    ]  # fmt: skip
    assert rule["spec"]["conditions"][0]["type"] == "GPUVerified"
    plain = cli(["render", "--verify-cronjob", "--gpuctl-image", "example.org/gpuctl:0.1.0"])
    assert '"--gate"]' in plain.stdout  # without the rule: today's gate, gpuctl owns the taint
