"""`gpuctl verify` on a cluster whose GPUs go through Dynamic Resource Allocation (sim
`gpuAllocation: dra`): every node proven through a claim, each injected failure diagnosed on its
node, and no claim, claim template or pod left behind on any exit path."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.interrupt import interrupt_when
from tests.kubectl import KUBECTL, needs_kubectl
from tests.polling import wait_until

RUN_LABELS = "app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"


def dra_scenario(*nodes: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "kubernetesVersion": "v1.34.1",
        "podStartSeconds": 0.05,
        "gpuAllocation": "dra",
        "nodes": list(nodes) or [{"name": "gpu-{i}", "count": 2, "gpus": 4}],
        **top,
    }


def published(cluster: Any) -> dict[str, int]:
    """Node → GPUs in its ResourceSlices, read through the client's resource.k8s.io/v1 API."""
    from kubernetes.client import ResourceV1Api

    slices = ResourceV1Api(cluster.api_client()).list_resource_slice().items
    return {item.spec.node_name: len(item.spec.devices or []) for item in slices}


def leftovers(cluster: Any) -> list[str]:
    """Every verification pod, claim and claim template of any run, in any namespace."""
    from kubernetes.client import ResourceV1Api

    resource = ResourceV1Api(cluster.api_client())
    claims = resource.list_resource_claim_for_all_namespaces(label_selector=RUN_LABELS).items
    templates = resource.list_resource_claim_template_for_all_namespaces(label_selector=RUN_LABELS).items
    every_claim = resource.list_resource_claim_for_all_namespaces().items
    names = [f"pod/{pod.metadata.name}" for pod in cluster.verification_pods()]
    names += [f"claim/{item.metadata.name}" for item in [*claims, *every_claim]]
    return names + [f"template/{item.metadata.name}" for item in templates]


