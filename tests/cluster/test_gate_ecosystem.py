"""`verify --gate` as the ecosystem reads it, through the CLI against the sim: the GPUProven node
condition (server-side apply to nodes/status under its own field manager), a gate taint key of
the user's choice (a Node Readiness Controller `readiness.k8s.io/` key), `--gate-mode condition`,
and on DRA nodes (Kubernetes 1.37) a DeviceTaintRule per GPU whose failure is confined to it,
lifted only once the GPU passes again."""

from __future__ import annotations

import json
import time
from typing import Any

CONDITION = "GPUProven"


def verify_json(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any], str]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", *args])
    assert "Traceback" not in result.stderr, result.stderr
    return result.exit_code, json.loads(result.stdout), result.stderr


def node_json(cluster: Any, name: str) -> dict[str, Any]:
    from kubernetes.client import CoreV1Api

    api = cluster.api_client()
    return dict(api.sanitize_for_serialization(CoreV1Api(api).read_node(name)))


def condition_of(cluster: Any, name: str, kind: str = CONDITION) -> dict[str, Any] | None:
    conditions = node_json(cluster, name)["status"].get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


def taint_keys(cluster: Any, name: str) -> dict[str, str]:
    return {t["key"]: t.get("value", "") for t in node_json(cluster, name)["spec"].get("taints") or []}


def managers(cluster: Any, name: str) -> dict[str, str]:
    """Field manager → subresource of the node's managedFields."""
    fields = node_json(cluster, name)["metadata"].get("managedFields") or []
    return {f["manager"]: f.get("subresource", "") for f in fields}


def device_plugin_scenario() -> dict[str, Any]:
    return {
        "podStartSeconds": 0.05,
        "devicePlugin": "installed",
        "nodes": [
            {"name": "gpu-ok", "gpus": 8},
            {"name": "gpu-ecc", "gpus": 8, "eccErrors": 1},
        ],
    }


def test_gate_taint_key_and_condition_on_a_device_plugin_cluster(sim: Any, cli: Any) -> None:
    cluster = sim(device_plugin_scenario())
    key = "readiness.k8s.io/gpu-proven"
    code, report, _ = verify_json(cli, cluster, "--level", "cuda", "--gate", "--gate-taint", key)
    assert code == 1, report
    assert taint_keys(cluster, "gpu-ecc").get(key) == "cuda"
    assert "gpuctl.io/unproven" not in taint_keys(cluster, "gpu-ecc")
    assert key not in taint_keys(cluster, "gpu-ok")
    assert report["gate"]["taint_key"] == key
    assert report["gate"]["gated"] == ["gpu-ecc"]
    healthy = condition_of(cluster, "gpu-ok")
    sick = condition_of(cluster, "gpu-ecc")
    assert healthy is not None
    assert sick is not None
    assert (healthy["status"], healthy["reason"]) == ("True", "cuda")
    assert (sick["status"], sick["reason"]) == ("False", "cuda.workload")
    assert sick["message"].startswith("cuda.workload: vectorAdd failed on 1 of 8 GPU(s) (GPU 0)")
    # its own field manager, through the status subresource; the kubelet's Ready stays
    assert managers(cluster, "gpu-ecc").get("gpuctl-gpu-proven") == "status"
    assert condition_of(cluster, "gpu-ecc", "Ready") is not None
    # the next run tolerates the key it gated with, proves the node again and keeps it gated
    code, report, _ = verify_json(cli, cluster, "--level", "cuda", "--gate", "--gate-taint", key)
    assert code == 1, report
    assert report["gate"]["unchanged"] == ["gpu-ecc", "gpu-ok"]
    checks = {c["id"]: c for c in next(n for n in report["nodes"] if n["name"] == "gpu-ecc")["checks"]}
    assert checks["cuda.workload"]["status"] == "fail"
    assert checks["taint.toleration"]["status"] in ("pass", "warn")


