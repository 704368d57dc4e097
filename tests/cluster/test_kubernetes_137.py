"""Kubernetes 1.37 on a DRA cluster (sim `kubernetesVersion: v1.37.0`): the DRA driver's DeviceClass
maps nvidia.com/gpu (DRAExtendedResource, GA), so a pod asking for `nvidia.com/gpu` on a node whose
GPUs go through DRA is served through a claim the scheduler creates; devices carry taints from
ResourceSlices and DeviceTaintRules (DRADeviceTaints, GA). verify, status and taint read it so."""

from __future__ import annotations

import json
from typing import Any

from tests.polling import wait_until

EXTENDED_CLAIM = "resource.kubernetes.io/extended-resource-claim"


def scenario_137(*nodes: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "kubernetesVersion": "v1.37.0",
        "podStartSeconds": 0.05,
        "gpuAllocation": "dra",
        "nodes": list(nodes) or [{"name": "gpu-{i}", "count": 2, "gpus": 4}],
        **top,
    }


def published(cluster: Any) -> dict[str, int]:
    from kubernetes.client import ResourceV1Api

    slices = ResourceV1Api(cluster.api_client()).list_resource_slice().items
    return {item.spec.node_name: len(item.spec.devices or []) for item in slices}


def gpu_pod(name: str, node: str, gpus: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": None,
            "nodeSelector": {"kubernetes.io/hostname": node},
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "cuda",
                    "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                    "command": ["nvidia-smi", "-L"],
                    "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
                }
            ],
        },
    }


def test_a_pod_asking_for_nvidia_gpu_is_served_through_a_claim_the_scheduler_creates(sim: Any) -> None:
    from kubernetes.client import CoreV1Api, ResourceV1Api

    cluster = sim(scenario_137({"name": "gpu-0", "gpus": 4}))
    wait_until(lambda: published(cluster) == {"gpu-0": 4}, "GPUs published")
    api = cluster.api_client()
    core, resource = CoreV1Api(api), ResourceV1Api(api)
    node = core.read_node("gpu-0")
    assert "nvidia.com/gpu" not in (node.status.capacity or {})
    assert resource.read_device_class("gpu.nvidia.com").spec.extended_resource_name == "nvidia.com/gpu"
    core.create_namespaced_pod("default", gpu_pod("two", "gpu-0", 2))

    def bound() -> Any:
        pod = core.read_namespaced_pod("two", "default")
        return pod if pod.status.extended_resource_claim_status else None

    pod = wait_until(bound, "the pod bound with its extended resource claim")
    status = pod.status.extended_resource_claim_status
    assert [(m.container_name, m.resource_name, m.request_name) for m in status.request_mappings] == [
        ("cuda", "nvidia.com/gpu", "container-0-request-0")
    ]
    claim = resource.read_namespaced_resource_claim(status.resource_claim_name, "default")
    assert claim.metadata.annotations[EXTENDED_CLAIM] == "true"
    assert claim.metadata.owner_references[0].name == "two"
    assert claim.spec.devices.requests[0].exactly.device_class_name == "gpu.nvidia.com"
    assert len(claim.status.allocation.devices.results) == 2
    wait_until(lambda: core.read_namespaced_pod("two", "default").status.phase == "Succeeded", "pod ran")
    log = core.read_namespaced_pod_log("two", "default")
    assert log.count("GPU ") == 2, log


def verify_json(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", *args])
    assert "Traceback" not in result.stderr
    return result.exit_code, json.loads(result.stdout)


def by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {node["name"]: node for node in report["nodes"]}


def checks_of(node: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["id"]: check for check in node["checks"]}


def test_verify_passes_without_gpu_capacity_and_proves_a_pod_asking_for_nvidia_gpu(
    sim: Any, cli: Any
) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(scenario_137())
    wait_until(lambda: published(cluster) == {"gpu-0": 4, "gpu-1": 4}, "GPUs published")
    for node in CoreV1Api(cluster.api_client()).list_node().items:
        assert "nvidia.com/gpu" not in (node.status.capacity or {})
    code, report = verify_json(cli, cluster, "--expect-gpus", "4")
    assert code == 0, report
    for node in report["nodes"]:
        assert node["gpu_allocation"] == "dra"
        assert (node["gpus"]["capacity"], node["gpus"]["allocatable"], node["gpus"]["seen"]) == (4, 4, 4)
        assert node["unhealthy_gpus"] == []
        checks = checks_of(node)
        assert checks["gpu.capacity"]["status"] == "pass"
        served = checks["dra.extended-resource"]
        assert served["status"] == "pass"
        assert "nvidia.com/gpu: 4 served through DRA's extended-resource mapping" in served["message"]
        assert "served through DRA's extended-resource mapping" in checks["dra.claim"]["message"]
        assert checks["dra.devices"]["status"] == "pass"
        assert "dra.device-plugin-beside" not in checks
    cluster_checks = {check["id"]: check for check in report["cluster_checks"]}
    assert "extended resource nvidia.com/gpu" in cluster_checks["dra.device-class"]["message"]
    core = CoreV1Api(cluster.api_client())
    wait_until(lambda: not cluster.verification_pods(), "verification pods gone")
    claims = cluster.api_client()
    from kubernetes.client import ResourceV1Api

    assert ResourceV1Api(claims).list_resource_claim_for_all_namespaces().items == []
    assert core.list_namespaced_pod("gpuctl-system").items == []


def test_before_137_the_same_cluster_is_proven_through_a_claim_template(sim: Any, cli: Any) -> None:
    cluster = sim(scenario_137(kubernetesVersion="v1.36.2"))
    wait_until(lambda: published(cluster) == {"gpu-0": 4, "gpu-1": 4}, "GPUs published")
    code, report = verify_json(cli, cluster, "--expect-gpus", "4")
    assert code == 0, report
    for node in report["nodes"]:
        checks = checks_of(node)
        assert "dra.extended-resource" not in checks
        assert "extended-resource mapping" not in checks["dra.claim"]["message"]


def _taint_rule(name: str, device: str, pool: str, effect: str = "NoSchedule") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": {
            "deviceSelector": {"driver": "gpu.nvidia.com", "pool": pool, "device": device},
            "taint": {"key": "example.com/maintenance", "value": "fan", "effect": effect},
        },
    }