def verify_json(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", *args])
    assert "Traceback" not in result.stderr
    return result.exit_code, json.loads(result.stdout)


def checks_of(report: dict[str, Any], node: str) -> dict[str, dict[str, Any]]:
    found = next(entry for entry in report["nodes"] if entry["name"] == node)
    return {check["id"]: check for check in found["checks"]}


def test_healthy_dra_cluster_passes_with_every_gpu_seen_through_a_claim(sim: Any, cli: Any) -> None:
    cluster = sim(dra_scenario())
    wait_until(lambda: published(cluster) == {"gpu-0": 4, "gpu-1": 4}, "GPUs published")
    code, report = verify_json(cli, cluster, "--expect-gpus", "4")
    assert code == 0, report
    assert [node["gpu_allocation"] for node in report["nodes"]] == ["dra", "dra"]
    for node in report["nodes"]:
        assert node["gpus"] == {
            "expected": 4,
            "capacity": 4,
            "allocatable": 4,
            "seen": 4,
            "in_use": 0,
            "physical": 4,
            "mig_devices": 0,
        }
        checks = checks_of(report, node["name"])
        assert checks["dra.claim"]["status"] == "pass"
        assert "allocated 4 device(s)" in checks["dra.claim"]["message"]
        assert checks["dra.devices"]["status"] == "pass"
        assert checks["device-plugin.pod"]["status"] == "skip"
    cluster_checks = {check["id"]: check["status"] for check in report["cluster_checks"]}
    assert cluster_checks["dra.device-class"] == "pass"
    assert leftovers(cluster) == []


def test_each_injected_failure_is_diagnosed_on_its_node(sim: Any, cli: Any) -> None:
    cluster = sim(
        dra_scenario(
            {"name": "ok-0", "gpus": 4},
            {"name": "nodriver", "gpus": 4, "host": {"driver": "missing"}},
            {"name": "mismatch", "gpus": 4, "host": {"driver": "mismatch"}},
            {"name": "notoolkit", "gpus": 4, "host": {"toolkit": "missing"}},
            {"name": "sick", "gpus": 4, "unhealthyGpus": 1},
        )
    )
    wait_until(lambda: len(published(cluster)) == 4, "GPUs published by four plugins")
    code, report = verify_json(cli, cluster, "--expect-gpus", "4")
    assert code == 1
    verdict = {node["name"]: node["ok"] for node in report["nodes"]}
    assert verdict == {"ok-0": True, "nodriver": False, "mismatch": False, "notoolkit": False, "sick": False}
    nodriver = checks_of(report, "nodriver")
    assert nodriver["gpu.capacity"]["diagnosis"] == "dra.driver-libraries-missing"
    assert nodriver["dra.plugin-log"]["diagnosis"] == "dra.driver-libraries-missing"
    assert nodriver["dra.plugin-pod"]["status"] == "fail"
    assert checks_of(report, "mismatch")["nvidia-smi.run"]["diagnosis"] == "runtime.driver-mismatch"
    assert checks_of(report, "notoolkit")["nvidia-smi.run"]["status"] == "fail"
    sick = checks_of(report, "sick")
    assert sick["gpu.allocatable"]["diagnosis"] == "dra.device-unhealthy"
    assert "gpu-3" in sick["gpu.allocatable"]["message"]
    assert sick["dra.claim"]["status"] == "pass"  # the claim gets the three healthy GPUs
    assert sick["nvidia-smi.gpus"]["status"] == "pass"
    assert leftovers(cluster) == []


def test_a_node_whose_gpus_a_claim_holds_is_busy_not_failed(sim: Any, cli: Any) -> None:
    """The verification claim asks for all of a node's GPUs: with one held by a workload's claim,
    it could never be allocated. verify says the node is busy (not proven by this run) instead of
    leaving a pod pending until --timeout and failing a healthy node."""
    cluster = sim(dra_scenario({"name": "gpu-0", "gpus": 2}))
    wait_until(lambda: published(cluster) == {"gpu-0": 2}, "GPUs published")
    _hold_one_gpu(cluster)
    code, report = verify_json(cli, cluster, "--timeout", "30")
    assert code == 0, report
    (node,) = report["nodes"]
    assert (node["ok"], node["proven"], node["busy"], node["gpus"]["in_use"]) == (True, False, True, 1)
    checks = checks_of(report, "gpu-0")
    assert checks["gpu.in-use"]["status"] == "warn"
    assert "default/training" in checks["gpu.in-use"]["message"]
    assert checks["pod.scheduled"]["status"] == "skip"
    assert report["pods_created"] == 0
    assert [name for name in leftovers(cluster) if "gpuctl" in name] == []


def _hold_one_gpu(cluster: Any, node: str = "") -> None:
    """Another workload's claim holds one GPU (on `node`): a claim of count 1, a pod that runs on."""
    from kubernetes.client import CoreV1Api, ResourceV1Api

    api = cluster.api_client()
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "training"},
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
        },
    }
    ResourceV1Api(api).create_namespaced_resource_claim("default", claim)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "training"},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": node} if node else None,
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "training"}],
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "command": ["sleep", "infinity"],
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
        },
    }
    CoreV1Api(api).create_namespaced_pod("default", pod)

    def held() -> bool:
        status = ResourceV1Api(api).read_namespaced_resource_claim("training", "default").status
        return bool(status and status.allocation)

    wait_until(held, "the other workload's claim allocated")


def test_claims_and_pods_are_deleted_after_a_timeout(sim: Any, cli: Any) -> None:
    cluster = sim(dra_scenario(podStartSeconds=0, podRunSeconds=3600))
    wait_until(lambda: len(published(cluster)) == 2, "GPUs published")
    code, report = verify_json(cli, cluster, "--timeout", "1")
    assert code == 1
    assert "timeout" in checks_of(report, "gpu-0")["nvidia-smi.run"]["message"]
    assert leftovers(cluster) == []


def test_ctrl_c_deletes_claims_templates_and_pods(sim: Any) -> None:
    cluster = sim(dra_scenario(podRunSeconds=120))
    wait_until(lambda: len(published(cluster)) == 2, "GPUs published")

    def claims_exist() -> bool:
        from kubernetes.client import ResourceV1Api

        claims = ResourceV1Api(cluster.api_client()).list_resource_claim_for_all_namespaces().items
        return len(claims) == 2 and len(cluster.verification_pods()) == 2

    exit_code, stderr = interrupt_when(
        ["verify", "--kubeconfig", str(cluster.kubeconfig), "--timeout", "300"], claims_exist, [signal.SIGINT]
    )
    assert exit_code == 130, stderr
    assert "Traceback" not in stderr
    assert leftovers(cluster) == []


