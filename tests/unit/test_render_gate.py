"""`gpuctl render --gate-taint KEY --gate-condition TYPE`: verify's admission policies allow that
taint and that condition, and the in-cluster verify gates with them (tests/cluster/
test_gate_custom_policy.py applies them under `rbac: enforce`)."""

from __future__ import annotations

import pytest
import yaml

from gpuctl.core.render import render_manifests
from gpuctl.core.render_options import RenderOptions
from gpuctl.errors import ConfigError

KEY = "readiness.k8s.io/gpu-proven"
IMAGE = "example.org/gpuctl:0.1.0"


def _files(options: RenderOptions) -> dict[str, str]:
    return {rendered.filename: rendered.content for rendered in render_manifests(options).files}


def _policies(text: str) -> dict[str, dict]:
    docs = [doc for doc in yaml.safe_load_all(text) if doc]
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"}


def _cronjob_command(files: dict[str, str]) -> list[str]:
    docs = [doc for doc in yaml.safe_load_all(files["verify-cronjob.yaml"]) if doc]
    cronjob = next(d for d in docs if d["kind"] == "CronJob")
    command: list[str] = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0][
        "command"
    ]
    return command


def test_the_policies_name_the_key_and_the_condition() -> None:
    policies = _policies(
        _files(RenderOptions(rbac=True, gate_taint=KEY, gate_condition="GPUReady"))["rbac-verify.yaml"]
    )
    taint = policies["gpuctl-verify"]["spec"]
    assert f"t.key != '{KEY}'" in taint["variables"][0]["expression"]
    assert taint["validations"][0]["message"] == f"may change no taint but {KEY}"
    status = policies["gpuctl-verify-status"]["spec"]
    assert status["validations"][0]["message"] == "may change no node condition but GPUReady"
    # taint-gpu-nodes' policy keeps its own --taint-key
    taint_policy = _policies(_files(RenderOptions(rbac=True, gate_taint=KEY))["rbac-taint.yaml"])[
        "gpuctl-taint"
    ]
    assert taint_policy["spec"]["validations"][0]["message"] == "may change no taint but nvidia.com/gpu"


def test_the_cronjob_gates_with_them() -> None:
    options = RenderOptions(
        verify_cronjob=True, gpuctl_image=IMAGE, gate_taint=KEY, gate_condition="GPUReady"
    )
    files = _files(options)
    command = _cronjob_command(files)
    assert command[command.index("--gate") :] == [
        "--gate",
        "--gate-taint",
        KEY,
        "--gate-condition",
        "GPUReady",
    ]
    assert f"may change no taint but {KEY}" in files["verify-cronjob-rbac.yaml"]
    assert _cronjob_command(_files(RenderOptions(verify_cronjob=True, gpuctl_image=IMAGE)))[-1] == "--gate"


def test_a_readiness_rule_condition_is_the_one_the_status_policy_allows() -> None:
    options = RenderOptions(
        verify_cronjob=True, gpuctl_image=IMAGE, readiness_rule=True, readiness_condition="GPUReady"
    )
    files = _files(options)
    command = _cronjob_command(files)
    assert command[command.index("--gate") :] == [
        "--gate",
        "--gate-taint",
        "readiness.k8s.io/gpu-proven",
        "--gate-mode",
        "condition",
        "--gate-condition",
        "GPUReady",
    ]
    status = _policies(files["verify-cronjob-rbac.yaml"])["gpuctl-verify-status"]["spec"]
    assert status["validations"][0]["message"] == "may change no node condition but GPUReady"


def test_a_gate_condition_the_readiness_rule_does_not_wait_for_is_refused() -> None:
    with pytest.raises(ConfigError, match="--gate-condition 'GPUReady'"):
        render_manifests(RenderOptions(rbac=True, readiness_rule=True, gate_condition="GPUReady"))
    same = RenderOptions(
        rbac=True, readiness_rule=True, gate_condition="GPUReady", readiness_condition="GPUReady"
    )
    assert "may change no node condition but GPUReady" in _files(same)["rbac-verify.yaml"]