def test_device_taints_are_counted_as_unhealthy_gpus_with_their_reason(sim: Any, cli: Any) -> None:
    from kubernetes.client import ResourceV1Api

    cluster = sim(
        scenario_137({"name": "gpu-0", "gpus": 4, "unhealthyGpus": 1}, {"name": "gpu-1", "gpus": 4})
    )
    wait_until(lambda: published(cluster) == {"gpu-0": 4, "gpu-1": 4}, "GPUs published")
    ResourceV1Api(cluster.api_client()).create_device_taint_rule(_taint_rule("gpu-1-fan", "gpu-2", "gpu-1"))
    code, report = verify_json(cli, cluster)
    assert code == 1
    nodes = by_name(report)
    assert nodes["gpu-0"]["unhealthy_gpus"] == [
        {"device": "gpu-3", "reason": "gpu.nvidia.com/xid=79:NoSchedule"}
    ]
    assert nodes["gpu-1"]["unhealthy_gpus"] == [
        {"device": "gpu-2", "reason": "example.com/maintenance=fan:NoSchedule (DeviceTaintRule gpu-1-fan)"}
    ]
    sick = checks_of(nodes["gpu-1"])
    assert sick["gpu.allocatable"]["status"] == "fail"
    assert (
        "gpu-2 example.com/maintenance=fan:NoSchedule (DeviceTaintRule gpu-1-fan)"
        in sick["gpu.allocatable"]["message"]
    )
    assert "devicetaintrules" in sick["gpu.allocatable"]["hint"]
    # the tainted device is not allocated: the pod asked for the three untainted GPUs and got them
    assert nodes["gpu-1"]["gpus"]["allocatable"] == 3
    assert sick["dra.extended-resource"]["status"] == "pass"
    assert "nvidia.com/gpu: 3" in sick["dra.extended-resource"]["message"]
    assert sick["nvidia-smi.gpus"]["status"] == "pass"
    status = cli(["status", "--kubeconfig", str(cluster.kubeconfig), "-o", "json"])
    assert status.exit_code == 0, status.stderr
    rows = {node["name"]: node for node in json.loads(status.stdout)["nodes"]}
    assert rows["gpu-1"]["unhealthy_gpus"] == nodes["gpu-1"]["unhealthy_gpus"]
    assert (rows["gpu-1"]["dra"]["claimable"], rows["gpu-1"]["dra"]["tainted"]) == (3, 1)
    assert rows["gpu-0"]["unhealthy_gpus"][0]["device"] == "gpu-3"


def test_a_device_taint_rule_keeps_the_device_from_a_pod_asking_for_nvidia_gpu(sim: Any) -> None:
    from kubernetes.client import CoreV1Api, ResourceV1Api

    cluster = sim(scenario_137({"name": "gpu-0", "gpus": 2}))
    wait_until(lambda: published(cluster) == {"gpu-0": 2}, "GPUs published")
    api = cluster.api_client()
    ResourceV1Api(api).create_device_taint_rule(_taint_rule("gpu-0-fan", "gpu-0", "gpu-0"))
    CoreV1Api(api).create_namespaced_pod("default", gpu_pod("both", "gpu-0", 2))

    def unschedulable() -> str:
        conditions = CoreV1Api(api).read_namespaced_pod("both", "default").status.conditions or []
        return next((c.message for c in conditions if c.reason == "Unschedulable"), "")

    assert "cannot allocate all claims" in wait_until(unschedulable, "the pod left pending")


def test_a_device_plugin_beside_dra_is_named(sim: Any, cli: Any) -> None:
    cluster = sim(scenario_137({"name": "gpu-0", "gpus": 4}, devicePlugin="installed"))

    def advertised() -> bool:
        from kubernetes.client import CoreV1Api

        node = CoreV1Api(cluster.api_client()).read_node("gpu-0")
        return (
            published(cluster) == {"gpu-0": 4} and (node.status.capacity or {}).get("nvidia.com/gpu") == "4"
        )

    wait_until(advertised, "GPUs published and advertised by the device plugin")
    code, report = verify_json(cli, cluster, "--expect-gpus", "4")
    checks = checks_of(by_name(report)["gpu-0"])
    beside = checks["dra.device-plugin-beside"]
    assert beside["status"] == "warn"
    assert beside["message"].startswith("gpu-0 still runs the NVIDIA device plugin (kube-system/")
    cluster_checks = {check["id"]: check for check in report["cluster_checks"]}
    assert "on gpu-0" in cluster_checks["dra.device-plugin-beside"]["message"]
    assert "dra.extended-resource" not in checks  # the device plugin serves nvidia.com/gpu there
    assert code == 0, report