def test_condition_mode_writes_only_the_condition(sim: Any, cli: Any) -> None:
    cluster = sim(device_plugin_scenario())
    code, report, _ = verify_json(
        cli, cluster, "--level", "cuda", "--gate", "--gate-mode", "condition", "--gate-condition", "GPUProven"
    )
    assert code == 1, report
    assert taint_keys(cluster, "gpu-ecc") == {}
    assert report["gate"]["mode"] == "condition"
    assert report["gate"]["writes"] == 0
    sick = condition_of(cluster, "gpu-ecc")
    assert sick is not None
    assert sick["status"] == "False"
    first_transition = sick["lastTransitionTime"]
    time.sleep(1.1)  # the timestamps have a resolution of one second
    code, _, _ = verify_json(cli, cluster, "--level", "cuda", "--gate", "--gate-mode", "condition")
    again = condition_of(cluster, "gpu-ecc")
    assert again is not None
    assert again["lastTransitionTime"] == first_transition


def test_condition_mode_proves_a_node_the_controller_keeps_out(sim: Any, cli: Any) -> None:
    """The Node Readiness Controller taints a new node until GPUProven is True: gpuctl's device
    plugin tolerates that taint (the node's GPUs are served) and so do verify's pods (--gate-taint
    names it), so the node is proven, its condition turns True, and the controller, not gpuctl,
    lifts the taint."""
    key = "readiness.k8s.io/gpu-proven"
    taint = {"key": key, "effect": "NoSchedule"}
    cluster = sim({"podStartSeconds": 0.05, "nodes": [{"name": "gpu-new", "gpus": 8, "taints": [taint]}]})
    installed = cli(
        ["bootstrap", "--kubeconfig", str(cluster.kubeconfig), "--phase", "cluster", "--timeout", "30"]
    )
    assert installed.exit_code == 0, installed.output
    args = ("--level", "cuda", "--gate", "--gate-mode", "condition", "--gate-taint", key)
    code, report, _ = verify_json(cli, cluster, *args)
    assert code == 0, report
    proven = condition_of(cluster, "gpu-new")
    assert proven is not None
    assert (proven["status"], proven["reason"]) == ("True", "cuda")
    assert key in taint_keys(cluster, "gpu-new")  # the controller's to lift
    assert report["gate"]["writes"] == 0


def test_gate_flags_are_refused_without_gate_or_with_bad_values(sim: Any, cli: Any) -> None:
    cluster = sim(device_plugin_scenario())
    kubeconfig = str(cluster.kubeconfig)
    result = cli(["verify", "--kubeconfig", kubeconfig, "--gate-taint", "readiness.k8s.io/gpu"])
    assert result.exit_code == 2
    assert "--gate-taint" in result.stderr
    assert "--gate" in result.stderr
    result = cli(["verify", "--kubeconfig", kubeconfig, "--gate", "--gate-mode", "both"])
    assert result.exit_code == 2
    assert "--gate-mode 'both'" in result.stderr
    assert "Traceback" not in result.stderr
    result = cli(["verify", "--kubeconfig", kubeconfig, "--gate", "--gate-taint", "bad key!"])
    assert result.exit_code == 2
    assert "--gate-taint 'bad key!'" in result.stderr


def test_a_busy_node_keeps_its_condition_with_a_fresh_heartbeat(sim: Any, cli: Any) -> None:
    """A node whose workloads hold every GPU is not judged: its GPUProven status stays what the
    last proof made it, with the reason NotJudgedBusy and a newer lastHeartbeatTime."""
    from tests.cluster.test_verify_busy import SCENARIO, _hold

    cluster = sim(SCENARIO)
    code, _, stderr = verify_json(cli, cluster, "--timeout", "30", "--gate")
    assert code == 0, stderr
    proven = condition_of(cluster, "gpu-1")
    assert proven is not None
    assert (proven["status"], proven["reason"]) == ("True", "smi")
    _hold(cluster, "big-job", "gpu-1", 4)
    time.sleep(1.1)  # the timestamps have a resolution of one second
    code, report, stderr = verify_json(cli, cluster, "--timeout", "30", "--gate")
    assert code == 0, stderr
    kept = condition_of(cluster, "gpu-1")
    assert kept is not None
    assert (kept["status"], kept["reason"]) == ("True", "NotJudgedBusy")
    assert kept["lastTransitionTime"] == proven["lastTransitionTime"]
    assert kept["lastHeartbeatTime"] > proven["lastHeartbeatTime"]
    assert "not judged: its workloads hold every GPU" in kept["message"]
    assert ("gpu-1", "True", "NotJudgedBusy") in [
        (c["node"], c["status"], c["reason"]) for c in report["gate"]["condition"]["nodes"]
    ]
