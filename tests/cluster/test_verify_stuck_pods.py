"""A verification pod stuck in Pending/ContainerCreating ends at once when its events say why.

The sim's kubelet fails the sandbox of a pod whose RuntimeClass handler containerd lacks, with the
real kubelet's FailedCreatePodSandBox event, and leaves the pod in ContainerCreating; verify
watches the pods' Warning events and judges such a pod at once instead of at --timeout.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.cluster.test_verify_modes import check, leftover_pods, node, scenario, verify_json, wait_for_gpus
from tests.polling import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

GPU = {"name": "gpu-{i}", "count": 2, "gpus": 8}
# The plugin started while containerd had the nvidia runtime; containerd's config lost it since.
RUNTIME_LOST = {"name": "gpu-lost-0", "gpus": 8, "host": {"toolkit": "unconfigured"}}
BARE = {"name": "gpu-bare-0", "gpus": 8, "host": {"toolkit": "missing"}}
NO_RUNTIME = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: "
    'no runtime for "nvidia" is configured'
)


def create_runtime_class(cluster: Any) -> None:
    from kubernetes.client import NodeV1Api

    body = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}}
    NodeV1Api(cluster.api_client()).create_runtime_class({**body, "handler": "nvidia"})


def create_nvidia_pod(core: Any, node_name: str) -> None:
    pod = {
        "metadata": {"name": "smi", "labels": {"app": "smi"}},
        "spec": {
            "nodeName": node_name,
            "runtimeClassName": "nvidia",
            "restartPolicy": "Never",
            "containers": [
                {"name": "smi", "image": "nvcr.io/nvidia/cuda:12.4.1-base", "command": ["nvidia-smi"]}
            ],
        },
    }
    core.create_namespaced_pod("default", pod)


def test_pod_asking_for_a_missing_runtime_stays_creating_with_the_kubelets_event(sim: Any) -> None:
    from kubernetes.client import CoreV1Api

    cluster = sim(scenario(BARE))
    create_runtime_class(cluster)
    core = CoreV1Api(cluster.api_client())
    create_nvidia_pod(core, "gpu-bare-0")

    def sandbox_events() -> list[Any]:
        events = core.list_namespaced_event("default", field_selector="involvedObject.name=smi").items
        return [event for event in events if event.reason == "FailedCreatePodSandBox"]

    wait_until(lambda: bool(sandbox_events()), "the FailedCreatePodSandBox event")
    (event,) = sandbox_events()
    assert (event.type, event.message, event.source.component) == ("Warning", NO_RUNTIME, "kubelet")
    assert event.involved_object.field_path is None  # about the pod, not one of its containers
    status = core.read_namespaced_pod("smi", "default").status
    assert status.phase == "Pending"
    assert status.container_statuses[0].state.waiting.reason == "ContainerCreating"


def test_verify_fails_the_node_without_the_nvidia_runtime_at_once(sim: Any, cli: Any) -> None:
    cluster = sim(scenario(GPU, RUNTIME_LOST))
    create_runtime_class(cluster)
    wait_for_gpus(cluster, "gpu-lost-0", 8)  # the plugin still advertises: it started before
    started = time.monotonic()
    code, data = verify_json(cli, cluster, "--runtime-class", "nvidia", "--timeout", "120")
    wall = time.monotonic() - started
    assert wall < 30, f"verify waited {wall:.1f} s for a pod that can never start"
    assert code == 1
    lost = node(data, "gpu-lost-0")
    image = check(lost, "pod.image")
    assert image["status"] == "fail"
    assert image["diagnosis"] == "runtime.no-nvidia-runtime"
    assert "no runtime handler named nvidia" in image["message"]
    assert 'no runtime for "nvidia" is configured' in image["message"]
    assert "nvidia-ctk runtime configure" in image["hint"]
    assert check(lost, "pod.scheduled")["status"] == "pass"
    assert check(lost, "nvidia-smi.run")["status"] == "skip"
    for name in ("gpu-0", "gpu-1"):
        assert node(data, name)["ok"] is True, node(data, name)
    assert leftover_pods(cluster) == []


def test_follow_keeps_waiting_on_a_transient_failure_and_reports_its_events(sim: Any) -> None:
    from kubernetes.client import CoreV1Api

    from gpuctl.kube.pods import PodBatch

    cluster = sim(scenario(BARE))
    create_runtime_class(cluster)
    create_nvidia_pod(CoreV1Api(cluster.api_client()), "gpu-bare-0")
    consulted: list[tuple[tuple[str, str], ...]] = []

    def transient(_name: str, events: tuple[tuple[str, str], ...]) -> bool:
        consulted.append(events)
        return False  # as for pod.sandbox-failed: waiting might help

    with ThreadPoolExecutor(max_workers=2) as executor:
        batch = PodBatch(cluster.api_client(), "default", "app=smi", executor, 2)
        started = time.monotonic()
        outcomes = batch.follow({"smi"}, started + 2.0, lambda _outcome: None, transient)
    assert time.monotonic() - started >= 1.9
    outcome = outcomes["smi"]
    assert (outcome.state, outcome.phase, outcome.node_name) == ("timeout", "Pending", "gpu-bare-0")
    assert outcome.events == (("FailedCreatePodSandBox", NO_RUNTIME),)
    assert consulted
    # The watches' reader threads end with the follow, not at the watches' server-side timeout.
    assert not [thread.name for thread in threading.enumerate() if thread.name.startswith("gpuctl-follow")]
