"""Cluster behaviour of the simulation: device plugin advertising per host state, scheduler,
kubelet (nvidia-smi output per failure mode, image pulls, deadlines), DaemonSets."""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import pytest
from kubernetes import client

from gpuctl import nvidia_smi
from gpuctl.sim.runtime.objects import device_plugin_daemonset
from tests.polling import wait_until

GPU = "nvidia.com/gpu"
# The simulation settles within milliseconds; waits here give up after 15 s.
wait_for = partial(wait_until, timeout=15.0)
CUDA = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"


def gpu_pod(
    name: str, gpus: int, node: str | None = None, command: list[str] | None = None, **spec: Any
) -> Any:
    resources = {"limits": {GPU: str(gpus)}} if gpus else {}
    container = {
        "name": "smi",
        "image": CUDA,
        "command": command or list(nvidia_smi.VERIFY_ARGS),
        "resources": resources,
    }
    pod_spec: dict[str, Any] = {"restartPolicy": "Never", "containers": [container], **spec}
    if node:
        pod_spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"metadata": {"name": name}, "spec": pod_spec}


def finished(core: client.CoreV1Api, name: str) -> Any:
    def done() -> Any:
        pod = core.read_namespaced_pod(name, "default")
        return pod if pod.status.phase in ("Succeeded", "Failed") else None

    return wait_for(done, f"pod {name} to finish")


def allocatable(core: client.CoreV1Api, node: str) -> str | None:
    return (core.read_node(node).status.allocatable or {}).get(GPU)


def events_for(core: client.CoreV1Api, name: str) -> list[Any]:
    selector = f"involvedObject.name={name},involvedObject.kind=Pod"
    return core.list_namespaced_event("default", field_selector=selector).items


NODES = [
    {"name": "healthy-0", "gpus": 8, "gpuProduct": "NVIDIA-H100-80GB-HBM3", "driverVersion": "550.90.07"},
    {"name": "mismatch-0", "gpus": 8, "host": {"driver": "mismatch"}},
    {"name": "nodriver-0", "gpus": 8, "host": {"driver": "missing"}},
    {"name": "notoolkit-0", "gpus": 8, "host": {"toolkit": "missing"}},
    {"name": "unhealthy-0", "gpus": 8, "unhealthyGpus": 2},
    {"name": "notready-0", "gpus": 8, "ready": False},
    {"name": "cpu-0"},
]


@pytest.fixture
def mixed(sim: Any) -> Any:
    return sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": NODES})


@pytest.fixture
def core(mixed: Any) -> client.CoreV1Api:
    return client.CoreV1Api(mixed.api_client())


def test_device_plugin_advertising_per_host_state(core: client.CoreV1Api) -> None:
    assert allocatable(core, "healthy-0") == "8"
    assert allocatable(core, "mismatch-0") == "8"  # started before the driver upgrade
    assert allocatable(core, "nodriver-0") is None
    assert allocatable(core, "notoolkit-0") is None
    assert allocatable(core, "unhealthy-0") == "6"
    assert core.read_node("unhealthy-0").status.capacity[GPU] == "8"
    assert allocatable(core, "notready-0") is None
    assert allocatable(core, "cpu-0") is None
    labels = core.read_node("healthy-0").metadata.labels
    assert labels["nvidia.com/gpu.present"] == "true"
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert labels["nvidia.com/gpu.count"] == "8"
    assert labels["feature.node.kubernetes.io/pci-10de.present"] == "true"
    assert "nvidia.com/gpu.present" not in core.read_node("notoolkit-0").metadata.labels


def test_device_plugin_daemonset_matches_nvidia_manifest(mixed: Any) -> None:
    apps = client.AppsV1Api(mixed.api_client())
    daemonset = apps.read_namespaced_daemon_set("nvidia-device-plugin-daemonset", "kube-system")
    assert daemonset.spec.selector.match_labels == {"name": "nvidia-device-plugin-ds"}
    template = daemonset.spec.template.spec
    assert template.containers[0].image == "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
    assert template.priority_class_name == "system-node-critical"
    assert any(
        t.key == GPU and t.operator == "Exists" and t.effect == "NoSchedule" for t in template.tolerations
    )
    # NotReady nodes keep the not-ready:NoSchedule taint, which DaemonSet pods do not tolerate
    assert daemonset.status.desired_number_scheduled == len(NODES) - 1
    assert daemonset.status.number_ready == len(NODES) - 1


