"""Per-GPU gates on DRA (Kubernetes 1.37), through the CLI against the sim: a node whose only
failure is one GPU's uncorrectable ECC error stays schedulable while a DeviceTaintRule keeps that
GPU alone from claims; once the fault clears (the scenario's `gpuHealth` timeline), the next
`--watch` round proves the GPU again and only then removes the rule."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from tests.cluster.test_gate_ecosystem import condition_of, taint_keys, verify_json
from tests.cluster.test_json_schemas import _assert_valid
from tests.interrupt import interrupt, running
from tests.polling import wait_until

CLEARS_AFTER_S = 25.0  # the first run must be over by then (it takes seconds)


def scenario() -> dict[str, Any]:
    return {
        "kubernetesVersion": "v1.37.0",
        "podStartSeconds": 0.05,
        "gpuAllocation": "dra",
        "nodes": [
            {"name": "gpu-ok", "gpus": 8},
            {
                "name": "gpu-ecc",
                "gpus": 8,
                "gpuHealth": [
                    {"afterSeconds": 0, "gpu": 2, "fault": "uncorrectableEcc"},
                    {"afterSeconds": CLEARS_AFTER_S, "gpu": 2, "fault": "none"},
                ],
            },
        ],
    }


def published(cluster: Any) -> dict[str, int]:
    from kubernetes.client import ResourceV1Api

    slices = ResourceV1Api(cluster.api_client()).list_resource_slice().items
    return {str(item.spec.node_name): len(item.spec.devices or []) for item in slices}


def gate_rules(cluster: Any) -> list[dict[str, Any]]:
    from kubernetes.client import ResourceV1Api

    api = cluster.api_client()
    rules = ResourceV1Api(api).list_device_taint_rule(label_selector="gpuctl.io/gate=device").items
    return [api.sanitize_for_serialization(rule) for rule in rules]


def _next_line(process: subprocess.Popen[str], timeout: float) -> dict[str, Any] | None:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            return None
        if line.strip():
            found: dict[str, Any] = json.loads(line)
            return found
    return None


def _watch_until_lifted(cluster: Any) -> tuple[dict[str, Any] | None, str]:
    """`verify --watch --level cuda --gate` until a round lifts a device gate: that round's
    document (None if none did in time), and the watch's stderr."""
    argv = [sys.executable, "-m", "gpuctl", "verify", "--watch", "--interval", "5", "-o", "json"]
    argv += ["--level", "cuda", "--gate", "--kubeconfig", str(cluster.kubeconfig)]
    lifted: dict[str, Any] | None = None
    with running(argv) as process:
        deadline = time.monotonic() + CLEARS_AFTER_S + 90
        while lifted is None and time.monotonic() < deadline:
            line = _next_line(process, deadline - time.monotonic())
            if line is None:
                break
            if line["verify"]["gate"]["devices_lifted"]:
                lifted = line["verify"]
        stderr = interrupt(process)
    return lifted, stderr


