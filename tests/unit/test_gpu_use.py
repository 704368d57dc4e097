"""What pods hold of a node's GPUs (gpuctl.kube.gpu_use), and the verification pods that ask only
for the rest (gpuctl.core.stacks.device_plugin.sharing.plan_for) in each sharing mode."""

from __future__ import annotations

from typing import Any

from gpuctl.core.stacks.device_plugin.sharing import plan_for
from gpuctl.core.verify.model import Held
from gpuctl.kube.gpu_use import NodeUse, pod_requests, use_by_node
from gpuctl.kube.nodes import NodeInfo, node_from_json


def _pod(
    name: str, node: str, phase: str, *containers: dict[str, str], init: dict[str, str] | None = None
) -> Any:
    spec: dict[str, Any] = {
        "nodeName": node,
        "containers": [{"name": f"c{i}", "resources": {"limits": c}} for i, c in enumerate(containers)],
    }
    if init:
        spec["initContainers"] = [{"name": "init", "resources": {"requests": init, "limits": init}}]
    return {"metadata": {"name": name, "namespace": "ml"}, "spec": spec, "status": {"phase": phase}}


def _node(allocatable: dict[str, str], labels: dict[str, str] | None = None) -> NodeInfo:
    return node_from_json(
        {
            "metadata": {"name": "gpu-0", "labels": labels or {}},
            "status": {"capacity": allocatable, "allocatable": allocatable},
        }
    )


def test_requests_sum_containers_and_take_the_largest_init_container() -> None:
    pod = _pod("a", "gpu-0", "Running", {"nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "1", "cpu": "4"})
    assert pod_requests(pod) == {"nvidia.com/gpu": 3}
    assert pod_requests(
        _pod("b", "gpu-0", "Pending", {"nvidia.com/gpu": "1"}, init={"nvidia.com/gpu": "4"})
    ) == {"nvidia.com/gpu": 4}
    mapped = _pod("c", "gpu-0", "Running", {"nvidia.com/gpu": "2"})
    mapped["status"]["extendedResourceClaimStatus"] = {
        "requestMappings": [{"resourceName": "nvidia.com/gpu"}]
    }
    assert pod_requests(mapped) == {}  # a DRA claim holds those devices (Kubernetes 1.37)


def test_only_bound_pods_that_have_not_terminated_hold_devices() -> None:
    pods = [
        _pod("train", "gpu-0", "Running", {"nvidia.com/gpu": "2"}),
        _pod("mig", "gpu-0", "Pending", {"nvidia.com/mig-1g.10gb": "3"}),
        _pod("done", "gpu-0", "Succeeded", {"nvidia.com/gpu": "4"}),
        _pod("unbound", "", "Pending", {"nvidia.com/gpu": "4"}),
        _pod("cpu", "gpu-1", "Running", {"cpu": "1"}),
    ]
    assert use_by_node(pods) == {
        "gpu-0": NodeUse({"nvidia.com/gpu": 2, "nvidia.com/mig-1g.10gb": 3}, ("ml/train", "ml/mig"))
    }


def test_exclusive_gpus_requested_less_those_held() -> None:
    node = _node({"nvidia.com/gpu": "8"})
    plan = plan_for(node, NodeUse({"nvidia.com/gpu": 3}, ("ml/train",)))
    assert (plan.requests, plan.held, plan.advertised) == ((("nvidia.com/gpu", 5),), 3, 5)
    assert not Held(plan.held, plan.advertised).busy
    full = plan_for(node, NodeUse({"nvidia.com/gpu": 8}))
    assert Held(full.held, full.advertised).busy
    assert plan_for(node).requests == (("nvidia.com/gpu", 8),)


def test_time_slicing_mps_and_mig_request_what_is_free() -> None:
    sliced = {"nvidia.com/gpu.sharing-strategy": "time-slicing", "nvidia.com/gpu.replicas": "4",
              "nvidia.com/gpu.count": "2"}  # fmt: skip
    plan = plan_for(_node({"nvidia.com/gpu": "8"}, sliced), NodeUse({"nvidia.com/gpu": 3}))
    assert (plan.requests, plan.held, plan.physical) == ((("nvidia.com/gpu", 5),), 3, 2)
    mps = {**sliced, "nvidia.com/gpu.sharing-strategy": "mps", "nvidia.com/mps.capable": "true"}
    one_left = plan_for(_node({"nvidia.com/gpu": "8"}, mps), NodeUse({"nvidia.com/gpu": 7}))
    assert (one_left.pods, one_left.requests) == (1, (("nvidia.com/gpu", 1),))
    none_left = plan_for(_node({"nvidia.com/gpu": "8"}, mps), NodeUse({"nvidia.com/gpu": 8}))
    assert (none_left.pods, none_left.advertised) == (0, 0)
    mixed = _node(
        {"nvidia.com/mig-1g.10gb": "7", "nvidia.com/mig-3g.40gb": "2"}, {"nvidia.com/mig.strategy": "mixed"}
    )
    plan = plan_for(mixed, NodeUse({"nvidia.com/mig-3g.40gb": 2, "nvidia.com/mig-1g.10gb": 1}))
    assert (plan.requests, plan.held) == ((("nvidia.com/mig-1g.10gb", 6),), 3)