def plugin_log(core: client.CoreV1Api, node: str) -> str:
    pod = core.list_namespaced_pod("kube-system", field_selector=f"spec.nodeName={node}").items[0]
    return str(core.read_namespaced_pod_log(pod.metadata.name, "kube-system"))


def test_device_plugin_logs(core: client.CoreV1Api) -> None:
    healthy = plugin_log(core, "healthy-0")
    assert "Starting GRPC server for 'nvidia.com/gpu'" in healthy
    assert "Registered device plugin for 'nvidia.com/gpu' with Kubelet" in healthy
    for node in ("notoolkit-0", "nodriver-0", "cpu-0"):
        broken = plugin_log(core, node)
        assert "could not load NVML library" in broken
        assert "Incompatible strategy detected auto" in broken
        assert "If this is a GPU node, did you configure the NVIDIA Container Toolkit?" in broken
        assert "No devices found. Waiting indefinitely." in broken
        assert "Registered device plugin" not in broken
    unhealthy = plugin_log(core, "unhealthy-0")
    assert unhealthy.count("marking device as unhealthy") == 2
    assert "'nvidia.com/gpu' device marked unhealthy: GPU-" in unhealthy


def test_nvidia_smi_prints_the_allocated_gpus(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", gpu_pod("smi", 8, "healthy-0"))
    pod = finished(core, "smi")
    assert pod.status.phase == "Succeeded"
    assert pod.status.container_statuses[0].state.terminated.reason == "Completed"
    rows = nvidia_smi.parse_query_csv(
        core.read_namespaced_pod_log("smi", "default"), nvidia_smi.VERIFY_QUERY_FIELDS
    )
    expected = nvidia_smi.fake_gpus("healthy-0", 8, "NVIDIA-H100-80GB-HBM3", 81559, "550.90.07")
    assert [row["uuid"] for row in rows] == [gpu.uuid for gpu in expected]
    assert {row["name"] for row in rows} == {"NVIDIA H100 80GB HBM3"}
    assert {row["driver_version"] for row in rows} == {"550.90.07"}
    reasons = [event.reason for event in events_for(core, "smi")]
    assert reasons[:1] == ["Scheduled"]
    assert {"Pulled", "Created", "Started"} <= set(reasons)


def test_pods_on_one_node_get_distinct_devices(core: client.CoreV1Api) -> None:
    for name in ("a", "b"):
        core.create_namespaced_pod("default", gpu_pod(name, 4, "healthy-0", ["nvidia-smi", "-L"]))
    listed = [
        nvidia_smi.parse_list(core.read_namespaced_pod_log(n, "default"))
        for n in ("a", "b")
        if finished(core, n)
    ]
    uuids = [gpu.uuid for gpus in listed for gpu in gpus]
    assert len(uuids) == 8
    assert len(set(uuids)) == 8


def test_driver_mismatch_fails_the_start_hook(core: client.CoreV1Api) -> None:
    """The NVIDIA runtime's prestart hook initialises NVML before the container starts."""
    core.create_namespaced_pod("default", gpu_pod("mm", 8, "mismatch-0"))
    pod = finished(core, "mm")
    assert pod.status.phase == "Failed"
    terminated = pod.status.container_statuses[0].state.terminated
    assert (terminated.reason, terminated.exit_code) == ("StartError", 128)
    assert terminated.message.endswith(
        "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown"
    )


def test_nvidia_smi_without_gpus_is_not_in_the_image(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", gpu_pod("nogpu", 0, "cpu-0"))
    pod = finished(core, "nogpu")
    terminated = pod.status.container_statuses[0].state.terminated
    assert (pod.status.phase, terminated.reason, terminated.exit_code) == ("Failed", "StartError", 128)
    assert 'exec: "nvidia-smi": executable file not found in $PATH' in terminated.message


def test_nvidia_smi_override(sim: Any) -> None:
    override = {"stdout": "GPU 0: fake\n", "exitCode": 0}
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [{"name": "g", "gpus": 2, "nvidiaSmi": override}],
        }
    )
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_pod("default", gpu_pod("o", 2, "g"))
    finished(core, "o")
    assert core.read_namespaced_pod_log("o", "default") == "GPU 0: fake\n"


def failed_scheduling(core: client.CoreV1Api, name: str) -> str:
    def message() -> str:
        events = [e for e in events_for(core, name) if e.reason == "FailedScheduling"]
        return str(events[0].message) if events else ""

    return str(wait_for(message, f"FailedScheduling for {name}"))