def test_one_bad_gpu_is_gated_alone_and_returns_only_once_proven(sim: Any, cli: Any) -> None:
    cluster = sim(scenario())
    wait_until(lambda: published(cluster) == {"gpu-ok": 8, "gpu-ecc": 8}, "GPUs published")
    code, report, stderr = verify_json(cli, cluster, "--level", "cuda", "--gate")
    assert code == 1, stderr
    _assert_valid(report)  # the shipped gpuctl.verify/v1 schema, the gate's additions included
    # both nodes stay schedulable: the failure is confined to one GPU
    assert taint_keys(cluster, "gpu-ok") == {}
    assert taint_keys(cluster, "gpu-ecc") == {}
    rules = gate_rules(cluster)
    assert [rule["spec"]["deviceSelector"] for rule in rules] == [
        {"driver": "gpu.nvidia.com", "pool": "gpu-ecc", "device": "gpu-2"}
    ]
    assert rules[0]["spec"]["taint"] == {"key": "gpuctl.io/unproven", "value": "cuda", "effect": "NoSchedule"}
    assert report["gate"]["devices_gated"] == ["gpu-ecc/gpu-2"]
    nodes = {node["name"]: node for node in report["nodes"]}
    gated = [(d["device"], d["index"], d["ok"]) for d in nodes["gpu-ecc"]["gpu_devices"] if d["gated"]]
    assert gated == [("gpu-2", 2, False)]
    assert all(d["uuid"].startswith("GPU-") for d in nodes["gpu-ecc"]["gpu_devices"])
    assert not any(d["gated"] for d in nodes["gpu-ok"]["gpu_devices"])
    # nodes[].gpus keeps its shape
    assert set(nodes["gpu-ecc"]["gpus"]) >= {"expected", "capacity", "allocatable", "seen"}
    healthy, sick = condition_of(cluster, "gpu-ok"), condition_of(cluster, "gpu-ecc")
    assert healthy is not None
    assert sick is not None
    assert (healthy["status"], healthy["reason"]) == ("True", "cuda")
    assert (sick["status"], sick["reason"]) == ("False", "cuda.workload")
    # status shows the gated GPU
    status = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    _assert_valid(json.loads(status.stdout))
    rows = {node["name"]: node for node in json.loads(status.stdout)["nodes"]}
    assert [d["device"] for d in rows["gpu-ecc"]["gated_devices"]] == ["gpu-2"]
    # a second run proves the gated GPU again (its claim tolerates the gate) and keeps it gated
    code, report, _ = verify_json(cli, cluster, "--level", "cuda", "--gate")
    assert code == 1
    assert report["gate"]["devices_gated"] == []
    assert report["gate"]["devices_lifted"] == []
    assert len(gate_rules(cluster)) == 1
    # after the fault clears, the next --watch round proves the GPU and only then lifts the rule
    lifted, stderr = _watch_until_lifted(cluster)
    assert lifted is not None, f"the rule was never lifted: {stderr}"
    assert lifted["gate"]["devices_lifted"] == ["gpu-ecc/gpu-2"]
    ecc = next(node for node in lifted["nodes"] if node["name"] == "gpu-ecc")
    assert ecc["ok"] is True
    assert [gpu["ok"] for gpu in ecc["cuda"]] == [True] * 8
    assert gate_rules(cluster) == []
    recovered = condition_of(cluster, "gpu-ecc")
    assert recovered is not None
    assert (recovered["status"], recovered["reason"]) == ("True", "cuda")


def _role_scenario(clears_after_s: float, also_forbidden: tuple[str, ...] = ()) -> dict[str, Any]:
    """The DRA cluster under the rendered verify role: every request the role does not grant is
    refused (the sim's `forbidden`, as test_rbac_roles_suffice.py does)."""
    from gpuctl.core.render import RenderOptions
    from gpuctl.core.stacks import Stack
    from gpuctl.defaults import GPUCTL_NAMESPACE
    from tests.cluster.test_rbac_roles_suffice import _forbidden, _granted

    base = scenario()
    base["nodes"][1]["gpuHealth"][1]["afterSeconds"] = clears_after_s
    granted = _granted(RenderOptions(rbac=True, stack=Stack.DRA), "verify")
    return {**base, "namespaces": [GPUCTL_NAMESPACE], "forbidden": _forbidden(granted, also_forbidden)}


def test_the_verify_role_grants_what_device_gates_need(sim: Any, cli: Any) -> None:
    clears_after_s = 15.0
    cluster = sim(_role_scenario(clears_after_s))
    started = time.monotonic()
    wait_until(lambda: published(cluster) == {"gpu-ok": 8, "gpu-ecc": 8}, "GPUs published")
    code, report, stderr = verify_json(cli, cluster, "--level", "cuda", "--gate")
    assert code == 1, stderr
    assert report["gate"]["devices_gated"] == ["gpu-ecc/gpu-2"]  # create devicetaintrules
    assert condition_of(cluster, "gpu-ecc") is not None  # patch nodes/status
    time.sleep(max(0.0, clears_after_s + 1 - (time.monotonic() - started)))
    code, report, stderr = verify_json(cli, cluster, "--level", "cuda", "--gate")
    assert code == 0, stderr
    assert report["gate"]["devices_lifted"] == ["gpu-ecc/gpu-2"]  # delete devicetaintrules
    assert gate_rules(cluster) == []


