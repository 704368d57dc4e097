"""Containers that cannot be created or started (`nodes[].containerFailure`): the sim gives them the
kubelet's waiting reasons and containerd's StartError, and verify names the reason, cause and fix.

The messages are verbatim from public threads:
- `secrets "busybox-secret-47" not found`: https://github.com/kubernetes/kubernetes/issues/80466
- the CDI one: https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/736
- the start hook's: https://github.com/NVIDIA/nvidia-container-toolkit/issues/173
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from kubernetes import client

from tests.polling import wait_until

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SECRET_MISSING = 'secrets "busybox-secret-47" not found'
CDI_UNRESOLVABLE = (
    "failed to create containerd container: CDI device injection failed: unresolvable CDI devices "
    "k8s.gpu.nvidia.com/device=gpu-1"
)
HOOK_FAILED = (
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
    "failed: unable to start container process: error during container init: error running hook #0: error "
    "running hook: exit status 1, stdout: , stderr: nvidia-container-cli.real: initialization error: driver "
    "error: failed to process request: unknown"
)


def _node(name: str, reason: str, message: str) -> dict[str, Any]:
    return {"name": name, "gpus": 8, "containerFailure": {"reason": reason, "message": message}}


def _pod(name: str, policy: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "nodeName": "bad",
            "restartPolicy": policy,
            "containers": [{"name": "c", "image": "busybox", "command": ["true"]}],
        },
    }


def _status(core: Any, name: str) -> Any:
    statuses = core.read_namespaced_pod(name, "default").status.container_statuses or []
    return statuses[0] if statuses else None


def test_create_container_config_error_keeps_the_pod_pending_and_waiting(sim: Any) -> None:
    cluster = sim(
        {"podStartSeconds": 0.05, "nodes": [_node("bad", "CreateContainerConfigError", SECRET_MISSING)]}
    )
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_pod("default", _pod("p", "Never"))
    wait_until(lambda: _status(core, "p") is not None, "the pod's container status")
    time.sleep(0.3)
    pod = core.read_namespaced_pod("p", "default")
    waiting = pod.status.container_statuses[0].state.waiting
    assert (pod.status.phase, waiting.reason, waiting.message) == (
        "Pending",
        "CreateContainerConfigError",
        SECRET_MISSING,
    )
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=p").items
    assert ("Failed", f"Error: {SECRET_MISSING}") in [(event.reason, event.message) for event in events]


@pytest.mark.parametrize(
    ("policy", "phase"), [("Always", "Running"), ("Never", "Failed")], ids=["restarting", "never-restarted"]
)
def test_run_container_error_is_containerds_start_error(sim: Any, policy: str, phase: str) -> None:
    cluster = sim({"podStartSeconds": 0.05, "nodes": [_node("bad", "RunContainerError", HOOK_FAILED)]})
    core = client.CoreV1Api(cluster.api_client())
    core.create_namespaced_pod("default", _pod("p", policy))
    wait_until(lambda: core.read_namespaced_pod("p", "default").status.phase == phase, f"phase {phase}")
    status = _status(core, "p")
    terminated = status.last_state.terminated if policy == "Always" else status.state.terminated
    assert (terminated.reason, terminated.exit_code, terminated.message) == ("StartError", 128, HOOK_FAILED)
    if policy == "Always":
        assert (status.state.waiting.reason, status.state.waiting.message) == (
            "RunContainerError",
            HOOK_FAILED,
        )
        assert status.restart_count == 1


def test_the_device_plugin_still_runs_on_such_a_node(sim: Any) -> None:
    """DaemonSet pods are spared: the node keeps its GPUs, only the pods sent to it fail."""
    cluster = sim(
        {"devicePlugin": "installed", "nodes": [_node("bad", "CreateContainerError", CDI_UNRESOLVABLE)]}
    )
    assert cluster.allocatable_gpus() == {"bad": 8}


def test_verify_names_each_reason_with_cause_and_fix(sim: Any, cli: Any) -> None:
    cluster = sim(
        {
            "podStartSeconds": 0.05,
            "devicePlugin": "installed",
            "nodes": [
                {"name": "good", "gpus": 8},
                _node("config", "CreateContainerConfigError", SECRET_MISSING),
                _node("create", "CreateContainerError", CDI_UNRESOLVABLE),
                _node("run", "RunContainerError", HOOK_FAILED),
            ],
        }
    )
    result = cli(["verify", "--kubeconfig", str(cluster.kubeconfig), "-o", "json", "--timeout", "60"])
    assert result.exit_code == 1, result.output[-2000:]
    nodes = {node["name"]: node for node in json.loads(result.stdout)["nodes"]}
    assert nodes["good"]["ok"]

    def failed_check(name: str) -> dict[str, Any]:
        return next(check for check in nodes[name]["checks"] if check["status"] == "fail")

    config, create, run = failed_check("config"), failed_check("create"), failed_check("run")
    assert (config["id"], config["diagnosis"]) == ("pod.image", "container.config-object-missing")
    assert config["message"].startswith(f"CreateContainerConfigError: {SECRET_MISSING} — ")
    assert "get secrets" in config["hint"]
    assert (create["id"], create["diagnosis"]) == ("pod.image", "runtime.cdi-unresolvable")
    assert create["message"].startswith("CreateContainerError: failed to create containerd container")
    # the hook's own words name its driver service (the container toolkit's catalogue)
    assert (run["id"], run["diagnosis"]) == ("nvidia-smi.run", "container-toolkit.driver-rpc-failed")
    assert "(StartError)" in run["message"]
    for check in (config, create, run):
        assert check["hint"]