def test_failed_scheduling_message_shape(core: client.CoreV1Api) -> None:
    core.patch_node(
        "healthy-0", {"spec": {"taints": [{"key": GPU, "value": "present", "effect": "NoSchedule"}]}}
    )
    core.create_namespaced_pod("default", gpu_pod("big", 9))
    message = failed_scheduling(core, "big")
    assert message == (
        "0/7 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
        "1 node(s) had untolerated taint {nvidia.com/gpu: present}, 5 Insufficient nvidia.com/gpu. "
        "preemption: 0/7 nodes are available: 2 Preemption is not helpful for scheduling, "
        "5 No preemption victims found for incoming pod."
    )
    pod = core.read_namespaced_pod("big", "default")
    condition = pod.status.conditions[0]
    assert (pod.status.phase, condition.type, condition.status, condition.reason) == (
        "Pending",
        "PodScheduled",
        "False",
        "Unschedulable",
    )


def test_pending_pod_is_scheduled_when_gpus_free_up(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", gpu_pod("holder", 8, "healthy-0", ["sleep", "3600"]))
    wait_for(
        lambda: core.read_namespaced_pod("holder", "default").status.phase == "Running", "holder running"
    )
    core.create_namespaced_pod("default", gpu_pod("waiter", 8, "healthy-0"))
    assert "1 Insufficient nvidia.com/gpu" in failed_scheduling(core, "waiter")
    core.delete_namespaced_pod("holder", "default", grace_period_seconds=0)
    assert finished(core, "waiter").status.phase == "Succeeded"


def test_node_affinity_and_selector_mismatch(core: client.CoreV1Api) -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "kubernetes.io/hostname", "operator": "In", "values": ["nowhere"]}
                        ]
                    }
                ]
            }
        }
    }
    core.create_namespaced_pod("default", gpu_pod("lost", 1, affinity=affinity))
    assert "6 node(s) didn't match Pod's node affinity/selector" in failed_scheduling(core, "lost")


def test_tolerations_let_pods_onto_tainted_nodes(core: client.CoreV1Api) -> None:
    core.patch_node(
        "healthy-0", {"spec": {"taints": [{"key": GPU, "value": "present", "effect": "NoSchedule"}]}}
    )
    toleration = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    core.create_namespaced_pod("default", gpu_pod("tol", 8, "healthy-0", tolerations=toleration))
    assert finished(core, "tol").spec.node_name == "healthy-0"


def test_cordoned_node_is_unschedulable(core: client.CoreV1Api) -> None:
    core.patch_node("healthy-0", {"spec": {"unschedulable": True}})
    core.create_namespaced_pod("default", gpu_pod("c", 1, "healthy-0"))
    assert "1 node(s) were unschedulable" in failed_scheduling(core, "c")


def test_image_pull_failure(core: client.CoreV1Api) -> None:
    body = gpu_pod("pull", 1, "healthy-0")
    body["spec"]["containers"][0]["image"] = "registry.example.com/does-not-exist:1.0"
    core.create_namespaced_pod("default", body)

    def waiting_reason() -> str:
        statuses = core.read_namespaced_pod("pull", "default").status.container_statuses or []
        waiting = statuses[0].state.waiting if statuses else None
        return (
            str(waiting.reason) if waiting and waiting.reason in ("ErrImagePull", "ImagePullBackOff") else ""
        )

    assert wait_for(waiting_reason, "ErrImagePull") in ("ErrImagePull", "ImagePullBackOff")
    wait_for(lambda: waiting_reason() == "ImagePullBackOff", "ImagePullBackOff")
    messages = [e.message for e in events_for(core, "pull") if e.reason == "Failed"]
    assert any(
        m.startswith('Failed to pull image "registry.example.com/does-not-exist:1.0": ')
        and m.endswith("not found")
        for m in messages
    )
    assert core.read_namespaced_pod("pull", "default").status.phase == "Pending"


