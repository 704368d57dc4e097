"""Pod sandboxes: the container runtime handler a pod asks for through its RuntimeClass.

A real kubelet asks containerd for a sandbox with the RuntimeClass's handler before it pulls an
image. When containerd has no runtime of that name (the NVIDIA container toolkit is missing, or
containerd's config lost the nvidia runtime), the pod stays Pending with its containers in
ContainerCreating, and the kubelet retries on every pod sync, each failure counted on one
aggregated `FailedCreatePodSandBox` Warning event (`x12 over 2m` in `kubectl describe pod`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpuctl.sim.runtime.store import rfc3339
from gpuctl.sim.scenario import NodeSpec

if TYPE_CHECKING:
    from gpuctl.sim.runtime.state import ClusterState

Obj = dict[str, Any]

RUNTIME_CLASSES = "runtimeclasses.node.k8s.io"
SANDBOX_RETRY_SECONDS = 10.0
# The runtimes `nvidia-ctk runtime configure` (and the GPU Operator's toolkit) add to containerd.
NVIDIA_HANDLERS = frozenset({"nvidia", "nvidia-cdi", "nvidia-legacy"})
# The kubelet's wording around containerd's CRI error (pkg/cri/server/sandbox_run.go).
NO_RUNTIME = (
    "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: "
    'no runtime for "{handler}" is configured'
)


def runtime_handler(cluster: ClusterState, pod: Obj) -> str:
    """The handler of the pod's RuntimeClass; "" for the default runtime (or an unknown class)."""
    class_name = pod["spec"].get("runtimeClassName")
    if not class_name:
        return ""
    runtime_class = cluster.store.get(RUNTIME_CLASSES, "", class_name)
    return str(runtime_class.get("handler") or "") if runtime_class else ""


def node_has_handler(spec: NodeSpec, handler: str) -> bool:
    """Whether containerd on the node has a runtime named `handler`."""
    if handler in ("", "runc"):
        return True
    return handler in NVIDIA_HANDLERS and spec.toolkit == "configured"


def refused(cluster: ClusterState, pod: Obj, spec: NodeSpec, retry: Callable[[], None]) -> bool:
    """True when the node cannot create the pod's sandbox: record the event and retry later."""
    handler = runtime_handler(cluster, pod)
    if node_has_handler(spec, handler):
        return False
    record_sandbox_failure(cluster, pod, NO_RUNTIME.format(handler=handler))
    cluster.engine.at(SANDBOX_RETRY_SECONDS, retry)
    return True


def record_sandbox_failure(cluster: ClusterState, pod: Obj, message: str) -> None:
    """One FailedCreatePodSandBox Warning per pod and message, its count bumped on each retry."""
    reason = "FailedCreatePodSandBox"
    uid = pod["metadata"]["uid"]
    for event in cluster.store.items("events", pod["metadata"]["namespace"]):
        involved = event.get("involvedObject") or {}
        if involved.get("uid") == uid and event.get("reason") == reason and event.get("message") == message:
            count = int(event.get("count") or 1) + 1
            bumped = dict(event, metadata=dict(event["metadata"]), count=count, lastTimestamp=rfc3339())
            cluster.store.put("events", bumped)
            return
    cluster.record_event(pod, reason, message, warning=True, host=pod["spec"]["nodeName"])