def test_no_driver_installed_and_a_stopped_plugin_are_named(sim: Any, cli: Any) -> None:
    # Nothing of either stack installed: gpuctl cannot tell which one is meant, and names both.
    absent = sim(dra_scenario(draDriver="absent"), name="absent")
    code, report = verify_json(cli, absent)
    assert code == 1
    cluster_checks = {check["id"]: check for check in report["cluster_checks"]}
    assert "DRA driver" in cluster_checks["cluster.device-plugin"]["hint"]

    # The chart's DeviceClass deleted while its plugin still publishes GPUs.
    no_class = sim(dra_scenario(), name="no-class")
    wait_until(lambda: len(published(no_class)) == 2, "GPUs published")
    from kubernetes.client import ResourceV1Api

    ResourceV1Api(no_class.api_client()).delete_device_class("gpu.nvidia.com")
    code, report = verify_json(cli, no_class)
    assert code == 1
    cluster_checks = {check["id"]: check for check in report["cluster_checks"]}
    assert cluster_checks["dra.device-class"]["status"] == "fail"
    assert checks_of(report, "gpu-0")["dra.claim"]["status"] == "fail"
    assert leftovers(no_class) == []

    stopped = sim(dra_scenario(), name="stopped")
    wait_until(lambda: len(published(stopped)) == 2, "GPUs published")
    from kubernetes.client import AppsV1Api

    AppsV1Api(stopped.api_client()).delete_namespaced_daemon_set(
        "dra-driver-nvidia-gpu-kubelet-plugin", "dra-driver-nvidia-gpu"
    )
    wait_until(lambda: published(stopped) == {}, "slices withdrawn with the plugin")
    code, report = verify_json(cli, stopped)
    assert code == 1
    checks = checks_of(report, "gpu-0")
    assert checks["gpu.capacity"]["status"] == "fail"
    assert "publishes no GPU" in checks["gpu.capacity"]["message"]
    assert checks["dra.plugin-pod"]["status"] == "fail"


def test_fewer_devices_than_expected_fail_the_count(sim: Any, cli: Any) -> None:
    cluster = sim(dra_scenario({"name": "gpu-0", "gpus": 6}))
    wait_until(lambda: published(cluster) == {"gpu-0": 6}, "GPUs published")
    code, report = verify_json(cli, cluster, "--expect-gpus", "8")
    assert code == 1
    capacity = checks_of(report, "gpu-0")["gpu.capacity"]
    assert capacity["status"] == "fail"
    assert "6 GPU(s) published in ResourceSlices, expected 8" in capacity["message"]


def test_a_device_plugin_node_in_a_dra_cluster_is_verified_the_device_plugin_way(sim: Any, cli: Any) -> None:
    cluster = sim(
        dra_scenario(
            {"name": "dra-0", "gpus": 2},
            {"name": "classic-0", "gpus": 2, "gpuAllocation": "device-plugin"},
            devicePlugin="installed",
        )
    )
    wait_until(lambda: published(cluster) == {"dra-0": 2}, "GPUs published")
    wait_until(lambda: cluster.allocatable_gpus().get("classic-0") == 2, "GPUs advertised")
    code, report = verify_json(cli, cluster)
    assert code == 0, report
    allocation = {node["name"]: node["gpu_allocation"] for node in report["nodes"]}
    assert allocation == {"classic-0": "device-plugin", "dra-0": "dra"}
    assert checks_of(report, "classic-0")["device-plugin.pod"]["status"] == "pass"
    assert leftovers(cluster) == []


@needs_kubectl
def test_kept_pods_and_their_claim_template_go_with_the_printed_command(
    sim: Any, cli: Any, tmp_path: Path
) -> None:
    """--keep-pods keeps the run's claim template too; the command verify prints removes it with
    the pods (their generated claims go with them), run here with a real kubectl."""
    cluster = sim(dra_scenario())
    wait_until(lambda: len(published(cluster)) == 2, "GPUs published")
    code, report = verify_json(cli, cluster, "--keep-pods")
    assert code == 0, report
    command = report["cleanup_command"]
    assert " delete pods,resourceclaimtemplates -l " in command
    assert any(name.startswith("template/") for name in leftovers(cluster))
    subprocess.run(
        [KUBECTL, "--kubeconfig", str(cluster.kubeconfig), *shlex.split(command)[1:], "--wait=false"],
        check=True,
        capture_output=True,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    wait_until(lambda: leftovers(cluster) == [], "nothing of the run left")