def test_active_deadline(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod(
        "default", gpu_pod("slow", 0, "cpu-0", ["sleep", "60"], activeDeadlineSeconds=1)
    )
    pod = finished(core, "slow")
    assert (pod.status.phase, pod.status.reason) == ("Failed", "DeadlineExceeded")


def test_not_ready_node(core: client.CoreV1Api) -> None:
    node = core.read_node("notready-0")
    ready = next(c for c in node.status.conditions if c.type == "Ready")
    assert (ready.status, ready.reason) == ("False", "KubeletNotReady")
    assert any(t.key == "node.kubernetes.io/not-ready" and t.effect == "NoSchedule" for t in node.spec.taints)
    core.create_namespaced_pod("default", gpu_pod("pinned", 0, command=["sleep", "1"], nodeName="notready-0"))
    time.sleep(0.3)  # long enough for podStartSeconds (0.05) on a Ready node
    assert core.read_namespaced_pod("pinned", "default").status.phase == "Pending"


def test_device_plugin_applied_later_makes_nodes_advertise(sim: Any) -> None:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "absent",
            "nodes": [{"name": "g", "gpus": 4}, {"name": "t", "gpus": 4, "host": {"toolkit": "missing"}}],
        }
    )
    api = cluster.api_client()
    core = client.CoreV1Api(api)
    assert allocatable(core, "g") is None
    manifest = device_plugin_daemonset()
    manifest["metadata"]["name"] = "my-plugin"
    client.AppsV1Api(api).create_namespaced_daemon_set("kube-system", manifest)
    wait_for(lambda: allocatable(core, "g") == "4", "g to advertise 4 GPUs")
    assert allocatable(core, "t") is None
    client.AppsV1Api(api).delete_namespaced_daemon_set("my-plugin", "kube-system")
    wait_for(lambda: allocatable(core, "g") == "0", "g to stop advertising (its resource stays, at 0)")
    wait_for(lambda: not core.list_namespaced_pod("kube-system").items, "plugin pods garbage-collected")


def test_daemonset_skips_untolerated_taints(sim: Any) -> None:
    taint = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]
    cluster = sim(
        {
            "devicePlugin": "installed",
            "nodes": [{"name": "g", "gpus": 1}, {"name": "h", "gpus": 1, "taints": taint}],
        }
    )
    core = client.CoreV1Api(cluster.api_client())
    nodes = {p.spec.node_name for p in core.list_namespaced_pod("kube-system").items}
    assert nodes == {"g"}
    assert allocatable(core, "h") is None


def test_daemonset_pod_under_a_later_noschedule_taint_stays_and_counts_as_misscheduled(sim: Any) -> None:
    cluster = sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "g", "gpus": 1}]})
    api = cluster.api_client()
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    wait_for(lambda: allocatable(core, "g") == "1", "g to advertise 1 GPU")
    taint = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    core.patch_node("g", {"spec": {"taints": [taint]}})

    def status() -> tuple[int, int, int]:
        (plugin,) = apps.list_namespaced_daemon_set("kube-system").items
        s = plugin.status
        return s.desired_number_scheduled, s.current_number_scheduled, s.number_misscheduled

    wait_for(lambda: status() == (0, 0, 1), "the plugin pod to count as misscheduled")
    assert [p.spec.node_name for p in core.list_namespaced_pod("kube-system").items] == ["g"]


def test_crash_loop_for_restart_always(core: client.CoreV1Api) -> None:
    body = gpu_pod("crash", 0, "cpu-0", ["false"], restartPolicy="Always")
    core.create_namespaced_pod("default", body)

    def backing_off() -> bool:
        statuses = core.read_namespaced_pod("crash", "default").status.container_statuses or []
        waiting = statuses[0].state.waiting if statuses else None
        return bool(waiting and waiting.reason == "CrashLoopBackOff" and statuses[0].restart_count == 1)

    wait_for(backing_off, "CrashLoopBackOff")


def test_gfd_labels_stay_after_the_device_plugin_goes(sim: Any) -> None:
    # Real GFD is a DaemonSet of its own: removing the device plugin leaves its labels (docs/scenario.md).
    cluster = sim({"podStartSeconds": 0.05, "devicePlugin": "installed", "nodes": [{"name": "g", "gpus": 2}]})
    api = cluster.api_client()
    core = client.CoreV1Api(api)
    wait_for(lambda: allocatable(core, "g") == "2", "g to advertise 2 GPUs")
    before = {k: v for k, v in core.read_node("g").metadata.labels.items() if k.startswith("nvidia.com/")}
    assert before["nvidia.com/gpu.present"] == "true"
    assert any(key.startswith("nvidia.com/cuda.driver-version.") for key in before)
    (plugin,) = client.AppsV1Api(api).list_namespaced_daemon_set("kube-system").items
    client.AppsV1Api(api).delete_namespaced_daemon_set(plugin.metadata.name, "kube-system")
    wait_for(lambda: allocatable(core, "g") == "0", "g to stop advertising")
    node = core.read_node("g")
    assert (node.status.capacity or {})[GPU] == "0"  # registered once: the kubelet reports it at 0
    after = {k: v for k, v in node.metadata.labels.items() if k.startswith("nvidia.com/")}
    assert after == before
