"""`gpuctl verify` against the simulated cluster: one test per failure mode, the JSON contract, JUnit."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from gpuctl.core import status
from tests.polling import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GPU = {"name": "gpu-{i}", "count": 2, "gpus": 8}
CPU = {"name": "cpu-{i}", "count": 1}


def scenario(*nodes: dict[str, Any], plugin: str = "installed", **top: Any) -> dict[str, Any]:
    return {"podStartSeconds": 0.05, "devicePlugin": plugin, "nodes": [CPU, *nodes], **top}


def verify_json(cli: Any, cluster: Any, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "60", *args])
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, json.loads(result.stdout)


def node(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(item for item in data["nodes"] if item["name"] == name)


def check(item: dict[str, Any], check_id: str) -> dict[str, Any]:
    return next(c for c in item["checks"] if c["id"] == check_id)


def wait_for_gpus(cluster: Any, name: str, want: int) -> None:
    """Device plugin pods need podStartSeconds to advertise; wait until `name` advertises `want`."""
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())

    def advertised() -> bool:
        allocatable = core.read_node(name).status.allocatable or {}
        return int(allocatable.get("nvidia.com/gpu", "0")) == want

    wait_until(advertised, f"{name} to advertise {want} GPUs")


def wait_for_plugin_pod(cluster: Any, name: str) -> None:
    from kubernetes.client import CoreV1Api

    core = CoreV1Api(cluster.api_client())

    def plugin_running() -> bool:
        pods = core.list_namespaced_pod("kube-system", field_selector=f"spec.nodeName={name}").items
        return any(pod.status.phase == "Running" for pod in pods)

    wait_until(plugin_running, f"a device plugin pod running on {name}")


def leftover_pods(cluster: Any) -> list[str]:
    from kubernetes.client import CoreV1Api

    pods = CoreV1Api(cluster.api_client()).list_pod_for_all_namespaces(
        label_selector="app.kubernetes.io/managed-by=gpuctl,app.kubernetes.io/component=verify"
    )
    return [pod.metadata.name for pod in pods.items]


def test_healthy_cluster_passes(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU))
    wait_for_gpus(cluster, "gpu-1", 8)
    code, data = verify_json(cli, cluster, "--expect-gpus", "8", "--expect-nodes", "gpu-*")
    assert code == 0, data
    assert data["ok"] is True
    assert [n["name"] for n in data["nodes"]] == ["gpu-0", "gpu-1"]
    for item in data["nodes"]:
        assert item["gpus"] == {
            "expected": 8, "capacity": 8, "allocatable": 8, "seen": 8, "in_use": 0, "physical": 8,
            "mig_devices": 0,
        }  # fmt: skip
        assert check(item, "nvidia-smi.product")["message"] == "NVIDIA H100 80GB HBM3"
        assert check(item, "nvidia-smi.driver")["status"] == "pass"
        assert all(c["status"] in ("pass", "skip") for c in item["checks"]), item
    assert leftover_pods(cluster) == []


def test_table_output_of_a_healthy_cluster(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU))
    wait_for_gpus(cluster, "gpu-1", 8)
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig)])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "gpu-0" in result.stdout
    assert "all GPU nodes verified" in result.stdout
    assert "\x1b[" not in result.stdout


@pytest.mark.parametrize(
    ("host", "diagnoses"),
    [
        (
            {"driver": "missing"},
            {"plugin.driver-not-loaded", "plugin.nvml-library-missing", "plugin.no-devices"},
        ),
        ({"toolkit": "missing"}, {"plugin.nvml-library-missing", "plugin.incompatible-strategy"}),
    ],
)
def test_host_layer_missing_means_no_gpus_advertised(
    sim: Any, cli: Any, host: dict[str, str], diagnoses: set[str]
) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8, "host": host}))
    wait_for_plugin_pod(cluster, "gpu-0")
    code, data = verify_json(cli, cluster)
    assert code == 1
    item = node(data, "gpu-0")
    assert item["ok"] is False
    assert check(item, "gpu.capacity")["status"] == "fail"
    assert "advertises no nvidia.com/gpu" in check(item, "gpu.capacity")["message"]
    log_check = check(item, "device-plugin.log")
    assert log_check["status"] == "fail"
    assert log_check["diagnosis"] in diagnoses
    assert "nvidia-ctk" in log_check["hint"] or "driver" in log_check["hint"]
    assert check(item, "nvidia-smi.run")["status"] == "skip"


def test_driver_mismatch_is_diagnosed_from_the_start_hook(sim: Any, cli: Any) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8, "host": {"driver": "mismatch"}}))
    wait_for_gpus(cluster, "gpu-0", 8)
    code, data = verify_json(cli, cluster)
    assert code == 1
    run = check(node(data, "gpu-0"), "nvidia-smi.run")
    assert run["status"] == "fail"
    assert run["diagnosis"] == "runtime.driver-mismatch"
    assert "reboot" in run["hint"]
    assert leftover_pods(cluster) == []


def test_unhealthy_gpus_fail_allocatable(sim: Any, cli: Any) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8, "unhealthyGpus": 2}))
    wait_for_gpus(cluster, "gpu-0", 6)
    code, data = verify_json(cli, cluster)
    assert code == 1
    item = node(data, "gpu-0")
    assert item["gpus"]["capacity"] == 8
    assert item["gpus"]["allocatable"] == 6
    assert item["gpus"]["seen"] == 6
    allocatable = check(item, "gpu.allocatable")
    assert allocatable["status"] == "fail"
    assert "2 GPU(s) unhealthy" in allocatable["message"]
    assert check(item, "device-plugin.log")["diagnosis"] == "xid.79"  # the Xid the plugin names


def test_not_ready_node_fails_without_a_pod(sim: Any, cli: Any) -> None:
    cluster = sim(
        scenario({"name": "gpu-0", "gpus": 8, "ready": False, "labels": {"nvidia.com/gpu.present": "true"}})
    )
    code, data = verify_json(cli, cluster)
    assert code == 1
    item = node(data, "gpu-0")
    ready = check(item, "node.ready")
    assert ready["status"] == "fail"
    assert "NotReady" in ready["message"]
    assert check(item, "pod.scheduled") == {
        "id": "pod.scheduled",
        "status": "skip",
        "message": "node not Ready",
        "hint": "",
    }


def test_no_device_plugin(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU, plugin="absent"))
    code, data = verify_json(cli, cluster)
    assert code == 1
    cluster_checks = {c["id"]: c for c in data["cluster_checks"]}
    assert cluster_checks["cluster.device-plugin"]["status"] == "fail"
    assert "gpuctl render" in cluster_checks["cluster.device-plugin"]["hint"]
    item = node(data, "gpu-0")
    assert check(item, "device-plugin.pod")["status"] == "fail"
    assert check(item, "gpu.capacity")["status"] == "fail"


def test_no_gpu_nodes_fails_unless_allowed(sim: Any, cli: Any) -> None:
    cluster = sim({"devicePlugin": "installed", "nodes": [{"name": "cpu-{i}", "count": 3}]})
    code, data = verify_json(cli, cluster)
    assert code == 1
    assert data["nodes"] == []
    assert data["cluster_checks"][0]["id"] == "cluster.gpu-nodes"
    assert data["cluster_checks"][0]["status"] == "fail"
    code, data = verify_json(cli, cluster, "--allow-empty")
    assert code == 0
    assert data["ok"] is True


def test_expected_node_missing_and_wrong_gpu_count(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU))
    wait_for_gpus(cluster, "gpu-1", 8)
    code, data = verify_json(cli, cluster, "--expect-gpus", "gpu-0=8,gpu-1=4,gpu-9=8")
    assert code == 1
    assert node(data, "gpu-0")["ok"] is True
    assert check(node(data, "gpu-1"), "gpu.capacity")["message"] == "capacity 8 nvidia.com/gpu, expected 4"
    assert check(node(data, "gpu-9"), "node.exists")["status"] == "fail"


def test_expected_cpu_node_advertising_nothing_fails(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU))
    code, data = verify_json(cli, cluster, "--expect-nodes", "cpu-0", "--no-pods")
    assert code == 1
    assert "expected to be a GPU node" in check(node(data, "cpu-0"), "gpu.capacity")["message"]


def test_untolerated_taint_is_diagnosed_and_toleration_fixes_it(sim: Any, cli: Any) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}))
    wait_for_gpus(cluster, "gpu-0", 8)
    taint = {"key": "dedicated", "value": "infra", "effect": "NoSchedule"}
    CoreV1Api(cluster.api_client()).patch_node("gpu-0", {"spec": {"taints": [taint]}})
    code, data = verify_json(cli, cluster)
    assert code == 1
    scheduled = check(node(data, "gpu-0"), "pod.scheduled")
    assert scheduled["diagnosis"] == "sched.untolerated-taint"
    assert "--toleration" in scheduled["hint"]
    assert check(node(data, "gpu-0"), "taint.toleration")["status"] == "fail"
    code, data = verify_json(cli, cluster, "--toleration", "dedicated=infra:NoSchedule")
    assert check(node(data, "gpu-0"), "pod.scheduled")["status"] == "pass"
    assert check(node(data, "gpu-0"), "nvidia-smi.gpus")["status"] == "pass"
    assert leftover_pods(cluster) == []


def test_gpu_taint_is_tolerated_by_the_verification_pod(sim: Any, cli: Any) -> None:
    taints = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    cluster = sim(scenario({"name": "gpu-0", "gpus": 4, "taints": taints}))
    wait_for_gpus(cluster, "gpu-0", 4)
    code, data = verify_json(cli, cluster)
    assert code == 0, data
    assert check(node(data, "gpu-0"), "taint.toleration")["status"] == "pass"


def test_gpus_held_by_another_pod_are_left_to_it(sim: Any, cli: Any) -> None:
    """The verification pod asks for the six GPUs the training pod leaves free: it does not wait
    for the training to end (or fail the node when it does not)."""
    from kubernetes.client import CoreV1Api

    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}))
    wait_for_gpus(cluster, "gpu-0", 8)
    holder = {
        "metadata": {"name": "training"},
        "spec": {
            "nodeSelector": {"kubernetes.io/hostname": "gpu-0"},
            "containers": [
                {
                    "name": "train",
                    "image": "busybox",
                    "command": ["sleep", "3600"],
                    "resources": {"limits": {"nvidia.com/gpu": "2"}},
                }
            ],
        },
    }
    CoreV1Api(cluster.api_client()).create_namespaced_pod("default", holder)
    wait_until(
        lambda: status.gpu_status(cluster.api_client()).nodes[0].gpu_in_use == 2, "the training pod bound"
    )
    code, data = verify_json(cli, cluster)
    assert code == 0, data
    found = node(data, "gpu-0")
    assert found["gpus"]["in_use"] == 2
    assert check(found, "nvidia-smi.gpus")["message"] == "6 GPU(s) seen = 6 requested"
    assert "2 GPU(s) held by 1 workload(s) (default/training)" in check(found, "gpu.in-use")["message"]


def test_image_pull_failure_fails_fast_with_diagnosis(sim: Any, cli: Any) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}))
    wait_for_gpus(cluster, "gpu-0", 8)
    image = "registry.example.com/does-not-exist:1.0"
    code, data = verify_json(cli, cluster, "--image", image, "--timeout", "600")
    assert code == 1
    pulled = check(node(data, "gpu-0"), "pod.image")
    assert pulled["status"] == "fail"
    # The timeout path says "still Pending after the timeout": this one stopped on the pull error.
    assert "timeout" not in pulled["message"]
    assert pulled["diagnosis"].startswith("image.")
    assert check(node(data, "gpu-0"), "nvidia-smi.run")["status"] == "skip"
    assert leftover_pods(cluster) == []


def test_nvidia_smi_showing_fewer_gpus_fails(sim: Any, cli: Any) -> None:
    from gpuctl.nvidia_smi import VERIFY_ARGS, fake_gpus, run_nvidia_smi

    stdout, _ = run_nvidia_smi(
        list(VERIFY_ARGS[1:]), fake_gpus("gpu-0", 7, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")
    )
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8, "nvidiaSmi": {"stdout": stdout, "exitCode": 0}}))
    wait_for_gpus(cluster, "gpu-0", 8)
    code, data = verify_json(cli, cluster)
    assert code == 1
    gpus = check(node(data, "gpu-0"), "nvidia-smi.gpus")
    assert gpus["status"] == "fail"
    assert gpus["message"] == "7 GPU(s) seen, 8 requested"
    assert node(data, "gpu-0")["gpus"]["seen"] == 7


def test_missing_runtime_class_fails_the_cluster_check(sim: Any, cli: Any) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}))
    wait_for_gpus(cluster, "gpu-0", 8)
    code, data = verify_json(cli, cluster, "--runtime-class", "nvidia-cdi", "--no-pods")
    assert code == 1
    runtime = next(c for c in data["cluster_checks"] if c["id"] == "cluster.runtimeclass")
    assert runtime["status"] == "fail"
    assert "nvidia-cdi" in runtime["message"]


def test_driver_drift_warns(sim: Any, cli: Any) -> None:
    cluster = sim(
        scenario({"name": "gpu-0", "gpus": 2}, {"name": "gpu-1", "gpus": 2, "driverVersion": "535.183.01"})
    )
    wait_for_gpus(cluster, "gpu-1", 2)
    code, data = verify_json(cli, cluster)
    assert code == 0, data
    drift = next(c for c in data["cluster_checks"] if c["id"] == "cluster.driver-drift")
    assert drift["status"] == "warn"
    assert "535.183.01" in drift["message"]


def test_json_contract_keys(sim: Any, cli: Any) -> None:
    cluster = sim(scenario({"name": "gpu-0", "gpus": 8}))
    wait_for_gpus(cluster, "gpu-0", 8)
    _, data = verify_json(cli, cluster)
    assert data["schema"] == "gpuctl.verify/v1"
    assert {"schema", "ok", "nodes", "cluster_checks"} <= set(data)
    item = data["nodes"][0]
    assert {"name", "ok", "gpus", "checks"} <= set(item)
    assert {"expected", "capacity", "allocatable", "seen"} <= set(item["gpus"])
    ids = [c["id"] for c in item["checks"]]
    assert ids == [
        "node.ready", "node.schedulable", "gpu.capacity", "gpu.allocatable", "device-plugin.pod",
        "device-plugin.log", "taint.toleration", "gpu.sharing", "pod.scheduled", "pod.image",
        "nvidia-smi.run", "nvidia-smi.gpus", "nvidia-smi.product", "nvidia-smi.memory", "nvidia-smi.driver",
    ]  # fmt: skip
    for c in [*item["checks"], *data["cluster_checks"]]:
        assert {"id", "status", "message", "hint"} <= set(c)


def test_junit_output_parses(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU, {"name": "bad-0", "gpus": 8, "host": {"driver": "mismatch"}}))
    wait_for_gpus(cluster, "bad-0", 8)
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "junit"])
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    cases = root.findall(".//testcase")
    assert len(cases) == 3 * 15 + 5
    failing = [(c.get("classname"), c.get("name")) for c in cases if c.find("failure") is not None]
    assert failing == [("node.bad-0", "nvidia-smi.run")]
    # Checks read from a verification pod take the time that pod took; the others took none.
    for suite in root.findall("testsuite")[1:]:
        times = {case.get("name"): float(case.get("time") or "nan") for case in suite.findall("testcase")}
        assert times["pod.scheduled"] > 0
        assert times["nvidia-smi.run"] == times["pod.scheduled"] == float(suite.get("time") or "nan")
        assert times["node.ready"] == 0
    assert float(root.get("time") or "nan") >= max(float(s.get("time") or 0) for s in root)


def test_a_plugin_still_starting_is_waited_for_not_called_broken(sim: Any, cli: Any) -> None:
    """Verify right after the device plugin was deployed: its pods start in 3 s; verify waits."""
    from gpuctl.core.render import RenderOptions
    from tests.rendered import create_documents, rendered_documents

    cluster = sim(
        {
            "podStartSeconds": 3,
            "devicePlugin": "absent",
            "nodes": [{"name": "gpu-{i}", "count": 2, "gpus": 8}],
        }
    )
    daemonsets = [doc for doc in rendered_documents(RenderOptions()) if doc["kind"] == "DaemonSet"]
    create_documents(cluster.api_client(), daemonsets)
    code, data = verify_json(cli, cluster, "--expect-nodes", "gpu-0,gpu-1")
    assert code == 0, [c for n in data["nodes"] for c in n["checks"] if c["status"] == "fail"]
    assert {node["name"]: node["gpus"]["seen"] for node in data["nodes"]} == {"gpu-0": 8, "gpu-1": 8}
