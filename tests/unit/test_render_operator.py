"""`gpuctl render --stack operator` (alias --gpu-operator): the Helm values bootstrap installs the
GPU Operator with; and the pure rules that read the Operator's per-node state."""

from __future__ import annotations

import subprocess
import sys

import yaml

from gpuctl.core.stacks.operator.state import (
    diagnose_operator_node,
    first_pending_validation,
    validator_state,
)
from gpuctl.kube.gpu_operator import ContainerState, OperandPod, operand_pod

# Every GPU DaemonSet gpuctl renders tolerates the gate (gpuctl.core.gate) too.
GATE_TOLERATION = {"key": "gpuctl.io/unproven", "operator": "Exists", "effect": "NoSchedule"}
# The Node Readiness Controller's taint of `render --readiness-rule`, any effect.
READINESS_TOLERATION = {"key": "readiness.k8s.io/gpu-proven", "operator": "Exists"}


def _gpuctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuctl", *args], capture_output=True, text=True, check=False
    )


def test_stack_operator_is_the_gpu_operator_alias_with_the_same_values() -> None:
    by_stack = _gpuctl("render", "--stack", "operator", "--sharing", "time-slicing")
    by_alias = _gpuctl("render", "--gpu-operator", "--sharing", "time-slicing")
    assert by_stack.returncode == 0, by_stack.stderr
    assert by_stack.stdout == by_alias.stdout
    values = yaml.safe_load(by_stack.stdout.removeprefix("---\n"))
    assert values["driver"] == {"enabled": False}
    assert values["cdi"] == {"enabled": True}
    assert "helm upgrade --install gpu-operator" in by_stack.stdout  # the command, in a comment


def test_operator_flags_reach_the_values() -> None:
    args = ("--distribution", "rke2", "--operator-driver", "--node-selector", "nvidia.com/gpu.present=true")
    rendered = _gpuctl("render", "--stack", "operator", *args)
    values = yaml.safe_load(rendered.stdout.removeprefix("---\n"))
    assert values["driver"] == {"enabled": True}
    env = {item["name"]: item["value"] for item in values["toolkit"]["env"]}
    assert env["CONTAINERD_CONFIG"] == "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"
    assert values["node-feature-discovery"]["worker"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}


def test_stack_dra_renders_the_dra_driver_values() -> None:
    args = ("--taint-key", "gpu", "--taint-effect", "NoExecute", "--node-selector", "pool=gpu")
    rendered = _gpuctl("render", "--stack", "dra", *args)
    assert rendered.returncode == 0, rendered.stderr
    values = yaml.safe_load(rendered.stdout.removeprefix("---\n"))
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["gpuResourcesEnabledOverride"] is True  # the chart refuses GPUs without it
    assert values["nvidiaDriverRoot"] == "/"
    plugin = values["kubeletPlugin"]
    assert plugin["tolerations"] == [
        {"key": "gpu", "operator": "Exists", "effect": "NoExecute"},
        GATE_TOLERATION,
        READINESS_TOLERATION,
    ]
    assert plugin["nodeSelector"] == {"pool": "gpu"}
    assert (
        "helm upgrade --install dra-driver-nvidia-gpu "
        "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu --version 0.5.1 "
        "--namespace dra-driver-nvidia-gpu"
    ) in rendered.stdout


def test_stack_dra_with_rbac_needs_out() -> None:
    completed = _gpuctl("render", "--stack", "dra", "--rbac")
    assert completed.returncode == 2
    assert "one YAML stream" in completed.stderr


def _validator(*stages: tuple[str, str, int | None], ready: bool = False) -> OperandPod:
    statuses = tuple(ContainerState(name, state, "", code, False, 0) for name, state, code in stages)
    return OperandPod(
        "nvidia-operator-validator", "gpu-operator", "v-1", "gpu-0", "Pending", ready, statuses, ()
    )


def test_the_validator_state_names_the_first_check_not_passed() -> None:
    pod = _validator(("driver-validation", "terminated", 0), ("toolkit-validation", "running", None))
    assert first_pending_validation(pod) == "toolkit-validation"
    assert validator_state(pod) == "waiting: toolkit-validation"
    assert validator_state(None) == "absent"


def test_operand_pods_are_recognised_by_their_app_label_or_name() -> None:
    item = {
        "metadata": {"name": "nvidia-driver-daemonset-x7k2p", "namespace": "gpu-operator", "labels": {}},
        "spec": {"nodeName": "gpu-0"},
        "status": {
            "phase": "Pending",
            "initContainerStatuses": [
                {
                    "name": "k8s-driver-manager",
                    "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                }
            ],
        },
    }
    pod = operand_pod(item)
    assert pod is not None
    assert (pod.operand, pod.node, pod.crash_looping, pod.restarts) == (
        "nvidia-driver-daemonset",
        "gpu-0",
        True,
        4,
    )
    assert operand_pod({"metadata": {"name": "coredns-1", "labels": {"app": "coredns"}}}) is None


def test_a_crash_looping_driver_container_is_matched_against_the_diagnosis_table() -> None:
    item = {
        "metadata": {"name": "nvidia-driver-daemonset-abcde", "namespace": "gpu-operator"},
        "spec": {"nodeName": "gpu-0"},
        "status": {
            "containerStatuses": [
                {
                    "name": "nvidia-driver-ctr",
                    "restartCount": 9,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                }
            ]
        },
    }
    driver = operand_pod(item)
    assert driver is not None
    logs = {
        "nvidia-driver-ctr": "Resolving Linux kernel version...\nCould not resolve Linux kernel version\n"
    }
    problem = diagnose_operator_node(
        "gpu-0", {}, [driver], namespace="gpu-operator", driver_enabled=True, toolkit_enabled=False,
        read_log=lambda _pod, container: logs[container],
    )  # fmt: skip
    assert problem is not None
    assert problem.diagnosis == "operator.kernel-headers"
    assert "kernel headers" in problem.message