def test_without_create_devicetaintrules_the_gate_says_so(sim: Any, cli: Any) -> None:
    cluster = sim(_role_scenario(600.0, ("create devicetaintrules",)))
    wait_until(lambda: published(cluster) == {"gpu-ok": 8, "gpu-ecc": 8}, "GPUs published")
    result = cli(
        ["verify", "--kubeconfig", str(cluster.kubeconfig), "--level", "cuda", "--gate", "-o", "json"]
    )
    assert result.exit_code == 3
    assert "create devicetaintrules" in result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)  # the verdict is reported before the refusal ends the run
    assert report["gate"]["devices_gated"] == []
    assert [(n["node"], n["status"]) for n in report["gate"]["condition"]["nodes"]] == [
        ("gpu-ecc", "False"),
        ("gpu-ok", "True"),
    ]


def test_a_gpu_the_driver_reported_unhealthy_returns_only_once_proven(sim: Any, cli: Any) -> None:
    """The DRA driver's health check taints GPU 3 (Xid 79); the gate keeps it out by its own rule,
    so when the driver's taint goes (a plugin restart), no workload gets the GPU until a verify
    run has proven it."""
    from kubernetes.client import CoreV1Api

    from tests.cluster.test_kubernetes_137 import gpu_pod

    clears_after_s = 12.0
    cluster = sim(
        {
            "kubernetesVersion": "v1.37.0",
            "podStartSeconds": 0.05,
            "gpuAllocation": "dra",
            "nodes": [
                {
                    "name": "gpu-xid",
                    "gpus": 4,
                    "gpuHealth": [
                        {"afterSeconds": 0, "gpu": 3, "fault": "xid", "xid": 79},
                        {"afterSeconds": clears_after_s, "gpu": 3, "fault": "none"},
                    ],
                }
            ],
        }
    )
    started = time.monotonic()
    wait_until(lambda: published(cluster) == {"gpu-xid": 4}, "GPUs published")
    code, report, stderr = verify_json(cli, cluster, "--level", "cuda", "--gate")
    assert code == 1, stderr
    node = report["nodes"][0]
    assert node["unhealthy_gpus"] == [{"device": "gpu-3", "reason": "gpu.nvidia.com/xid=79:NoSchedule"}]
    assert report["gate"]["devices_gated"] == ["gpu-xid/gpu-3"]
    assert taint_keys(cluster, "gpu-xid") == {}  # schedulable for its three healthy GPUs
    assert [(d["device"], d["ok"], d["gated"]) for d in node["gpu_devices"]][3] == ("gpu-3", None, True)
    # the driver's taint goes: the gate still keeps the GPU from a pod asking for all four
    time.sleep(max(0.0, clears_after_s + 1 - (time.monotonic() - started)))
    wait_until(lambda: not _driver_tainted(cluster), "the driver's health taint gone")
    core = CoreV1Api(cluster.api_client())
    core.create_namespaced_pod("default", gpu_pod("all-four", "gpu-xid", 4))

    def pending_reason() -> str:
        conditions = core.read_namespaced_pod("all-four", "default").status.conditions or []
        return next((c.message for c in conditions if c.reason == "Unschedulable"), "")

    assert "cannot allocate all claims" in wait_until(pending_reason, "the pod left pending")
    # the next gated run proves GPU 3 and only then lifts its rule; the pod then gets all four
    code, report, stderr = verify_json(cli, cluster, "--level", "cuda", "--gate")
    assert report["gate"]["devices_lifted"] == ["gpu-xid/gpu-3"], stderr
    assert [gpu["ok"] for gpu in report["nodes"][0]["cuda"]] == [True] * 4
    wait_until(
        lambda: core.read_namespaced_pod("all-four", "default").spec.node_name == "gpu-xid", "the pod bound"
    )


def _driver_tainted(cluster: Any) -> bool:
    from kubernetes.client import ResourceV1Api

    slices = ResourceV1Api(cluster.api_client()).list_resource_slice().items
    return any(device.taints for item in slices for device in item.spec.devices or [])
